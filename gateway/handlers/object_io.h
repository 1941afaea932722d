// What the object and multipart handlers share (private to gateway/): how an object is
// described by request headers and back into response headers, and how a request body
// becomes verified object bytes.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gateway/handlers/context.h"
#include "metadata/records.h"
#include "metadata/stored_headers.h"
#include "storage/checksum.h"
#include "storage/object_store.h"

namespace strata::gateway {

inline constexpr std::size_t kMaxKeyBytes = 1024;
inline constexpr std::uint64_t kMaxSinglePut = 5ull << 30;
// Network and disk move in blocks of this size: the only per-request data buffer.
inline constexpr std::size_t kIoBlock = 256 * 1024;
inline constexpr std::array<storage::ChecksumAlgorithm, 5> kAllChecksums = {
    storage::ChecksumAlgorithm::kCrc32, storage::ChecksumAlgorithm::kCrc32c,
    storage::ChecksumAlgorithm::kCrc64Nvme, storage::ChecksumAlgorithm::kSha1,
    storage::ChecksumAlgorithm::kSha256};

std::string Lower(std::string_view s);

using metadata::kMetaPrefix;
using metadata::kStoredHeaders;  // returned on GET and HEAD

// kKeyTooLong for keys over 1024 bytes.
Result<void> CheckKeyLength(const RequestContext& ctx);

// S3's bound on an object's x-amz-meta-* names and values together.
inline constexpr std::size_t kMaxUserMetadataBytes = 2048;
// Whether x-amz-storage-class may name `storage_class`: a class of the configuration, or
// HOT, WARM, COLD.
bool KnownStorageClass(const RequestContext& ctx, std::string_view storage_class);

// Fills content type, stored standard headers, x-amz-meta-* (kMetadataTooLarge past
// 2 KiB), storage class (kInvalidStorageClass) and tags (x-amz-tagging: rules in
// gateway/tags.h) from the request headers.
Result<void> DescribeFromHeaders(const RequestContext& ctx, metadata::ObjectRecord& record);
// The write-back state of a version in a bucket bound to an upstream: "pending" until the
// upstream has it, then "done". Not sent for local-only buckets.
inline constexpr std::string_view kWritebackStateHeader = "x-strata-writeback";

// ETag, Last-Modified, content type, stored headers, metadata, storage class,
// x-amz-tagging-count (when tagged), x-strata-writeback (bound buckets), and the response-*
// overrides. Checksums only with
// x-amz-checksum-mode: ENABLED and `whole_object` (a range's bytes are not what they
// describe).
void DescribeToHeaders(const RequestContext& ctx, const metadata::ObjectRecord& record,
                       bool whole_object, ResponseHeader& header);

// The version the request addresses: ?versionId's (kNoSuchVersion) or the current one
// (kNoSuchKey). May be a delete marker. Read inline when the index has the rows in
// memory, else on the blocking pool (metadata/read_inline.h).
boost::asio::awaitable<Result<metadata::ObjectRecord>> AddressedVersion(RequestContext& ctx);

// S3's answer to a read of a version's tags or ACL when the addressed version is a delete
// marker: 405 MethodNotAllowed with x-amz-delete-marker and the marker's version id.
HandlerResult SendMarkerNotAllowed(RequestContext& ctx, const metadata::ObjectRecord& marker);

// For reads of the addressed version (GET, HEAD, GetObjectAttributes): answers a delete
// marker as S3 does (404 with x-amz-delete-marker; 405 when asked for by versionId) and
// unmet If-* conditions (412, or 304). Returns what the handler returns when it answered,
// nullopt when the read goes on.
boost::asio::awaitable<std::optional<Result<void>>> AnswerUnreadable(
    RequestContext& ctx, const metadata::ObjectRecord& record);

// S3's conditional writes (PutObject, CompleteMultipartUpload): If-None-Match: * (create
// only; any other value kNotImplemented) and If-Match: "<etag>".
Result<metadata::WriteCondition> WriteConditionFromHeaders(const RequestContext& ctx);

// x-amz-version-id, for buckets whose versioning was ever enabled (S3 leaves it out in
// the others).
void SetVersionHeader(const RequestContext& ctx, const VersionId& version_id,
                      ResponseHeader& header);

// Content-MD5 in base64, verified to be 16 bytes (kInvalidDigest); nullopt when absent.
Result<std::optional<std::string>> ExpectedMd5(const RequestContext& ctx);

// Checks a small body read whole (an XML document) against Content-MD5 and any
// x-amz-checksum-* header that came with it (kInvalidDigest, kBadDigest).
Result<void> VerifyBodyDigests(const RequestContext& ctx, std::string_view body);

struct ChecksumExpectation {
  storage::ChecksumAlgorithm algorithm;
  std::string value;  // from the header; empty when it comes in the trailer
  bool in_trailer = false;
};

// What a body that becomes object bytes must be, from the request's headers.
struct BodyExpectations {
  std::int64_t size = -1;  // decoded length when known up front
  std::vector<ChecksumExpectation> checksums;
  std::optional<std::string> md5;  // Content-MD5, base64
  // The algorithms to compute while receiving: the declared ones.
  std::vector<storage::ChecksumAlgorithm> Algorithms() const;
};
// kMissingContentLength, kEntityTooLarge (over max_size), kInvalidDigest, and S3's
// checksum-header rules (one checksum, x-amz-trailer, x-amz-sdk-checksum-algorithm).
Result<BodyExpectations> ExpectBody(const RequestContext& ctx, std::uint64_t max_size);

// Sends `header` and bytes [first, first + length) of `reader` as the body. The first block
// is read before the header goes out and goes with it in one write, so a small object is
// one segment, and a failed first read is still an error response. Two kIoBlock buffers
// while the core's send budget allows (gateway/send_budget.h): one goes out on the socket
// while the next is read from disk, so network and disk overlap; past the budget (many
// downloads at once) one 64 KiB block. An error after the header closes the connection.
boost::asio::awaitable<Result<void>> SendObject(RequestContext& ctx, ResponseHeader header,
                                                storage::ObjectReader& reader, std::uint64_t first,
                                                std::uint64_t length);

// Streams the body through the payload decoder into `write` in kIoBlock pieces, then
// checks its length (kIncompleteBody), Content-MD5 and checksums from headers or
// trailers (kBadDigest). Returns response headers echoing the verified checksums.
boost::asio::awaitable<Result<ResponseHeader>> ReceiveBody(RequestContext& ctx,
                                                           BodyExpectations expect,
                                                           storage::PendingWrite& write,
                                                           std::uint64_t max_size);

}  // namespace strata::gateway
