// S3Operation: the name of the operation a request asks for (GetObject, UploadPart, ...),
// as S3's API reference spells it, for metrics labels. Pure logic, thread-safe.
//
// The classification mirrors the routing in dispatch.cc; a request that names no S3
// operation strata knows of (an unsupported sub-resource, an odd method) is named by its
// HTTP method instead, so every request gets a label from a small fixed set.
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
  kDeleteObjects,
  kPutObject,
  kCopyObject,
  kGetObject,
  kHeadObject,
  kDeleteObject,
  kGetObjectAttributes,
  kRestoreObject,
  kGetObjectTagging,
  kPutObjectTagging,
  kDeleteObjectTagging,
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
// kMalformed is "Malformed".
std::string_view OperationName(S3Operation op);

// The method fallback for `method`.
S3Operation MethodOperation(boost::beast::http::verb method);

// The path prefix of strata's own admin API (path-style only).
inline constexpr std::string_view kAdminPrefix = "/_strata/admin/";

// Whether `target` names an S3 sub-resource strata does not implement (?acl, ?policy,
// ?lifecycle, ...): dispatch answers 501 rather than fall through to the plain object or
// bucket operation its method suggests, and metrics name it by its method.
bool HasUnsupportedSubresource(const S3Target& target);

// The operation `method` on `target` asks for; `copy_source` is whether the request
// carries x-amz-copy-source.
S3Operation ClassifyOperation(const S3Target& target, boost::beast::http::verb method,
                              bool copy_source);

}  // namespace strata::gateway
