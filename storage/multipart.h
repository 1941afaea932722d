// The rules of CompleteMultipartUpload, as pure functions: which parts a completion may
// name, and the object (size, ETag, checksums, extents) the named parts make. Storage
// builds it from a read of the parts and hands the index a metadata::UploadCompletion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "metadata/index.h"
#include "metadata/records.h"
#include "storage/checksum.h"

namespace strata::storage {

inline constexpr std::uint64_t kMinPartSize = 5ull << 20;  // all parts but the last
inline constexpr std::uint64_t kMaxPartSize = 5ull << 30;
inline constexpr std::uint32_t kMaxPartNumber = 10000;

// One <Part> of a CompleteMultipartUpload request.
struct CompletedPart {
  std::uint32_t number = 0;
  std::string etag;  // without quotes
  // Checksum<ALG> elements: algorithm name ("CRC32", ...) -> base64.
  std::vector<std::pair<std::string, std::string>> checksums;
};

struct CompletionRequest {
  std::vector<CompletedPart> parts;
  // x-amz-checksum-<alg> sent with the completion: the whole object's checksum (for
  // FULL_OBJECT uploads) or the composite value, checked against what the parts make.
  std::optional<std::pair<ChecksumAlgorithm, std::string>> object_checksum;
  std::optional<std::uint64_t> object_size;  // x-amz-mp-object-size
  // If-None-Match: * / If-Match on the completion, checked against the key's current
  // version under its lock (kPreconditionFailed; kNoSuchKey for If-Match on no object).
  metadata::WriteCondition condition = {};
};

// The checksum type an upload uses for its algorithm: the one asked for, or S3's default
// (FULL_OBJECT for CRC64NVME, COMPOSITE otherwise). kInvalidRequest for combinations S3
// refuses (a type without an algorithm, FULL_OBJECT with a SHA, COMPOSITE with
// CRC64NVME); "" when the upload has no algorithm.
Result<std::string> ResolveChecksumType(const std::string& algorithm, const std::string& type);

// The object the completion makes, on `tier`: checks order (kInvalidPartOrder), that
// every named part exists with that ETag and checksums (kInvalidPart), part sizes
// (kEntityTooSmall), the whole-object checksum and size when sent (kBadDigest,
// kInvalidRequest). The ETag is the MD5 of the parts' binary MD5s, "-N"; CRC64NVME and
// FULL_OBJECT CRCs are combined from the parts' CRCs without reading any data.
Result<metadata::ObjectRecord> BuildUploadedObject(const metadata::UploadRecord& upload,
                                                   const std::vector<metadata::PartRecord>& stored,
                                                   const CompletionRequest& request,
                                                   std::int64_t now_ms);

// The stored parts the completion names (those found; BuildUploadedObject refuses the
// rest), as the index checks them at commit.
std::vector<metadata::CompletionPart> PartsUsed(const std::vector<metadata::PartRecord>& stored,
                                                const CompletionRequest& request);

// Whether `object` is what `request` completing `upload_id` made: a retry of a completion
// whose answer was lost (S3 answers it with the same result). The upload, the part
// numbers and their ETags (through the multipart ETag) and any part checksums named must
// all match; the request's conditions are not looked at (they held when it succeeded).
bool IsSameCompletion(const metadata::ObjectRecord& object, const UploadId& upload_id,
                      const CompletionRequest& request);

// The ETag of a multipart object from its parts' hex MD5s: hex MD5 of their binary
// concatenation, "-<count>". nullopt when one of them is not 32 hex digits.
std::optional<std::string> MultipartEtag(const std::vector<std::string>& part_etags);

}  // namespace strata::storage
