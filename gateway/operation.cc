#include "gateway/operation.h"

namespace strata::gateway {
namespace {

using boost::beast::http::verb;

S3Operation Tagging(verb method, bool bucket_level) {
  switch (method) {
    case verb::get:
      return bucket_level ? S3Operation::kGetBucketTagging : S3Operation::kGetObjectTagging;
    case verb::put:
      return bucket_level ? S3Operation::kPutBucketTagging : S3Operation::kPutObjectTagging;
    case verb::delete_:
      return bucket_level ? S3Operation::kDeleteBucketTagging : S3Operation::kDeleteObjectTagging;
    default:
      return MethodOperation(method);
  }
}

S3Operation Lifecycle(verb method, bool bucket_level) {
  if (!bucket_level) {
    return MethodOperation(method);
  }
  switch (method) {
    case verb::get:
      return S3Operation::kGetBucketLifecycleConfiguration;
    case verb::put:
      return S3Operation::kPutBucketLifecycleConfiguration;
    case verb::delete_:
      return S3Operation::kDeleteBucketLifecycleConfiguration;
    default:
      return MethodOperation(method);
  }
}

S3Operation BucketOperation(const S3Target& t, verb method) {
  switch (method) {
    case verb::put:
      return t.HasParam("versioning") ? S3Operation::kPutBucketVersioning
                                      : S3Operation::kCreateBucket;
    case verb::head:
      return S3Operation::kHeadBucket;
    case verb::delete_:
      return S3Operation::kDeleteBucket;
    case verb::get:
      if (t.HasParam("location")) {
        return S3Operation::kGetBucketLocation;
      }
      if (t.HasParam("uploads")) {
        return S3Operation::kListMultipartUploads;
      }
      if (t.HasParam("versioning")) {
        return S3Operation::kGetBucketVersioning;
      }
      if (t.HasParam("versions")) {
        return S3Operation::kListObjectVersions;
      }
      if (t.Param("list-type") == "2") {
        return S3Operation::kListObjectsV2;
      }
      return S3Operation::kListObjects;
    default:
      return MethodOperation(method);
  }
}

S3Operation ObjectOperation(const S3Target& t, verb method, bool copy_source) {
  const bool in_upload = t.HasParam("uploadId");
  switch (method) {
    case verb::put:
      if (in_upload || t.HasParam("partNumber")) {
        return copy_source ? S3Operation::kUploadPartCopy : S3Operation::kUploadPart;
      }
      return copy_source ? S3Operation::kCopyObject : S3Operation::kPutObject;
    case verb::get:
      return in_upload ? S3Operation::kListParts : S3Operation::kGetObject;
    case verb::head:
      return S3Operation::kHeadObject;
    case verb::delete_:
      return in_upload ? S3Operation::kAbortMultipartUpload : S3Operation::kDeleteObject;
    case verb::post:
      if (t.HasParam("uploads")) {
        return S3Operation::kCreateMultipartUpload;
      }
      if (in_upload) {
        return S3Operation::kCompleteMultipartUpload;
      }
      return MethodOperation(method);
    default:
      return MethodOperation(method);
  }
}

}  // namespace

std::string_view OperationName(S3Operation op) {
  switch (op) {
    case S3Operation::kMethodGet:
      return "GET";
    case S3Operation::kMethodPut:
      return "PUT";
    case S3Operation::kMethodHead:
      return "HEAD";
    case S3Operation::kMethodDelete:
      return "DELETE";
    case S3Operation::kMethodPost:
      return "POST";
    case S3Operation::kMethodOther:
      return "OTHER";
    case S3Operation::kMalformed:
      return "Malformed";
    case S3Operation::kAdmin:
      return "Admin";
    case S3Operation::kGetMetrics:
      return "GetMetrics";
    case S3Operation::kListBuckets:
      return "ListBuckets";
    case S3Operation::kCreateBucket:
      return "CreateBucket";
    case S3Operation::kHeadBucket:
      return "HeadBucket";
    case S3Operation::kDeleteBucket:
      return "DeleteBucket";
    case S3Operation::kGetBucketLocation:
      return "GetBucketLocation";
    case S3Operation::kListObjects:
      return "ListObjects";
    case S3Operation::kListObjectsV2:
      return "ListObjectsV2";
    case S3Operation::kListObjectVersions:
      return "ListObjectVersions";
    case S3Operation::kListMultipartUploads:
      return "ListMultipartUploads";
    case S3Operation::kGetBucketVersioning:
      return "GetBucketVersioning";
    case S3Operation::kPutBucketVersioning:
      return "PutBucketVersioning";
    case S3Operation::kGetBucketTagging:
      return "GetBucketTagging";
    case S3Operation::kPutBucketTagging:
      return "PutBucketTagging";
    case S3Operation::kDeleteBucketTagging:
      return "DeleteBucketTagging";
    case S3Operation::kGetBucketLifecycleConfiguration:
      return "GetBucketLifecycleConfiguration";
    case S3Operation::kPutBucketLifecycleConfiguration:
      return "PutBucketLifecycleConfiguration";
    case S3Operation::kDeleteBucketLifecycleConfiguration:
      return "DeleteBucketLifecycleConfiguration";
    case S3Operation::kDeleteObjects:
      return "DeleteObjects";
    case S3Operation::kPutObject:
      return "PutObject";
    case S3Operation::kCopyObject:
      return "CopyObject";
    case S3Operation::kGetObject:
      return "GetObject";
    case S3Operation::kHeadObject:
      return "HeadObject";
    case S3Operation::kDeleteObject:
      return "DeleteObject";
    case S3Operation::kRestoreObject:
      return "RestoreObject";
    case S3Operation::kGetObjectAttributes:
      return "GetObjectAttributes";
    case S3Operation::kGetObjectTagging:
      return "GetObjectTagging";
    case S3Operation::kPutObjectTagging:
      return "PutObjectTagging";
    case S3Operation::kDeleteObjectTagging:
      return "DeleteObjectTagging";
    case S3Operation::kCreateMultipartUpload:
      return "CreateMultipartUpload";
    case S3Operation::kUploadPart:
      return "UploadPart";
    case S3Operation::kUploadPartCopy:
      return "UploadPartCopy";
    case S3Operation::kCompleteMultipartUpload:
      return "CompleteMultipartUpload";
    case S3Operation::kAbortMultipartUpload:
      return "AbortMultipartUpload";
    case S3Operation::kListParts:
      return "ListParts";
  }
  return "OTHER";
}

S3Operation MethodOperation(verb method) {
  switch (method) {
    case verb::get:
      return S3Operation::kMethodGet;
    case verb::put:
      return S3Operation::kMethodPut;
    case verb::head:
      return S3Operation::kMethodHead;
    case verb::delete_:
      return S3Operation::kMethodDelete;
    case verb::post:
      return S3Operation::kMethodPost;
    default:
      return S3Operation::kMethodOther;
  }
}

bool HasUnsupportedSubresource(const S3Target& target) {
  // S3 sub-resources strata does not implement yet.
  static constexpr std::string_view kNames[] = {"accelerate",        "acl",
                                                "analytics",         "cors",
                                                "encryption",        "intelligent-tiering",
                                                "inventory",         "legal-hold",
                                                "logging",           "metrics",
                                                "notification",      "object-lock",
                                                "ownershipControls", "policy",
                                                "policyStatus",      "publicAccessBlock",
                                                "replication",       "requestPayment",
                                                "retention",         "select",
                                                "torrent",           "website",
                                                "renameObject",      "session"};
  for (auto name : kNames) {
    if (target.HasParam(name)) {
      return true;
    }
  }
  return false;
}

S3Operation ClassifyOperation(const S3Target& target, verb method, bool copy_source) {
  if (target.raw_path.starts_with(kAdminPrefix) && !target.virtual_hosted) {
    return S3Operation::kAdmin;
  }
  if (target.bucket.empty()) {
    if (method == verb::get && !HasUnsupportedSubresource(target) && !target.HasParam("tagging")) {
      return S3Operation::kListBuckets;
    }
    return MethodOperation(method);
  }
  const bool bucket_level = target.key.empty();
  if (bucket_level && method == verb::post && target.HasParam("delete")) {
    return S3Operation::kDeleteObjects;
  }
  if (target.HasParam("tagging")) {
    return Tagging(method, bucket_level);
  }
  if (target.HasParam("lifecycle")) {
    return Lifecycle(method, bucket_level);
  }
  if (HasUnsupportedSubresource(target)) {
    return MethodOperation(method);
  }
  if (!bucket_level && target.HasParam("restore")) {
    return method == verb::post ? S3Operation::kRestoreObject : MethodOperation(method);
  }
  if (!bucket_level && method == verb::get && target.HasParam("attributes")) {
    return S3Operation::kGetObjectAttributes;
  }
  if (bucket_level) {
    return BucketOperation(target, method);
  }
  return ObjectOperation(target, method, copy_source);
}

}  // namespace strata::gateway
