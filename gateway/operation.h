// S3Operation: the operation a request asks for (GetObject, UploadPart, ...), as S3's API
// reference spells it. Pure logic, thread-safe.
//
// Classify is the one routing decision: Dispatch routes by it (through the operation
// table, operation_table.h) and metrics label by it, so the two cannot disagree. A request
// that names no S3 operation strata implements (an unsupported sub-resource, an odd
// method) is named by its HTTP method instead, with the refusal Dispatch answers, so every
// request gets a label from a small fixed set.
#pragma once

#include <boost/beast/http/message.hpp>  // http::verb; verb.hpp alone misses <ostream>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/s3_target.h"

namespace strata::gateway {

enum class S3Operation : std::uint8_t {
  // Named by the HTTP method: no S3 operation applies (or the target did not parse).
  kMethodGet,
  kMethodPut,
  kMethodHead,
  kMethodDelete,
  kMethodPost,
  kMethodOther,
  // A request header that did not parse: no method is known.
  kMalformed,
  // strata's own endpoints.
  kAdmin,
  kGetMetrics,
  // S3.
  kListBuckets,
  kCreateBucket,
  kHeadBucket,
  kDeleteBucket,
  kGetBucketLocation,
  kListObjects,
  kListObjectsV2,
  kListObjectVersions,
  kListMultipartUploads,
  kGetBucketVersioning,
  kPutBucketVersioning,
  kGetBucketTagging,
  kPutBucketTagging,
  kDeleteBucketTagging,
  kGetBucketLifecycleConfiguration,
  kPutBucketLifecycleConfiguration,
  kDeleteBucketLifecycleConfiguration,
  kGetBucketPolicy,
  kPutBucketPolicy,
  kDeleteBucketPolicy,
  kGetBucketPolicyStatus,
  kGetBucketOwnershipControls,
  kPutBucketOwnershipControls,
  kDeleteBucketOwnershipControls,
  kGetPublicAccessBlock,
  kPutPublicAccessBlock,
  kDeletePublicAccessBlock,
  kGetBucketCors,
  kPutBucketCors,
  kDeleteBucketCors,
  kOptionsObject,  // a browser's CORS preflight
  kGetBucketAcl,
  kPutBucketAcl,
  kGetObjectLockConfiguration,
  kPutObjectLockConfiguration,
  kDeleteObjects,
  kPutObject,
  kPostObject,  // a browser's form upload: POST on the bucket, multipart/form-data
  kCopyObject,
  kGetObject,
  kHeadObject,
  kDeleteObject,
  kGetObjectAttributes,
  kRestoreObject,
  kGetObjectTagging,
  kPutObjectTagging,
  kDeleteObjectTagging,
  kGetObjectAcl,
  kPutObjectAcl,
  kGetObjectRetention,
  kPutObjectRetention,
  kGetObjectLegalHold,
  kPutObjectLegalHold,
  kCreateMultipartUpload,
  kUploadPart,
  kUploadPartCopy,
  kCompleteMultipartUpload,
  kAbortMultipartUpload,
  kListParts,
};

inline constexpr std::size_t kS3OperationCount =
    static_cast<std::size_t>(S3Operation::kListParts) + 1;

// "GetObject", "ListObjectsV2", ...; the method fallbacks are "GET", "PUT", ..., "OTHER";
// kMalformed is "Malformed". From the operation table (operation_table.cc).
std::string_view OperationName(S3Operation op);

// The method fallback for `method`.
S3Operation MethodOperation(boost::beast::http::verb method);

// The path prefix of strata's own admin API (path-style only).
inline constexpr std::string_view kAdminPrefix = "/_strata/admin/";

// Whether `target` names an S3 sub-resource strata does not implement (?logging,
// ?website, ...): dispatch answers 501 rather than fall through to the plain object or
// bucket operation its method suggests, and metrics name it by its method.
bool HasUnsupportedSubresource(const S3Target& target);

// What Dispatch answers for a method fallback instead of running a handler.
enum class Refusal : std::uint8_t {
  kNone,              // an operation with a handler
  kNotImplemented,    // 501: an unsupported sub-resource, or one this target cannot have
  kMethodNotAllowed,  // 405: a known resource, a method it does not take
};

struct Classification {
  S3Operation op = S3Operation::kMethodOther;
  // kNone exactly when `op` has a handler in the operation table.
  Refusal refusal = Refusal::kNone;
  // Whether Dispatch looks the addressed bucket up first (adopting an upstream bucket,
  // checking that the caller may use it), before the handler or the refusal. Every request
  // in a bucket does but a PUT on the bucket itself that configures no sub-resource of an
  // existing one (CreateBucket, or its refusal): that bucket need not exist yet.
  bool bucket_first = false;
};

// The operation `method` on `target` asks for; `copy_source` is whether the request
// carries x-amz-copy-source.
Classification Classify(const S3Target& target, boost::beast::http::verb method, bool copy_source);

// Classify(...).op: the name metrics count the request under.
S3Operation ClassifyOperation(const S3Target& target, boost::beast::http::verb method,
                              bool copy_source);

}  // namespace strata::gateway
