#include "gateway/operation.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace strata::gateway {
namespace {

using boost::beast::http::verb;

std::string Op(verb method, std::string_view target, bool copy = false) {
  auto t = ParseS3Target(target, "h", "");
  EXPECT_TRUE(t.ok()) << target;
  return std::string(OperationName(ClassifyOperation(*t, method, copy)));
}

TEST(Operation, ServiceAndAdmin) {
  EXPECT_EQ(Op(verb::get, "/"), "ListBuckets");
  EXPECT_EQ(Op(verb::put, "/"), "PUT");
  EXPECT_EQ(Op(verb::get, "/?acl"), "GET");
  EXPECT_EQ(Op(verb::get, "/_strata/admin/users"), "Admin");
  EXPECT_EQ(Op(verb::put, "/_strata/admin/users/x"), "Admin");
}

TEST(Operation, Buckets) {
  EXPECT_EQ(Op(verb::put, "/b"), "CreateBucket");
  EXPECT_EQ(Op(verb::put, "/b?versioning"), "PutBucketVersioning");
  EXPECT_EQ(Op(verb::head, "/b"), "HeadBucket");
  EXPECT_EQ(Op(verb::delete_, "/b"), "DeleteBucket");
  EXPECT_EQ(Op(verb::get, "/b?location"), "GetBucketLocation");
  EXPECT_EQ(Op(verb::get, "/b?uploads"), "ListMultipartUploads");
  EXPECT_EQ(Op(verb::get, "/b?versioning"), "GetBucketVersioning");
  EXPECT_EQ(Op(verb::get, "/b?versions&prefix=a"), "ListObjectVersions");
  EXPECT_EQ(Op(verb::get, "/b"), "ListObjects");
  EXPECT_EQ(Op(verb::get, "/b/?prefix=x"), "ListObjects");
  EXPECT_EQ(Op(verb::get, "/b?list-type=2&prefix=x"), "ListObjectsV2");
  EXPECT_EQ(Op(verb::post, "/b?delete"), "DeleteObjects");
  EXPECT_EQ(Op(verb::post, "/b"), "PostObject");
  EXPECT_EQ(Op(verb::get, "/b?tagging"), "GetBucketTagging");
  EXPECT_EQ(Op(verb::put, "/b?tagging"), "PutBucketTagging");
  EXPECT_EQ(Op(verb::delete_, "/b?tagging"), "DeleteBucketTagging");
  EXPECT_EQ(Op(verb::get, "/b?lifecycle"), "GetBucketLifecycleConfiguration");
  EXPECT_EQ(Op(verb::put, "/b?lifecycle"), "PutBucketLifecycleConfiguration");
  EXPECT_EQ(Op(verb::delete_, "/b?lifecycle"), "DeleteBucketLifecycleConfiguration");
  EXPECT_EQ(Op(verb::get, "/b/k?lifecycle"), "GET");  // no object-level lifecycle
  EXPECT_EQ(Op(verb::get, "/b?policy"), "GetBucketPolicy");
  EXPECT_EQ(Op(verb::put, "/b?policy"), "PutBucketPolicy");
  EXPECT_EQ(Op(verb::delete_, "/b?policy"), "DeleteBucketPolicy");
  EXPECT_EQ(Op(verb::get, "/b?policyStatus"), "GetBucketPolicyStatus");
  EXPECT_EQ(Op(verb::put, "/b?policyStatus"), "PUT");
  EXPECT_EQ(Op(verb::post, "/b?policy"), "POST");
  EXPECT_EQ(Op(verb::get, "/b/k?policy"), "GET");  // no object-level policy
  EXPECT_EQ(Op(verb::get, "/b?ownershipControls"), "GetBucketOwnershipControls");
  EXPECT_EQ(Op(verb::put, "/b?ownershipControls"), "PutBucketOwnershipControls");
  EXPECT_EQ(Op(verb::delete_, "/b?ownershipControls"), "DeleteBucketOwnershipControls");
  EXPECT_EQ(Op(verb::get, "/b?publicAccessBlock"), "GetPublicAccessBlock");
  EXPECT_EQ(Op(verb::put, "/b?publicAccessBlock"), "PutPublicAccessBlock");
  EXPECT_EQ(Op(verb::delete_, "/b?publicAccessBlock"), "DeletePublicAccessBlock");
  EXPECT_EQ(Op(verb::post, "/b?publicAccessBlock"), "POST");
  EXPECT_EQ(Op(verb::get, "/b/k?ownershipControls"), "GET");
  EXPECT_EQ(Op(verb::options, "/b"), "OptionsObject");
  EXPECT_EQ(Op(verb::options, "/b/k?uploads"), "OptionsObject");
  EXPECT_EQ(Op(verb::get, "/b?cors"), "GetBucketCors");
  EXPECT_EQ(Op(verb::put, "/b?cors"), "PutBucketCors");
  EXPECT_EQ(Op(verb::delete_, "/b?cors"), "DeleteBucketCors");
  EXPECT_EQ(Op(verb::get, "/b/k?cors"), "GET");
}

TEST(Operation, Objects) {
  EXPECT_EQ(Op(verb::put, "/b/k"), "PutObject");
  EXPECT_EQ(Op(verb::put, "/b/k", true), "CopyObject");
  EXPECT_EQ(Op(verb::put, "/b/k?partNumber=1&uploadId=u"), "UploadPart");
  EXPECT_EQ(Op(verb::put, "/b/k?partNumber=1&uploadId=u", true), "UploadPartCopy");
  EXPECT_EQ(Op(verb::get, "/b/k"), "GetObject");
  EXPECT_EQ(Op(verb::get, "/b/k?partNumber=2"), "GetObject");
  EXPECT_EQ(Op(verb::get, "/b/k?versionId=v"), "GetObject");
  EXPECT_EQ(Op(verb::head, "/b/k"), "HeadObject");
  EXPECT_EQ(Op(verb::delete_, "/b/k"), "DeleteObject");
  EXPECT_EQ(Op(verb::post, "/b/k?uploads"), "CreateMultipartUpload");
  EXPECT_EQ(Op(verb::post, "/b/k?uploadId=u"), "CompleteMultipartUpload");
  EXPECT_EQ(Op(verb::delete_, "/b/k?uploadId=u"), "AbortMultipartUpload");
  EXPECT_EQ(Op(verb::get, "/b/k?uploadId=u"), "ListParts");
  EXPECT_EQ(Op(verb::get, "/b/k?tagging"), "GetObjectTagging");
  EXPECT_EQ(Op(verb::put, "/b/k?tagging"), "PutObjectTagging");
  EXPECT_EQ(Op(verb::get, "/b/k?attributes"), "GetObjectAttributes");
  EXPECT_EQ(Op(verb::post, "/b/k?restore"), "RestoreObject");
  EXPECT_EQ(Op(verb::get, "/b/k?restore"), "GET");
  EXPECT_EQ(Op(verb::post, "/b?restore"), "POST");
  EXPECT_EQ(Op(verb::delete_, "/b/k?tagging"), "DeleteObjectTagging");
  EXPECT_EQ(Op(verb::get, "/b/k?acl"), "GetObjectAcl");
  EXPECT_EQ(Op(verb::put, "/b/k?acl"), "PutObjectAcl");
  EXPECT_EQ(Op(verb::get, "/b?acl"), "GetBucketAcl");
  EXPECT_EQ(Op(verb::put, "/b?acl"), "PutBucketAcl");
  EXPECT_EQ(Op(verb::delete_, "/b?acl"), "DELETE");
  EXPECT_EQ(Op(verb::get, "/b?object-lock"), "GetObjectLockConfiguration");
  EXPECT_EQ(Op(verb::put, "/b?object-lock"), "PutObjectLockConfiguration");
  EXPECT_EQ(Op(verb::delete_, "/b?object-lock"), "DELETE");
  EXPECT_EQ(Op(verb::get, "/b/k?object-lock"), "GET");
  EXPECT_EQ(Op(verb::get, "/b/k?retention"), "GetObjectRetention");
  EXPECT_EQ(Op(verb::put, "/b/k?retention&versionId=v"), "PutObjectRetention");
  EXPECT_EQ(Op(verb::get, "/b/k?legal-hold"), "GetObjectLegalHold");
  EXPECT_EQ(Op(verb::put, "/b/k?legal-hold"), "PutObjectLegalHold");
  EXPECT_EQ(Op(verb::get, "/b?retention"), "GET");
  EXPECT_EQ(Op(verb::post, "/b/k"), "POST");
  // A key that merely looks like a sub-resource is still an object.
  EXPECT_EQ(Op(verb::get, "/metrics/tagging"), "GetObject");
}

Classification Route(verb method, std::string_view target, bool copy = false) {
  auto t = ParseS3Target(target, "h", "");
  EXPECT_TRUE(t.ok()) << target;
  return Classify(*t, method, copy);
}

// The status Dispatch answers for what strata does not implement: 501 for a sub-resource
// (or one this target cannot have), 405 for a method a known resource does not take.
TEST(Operation, Refusals) {
  auto refusal = [](verb method, std::string_view target) { return Route(method, target).refusal; };
  EXPECT_EQ(refusal(verb::get, "/b/k"), Refusal::kNone);
  EXPECT_EQ(refusal(verb::put, "/"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::get, "/?acl"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::get, "/b?website"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::put, "/b/k?acl"), Refusal::kNone);
  EXPECT_EQ(refusal(verb::delete_, "/b/k?acl"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::delete_, "/b?object-lock"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::get, "/b/k?object-lock"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::get, "/b?legal-hold"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::delete_, "/b/k?retention"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::post, "/b"), Refusal::kNone);
  EXPECT_EQ(refusal(verb::post, "/b/k"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::options, "/b"), Refusal::kNone);
  EXPECT_EQ(refusal(verb::options, "/b/k"), Refusal::kNone);
  EXPECT_EQ(refusal(verb::options, "/"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::post, "/b?tagging"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::post, "/b/k?tagging"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::post, "/b?lifecycle"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::get, "/b/k?lifecycle"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::post, "/b?restore"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::get, "/b?restore"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::get, "/b/k?restore"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::put, "/b/k?attributes"), Refusal::kMethodNotAllowed);
  EXPECT_EQ(refusal(verb::get, "/b?attributes"), Refusal::kNone);  // ListObjects
  // An unsupported sub-resource wins over the supported ones, ?delete over it.
  EXPECT_EQ(refusal(verb::put, "/b?tagging&website"), Refusal::kNotImplemented);
  EXPECT_EQ(refusal(verb::post, "/b?delete&website"), Refusal::kNone);
}

// What metrics count is what Dispatch runs, including where the two used to differ.
TEST(Operation, NamesFollowTheRoute) {
  EXPECT_EQ(Op(verb::get, "/?tagging"), "ListBuckets");   // the service ignores ?tagging
  EXPECT_EQ(Op(verb::put, "/b?tagging&website"), "PUT");  // refused 501
  EXPECT_EQ(Op(verb::put, "/b?restore"), "PUT");          // refused 501, not CreateBucket
  EXPECT_EQ(Op(verb::head, "/b?restore"), "HEAD");
  EXPECT_EQ(Op(verb::put, "/b/k?attributes"), "PUT");  // refused 405, not PutObject
  EXPECT_EQ(Op(verb::post, "/b?delete&website"), "DeleteObjects");
}

// A PUT on a bucket that configures no sub-resource of an existing one may create it:
// Dispatch does not look it up first; everything else in a bucket is looked up first,
// refusals included (a stranger's bucket answers 403 before 501).
TEST(Operation, BucketLookupFirst) {
  EXPECT_FALSE(Route(verb::put, "/b").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?acl").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?object-lock").bucket_first);
  EXPECT_FALSE(Route(verb::put, "/b?restore").bucket_first);
  EXPECT_FALSE(Route(verb::get, "/").bucket_first);
  EXPECT_FALSE(Route(verb::get, "/_strata/admin/users").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?versioning").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?tagging").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?lifecycle").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?policy").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?ownershipControls").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?publicAccessBlock").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b?tagging&website").bucket_first);
  EXPECT_TRUE(Route(verb::get, "/b?acl").bucket_first);
  EXPECT_TRUE(Route(verb::head, "/b").bucket_first);
  EXPECT_TRUE(Route(verb::put, "/b/k").bucket_first);
  EXPECT_TRUE(Route(verb::options, "/b/k").bucket_first);
}

TEST(Operation, NamesAreDistinctAndValidLabelValues) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kS3OperationCount; ++i) {
    auto name = OperationName(static_cast<S3Operation>(i));
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(OperationName(MethodOperation(verb::get)), "GET");
  EXPECT_EQ(OperationName(MethodOperation(verb::patch)), "OTHER");
  EXPECT_EQ(OperationName(S3Operation::kMalformed), "Malformed");
}

}  // namespace
}  // namespace strata::gateway
