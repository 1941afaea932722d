#include "gateway/operation.h"

namespace strata::gateway {
namespace {

using boost::beast::http::verb;

constexpr Classification Run(S3Operation op) { return {op, Refusal::kNone, false}; }

Classification Refuse(verb method, Refusal refusal) {
  return {MethodOperation(method), refusal, false};
}

// ?tagging on a bucket or an object.
Classification Tagging(verb method, bool bucket_level) {
  switch (method) {
    case verb::get:
      return Run(bucket_level ? S3Operation::kGetBucketTagging : S3Operation::kGetObjectTagging);
    case verb::put:
      return Run(bucket_level ? S3Operation::kPutBucketTagging : S3Operation::kPutObjectTagging);
    case verb::delete_:
      return Run(bucket_level ? S3Operation::kDeleteBucketTagging
                              : S3Operation::kDeleteObjectTagging);
    default:
      return Refuse(method, Refusal::kMethodNotAllowed);
  }
}

// ?policy and ?policyStatus: a bucket's only.
Classification Policy(const S3Target& t, verb method, bool bucket_level) {
  if (!bucket_level) {
    return Refuse(method, Refusal::kNotImplemented);
  }
  if (t.HasParam("policyStatus")) {
    return method == verb::get ? Run(S3Operation::kGetBucketPolicyStatus)
                               : Refuse(method, Refusal::kMethodNotAllowed);
  }
  switch (method) {
    case verb::get:
      return Run(S3Operation::kGetBucketPolicy);
    case verb::put:
      return Run(S3Operation::kPutBucketPolicy);
    case verb::delete_:
      return Run(S3Operation::kDeleteBucketPolicy);
    default:
      return Refuse(method, Refusal::kMethodNotAllowed);
  }
}

// A setting read with GET and replaced with PUT, which no other method touches.
Classification GetOrPut(verb method, S3Operation get, S3Operation put) {
  switch (method) {
    case verb::get:
      return Run(get);
    case verb::put:
      return Run(put);
    default:
      return Refuse(method, Refusal::kMethodNotAllowed);
  }
}

// A bucket-level setting read with GET, replaced with PUT and removed with DELETE
// (?lifecycle, ?ownershipControls, ?cors, ?publicAccessBlock, ?object-lock, which has no
// DELETE: `remove` kMethodDelete): a bucket's only.
Classification BucketSetting(verb method, bool bucket_level, S3Operation get, S3Operation put,
                             S3Operation remove) {
  if (!bucket_level) {
    return Refuse(method, Refusal::kNotImplemented);
  }
  // A setting that cannot be removed (?object-lock) names the DELETE fallback.
  if (method == verb::delete_ && remove != S3Operation::kMethodDelete) {
    return Run(remove);
  }
  return GetOrPut(method, get, put);
}

// ?acl, on a bucket or an object.
Classification Acl(verb method, bool bucket_level) {
  return bucket_level ? GetOrPut(method, S3Operation::kGetBucketAcl, S3Operation::kPutBucketAcl)
                      : GetOrPut(method, S3Operation::kGetObjectAcl, S3Operation::kPutObjectAcl);
}

// A setting of one version (?retention, ?legal-hold): an object's only.
Classification ObjectSetting(verb method, bool bucket_level, S3Operation get, S3Operation put) {
  return bucket_level ? Refuse(method, Refusal::kNotImplemented) : GetOrPut(method, get, put);
}

Classification BucketOperation(const S3Target& t, verb method) {
  switch (method) {
    case verb::put:
      return Run(t.HasParam("versioning") ? S3Operation::kPutBucketVersioning
                                          : S3Operation::kCreateBucket);
    case verb::head:
      return Run(S3Operation::kHeadBucket);
    case verb::delete_:
      return Run(S3Operation::kDeleteBucket);
    case verb::get:
      if (t.HasParam("location")) {
        return Run(S3Operation::kGetBucketLocation);
      }
      if (t.HasParam("uploads")) {
        return Run(S3Operation::kListMultipartUploads);
      }
      if (t.HasParam("versioning")) {
        return Run(S3Operation::kGetBucketVersioning);
      }
      if (t.HasParam("versions")) {
        return Run(S3Operation::kListObjectVersions);
      }
      if (t.Param("list-type") == "2") {
        return Run(S3Operation::kListObjectsV2);
      }
      return Run(S3Operation::kListObjects);
    case verb::post:
      // POST Object, whatever the body: its handler answers a body that is no form.
      return Run(S3Operation::kPostObject);
    default:
      return Refuse(method, Refusal::kMethodNotAllowed);
  }
}

Classification ObjectOperation(const S3Target& t, verb method, bool copy_source) {
  const bool in_upload = t.HasParam("uploadId");
  switch (method) {
    case verb::put:
      if (in_upload || t.HasParam("partNumber")) {
        return Run(copy_source ? S3Operation::kUploadPartCopy : S3Operation::kUploadPart);
      }
      return Run(copy_source ? S3Operation::kCopyObject : S3Operation::kPutObject);
    case verb::get:
      return Run(in_upload ? S3Operation::kListParts : S3Operation::kGetObject);
    case verb::head:
      return Run(S3Operation::kHeadObject);
    case verb::delete_:
      return Run(in_upload ? S3Operation::kAbortMultipartUpload : S3Operation::kDeleteObject);
    case verb::post:
      if (t.HasParam("uploads")) {
        return Run(S3Operation::kCreateMultipartUpload);
      }
      if (in_upload) {
        return Run(S3Operation::kCompleteMultipartUpload);
      }
      return Refuse(method, Refusal::kNotImplemented);
    default:
      return Refuse(method, Refusal::kMethodNotAllowed);
  }
}

// A request addressed to a bucket (and perhaps a key in it). The order of the tests is
// S3's precedence: ?delete before the sub-resources, the unsupported ones before all others.
Classification InBucket(const S3Target& t, verb method, bool copy_source) {
  const bool bucket_level = t.key.empty();
  if (bucket_level && method == verb::post && t.HasParam("delete")) {
    return Run(S3Operation::kDeleteObjects);
  }
  // A browser's preflight, on a bucket or a key, whatever the query.
  if (method == verb::options) {
    return Run(S3Operation::kOptionsObject);
  }
  if (HasUnsupportedSubresource(t)) {
    return Refuse(method, Refusal::kNotImplemented);
  }
  if (t.HasParam("tagging")) {
    return Tagging(method, bucket_level);
  }
  if (t.HasParam("lifecycle")) {
    return BucketSetting(method, bucket_level, S3Operation::kGetBucketLifecycleConfiguration,
                         S3Operation::kPutBucketLifecycleConfiguration,
                         S3Operation::kDeleteBucketLifecycleConfiguration);
  }
  if (t.HasParam("policy") || t.HasParam("policyStatus")) {
    return Policy(t, method, bucket_level);
  }
  if (t.HasParam("ownershipControls")) {
    return BucketSetting(method, bucket_level, S3Operation::kGetBucketOwnershipControls,
                         S3Operation::kPutBucketOwnershipControls,
                         S3Operation::kDeleteBucketOwnershipControls);
  }
  if (t.HasParam("cors")) {
    return BucketSetting(method, bucket_level, S3Operation::kGetBucketCors,
                         S3Operation::kPutBucketCors, S3Operation::kDeleteBucketCors);
  }
  if (t.HasParam("publicAccessBlock")) {
    return BucketSetting(method, bucket_level, S3Operation::kGetPublicAccessBlock,
                         S3Operation::kPutPublicAccessBlock, S3Operation::kDeletePublicAccessBlock);
  }
  if (t.HasParam("acl")) {
    return Acl(method, bucket_level);
  }
  if (t.HasParam("object-lock")) {
    return BucketSetting(method, bucket_level, S3Operation::kGetObjectLockConfiguration,
                         S3Operation::kPutObjectLockConfiguration, S3Operation::kMethodDelete);
  }
  if (t.HasParam("retention")) {
    return ObjectSetting(method, bucket_level, S3Operation::kGetObjectRetention,
                         S3Operation::kPutObjectRetention);
  }
  if (t.HasParam("legal-hold")) {
    return ObjectSetting(method, bucket_level, S3Operation::kGetObjectLegalHold,
                         S3Operation::kPutObjectLegalHold);
  }
  if (t.HasParam("restore")) {
    if (bucket_level) {
      return Refuse(method, Refusal::kNotImplemented);
    }
    return method == verb::post ? Run(S3Operation::kRestoreObject)
                                : Refuse(method, Refusal::kMethodNotAllowed);
  }
  if (!bucket_level && t.HasParam("attributes")) {
    return method == verb::get ? Run(S3Operation::kGetObjectAttributes)
                               : Refuse(method, Refusal::kMethodNotAllowed);
  }
  if (bucket_level) {
    return BucketOperation(t, method);
  }
  return ObjectOperation(t, method, copy_source);
}

}  // namespace

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
  static constexpr std::string_view kNames[] = {
      "accelerate", "analytics", "encryption",   "intelligent-tiering", "inventory",
      "logging",    "metrics",   "notification", "replication",         "requestPayment",
      "select",     "torrent",   "website",      "renameObject",        "session"};
  for (auto name : kNames) {
    if (target.HasParam(name)) {
      return true;
    }
  }
  return false;
}

