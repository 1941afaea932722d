// The upstream's answers, read: S3's XML response bodies and its error answers mapped to
// strata's Error (private to storage/upstream). Pure functions; thread-safe. A body that
// is not the XML S3 documents is kCorruption ("the upstream answered nonsense"), never a
// crash: the upstream is outside input.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "storage/upstream/s3_client.h"

namespace strata::storage::upstream {

// `<Error><Code>..</Code><Message>..</Message></Error>`: Code and Message, empty strings
// when absent or when the body is not that XML.
std::pair<std::string, std::string> ParseErrorBody(std::string_view xml);

// Maps an upstream's error answer to strata's Error. `retryable` is set for the answers
// a retry may cure: 500, 502, 503, 504, SlowDown, RequestTimeout, InternalError.
Error UpstreamError(unsigned status, const std::string& code, const std::string& message);

Result<std::vector<BucketInfo>> ParseListBuckets(std::string_view xml);
Result<ListPage> ParseListObjectsV2(std::string_view xml);
// InitiateMultipartUploadResult's UploadId.
Result<std::string> ParseUploadId(std::string_view xml);
// CompleteMultipartUploadResult's ETag. S3 may answer 200 with an `<Error>` body to a
// completion: that is returned as the error it names.
Result<std::string> ParseCompleteResult(std::string_view xml);

// VersioningConfiguration's Status: "" (never enabled), "Enabled" or "Suspended".
Result<std::string> ParseVersioningStatus(std::string_view xml);
// The body of a PutBucketVersioning request setting `status`.
std::string VersioningBody(const std::string& status);

// The body of a CompleteMultipartUpload request naming `etags` as parts 1..N.
std::string CompleteMultipartBody(const std::vector<std::string>& etags);

}  // namespace strata::storage::upstream