Classification Classify(const S3Target& target, verb method, bool copy_source) {
  if (target.raw_path.starts_with(kAdminPrefix) && !target.virtual_hosted) {
    return Run(S3Operation::kAdmin);
  }
  if (target.bucket.empty()) {
    // The service has no ACL of its own.
    if (HasUnsupportedSubresource(target) || target.HasParam("acl")) {
      return Refuse(method, Refusal::kNotImplemented);
    }
    if (method == verb::get) {
      return Run(S3Operation::kListBuckets);
    }
    return Refuse(method, Refusal::kMethodNotAllowed);
  }
  Classification c = InBucket(target, method, copy_source);
  // PUT on a bucket creates it, unless it configures a sub-resource of an existing one.
  const bool creating =
      target.key.empty() && method == verb::put && !target.HasParam("versioning") &&
      !target.HasParam("tagging") && !target.HasParam("lifecycle") && !target.HasParam("policy") &&
      !target.HasParam("ownershipControls") && !target.HasParam("publicAccessBlock") &&
      !target.HasParam("cors") && !target.HasParam("acl") && !target.HasParam("object-lock");
  c.bucket_first = !creating;
  return c;
}

S3Operation ClassifyOperation(const S3Target& target, verb method, bool copy_source) {
  return Classify(target, method, copy_source).op;
}

}  // namespace strata::gateway
