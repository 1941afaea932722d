#include "gateway/operation_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace strata::gateway {
namespace {

using boost::beast::http::verb;

bool IsMethodFallback(S3Operation op) { return op <= S3Operation::kMethodOther; }

TEST(OperationTable, EveryOperationHasItsRow) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kS3OperationCount; ++i) {
    const auto op = static_cast<S3Operation>(i);
    const OperationEntry& entry = LookupOperation(op);
    EXPECT_EQ(entry.op, op) << i;
    EXPECT_FALSE(entry.name.empty()) << i;
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_EQ(OperationName(op), entry.name);
    if (op == S3Operation::kOptionsObject) {
      // A CORS preflight is answered from the bucket's CORS rules: no permission applies.
      EXPECT_NE(entry.handler, nullptr);
      EXPECT_TRUE(entry.iam_action.empty());
    } else if (op >= S3Operation::kListBuckets) {
      // An S3 operation: a handler and the policy action S3 authorizes it by.
      EXPECT_NE(entry.handler, nullptr) << entry.name;
      EXPECT_TRUE(entry.iam_action.starts_with("s3:")) << entry.name << ": " << entry.iam_action;
      EXPECT_GT(entry.iam_action.size(), 3U) << entry.name;
    } else {
      EXPECT_TRUE(entry.iam_action.empty()) << entry.name;
      EXPECT_EQ(entry.prologue, 0) << entry.name;
      // Only the admin API has a handler among strata's own entries; the fallbacks are
      // refused, kMalformed and kGetMetrics are answered by the session.
      EXPECT_EQ(entry.handler != nullptr, op == S3Operation::kAdmin) << entry.name;
    }
  }
}

TEST(OperationTable, ActionsAsAwsSpellsThem) {
  auto action = [](S3Operation op) { return std::string(LookupOperation(op).iam_action); };
  EXPECT_EQ(action(S3Operation::kListBuckets), "s3:ListAllMyBuckets");
  EXPECT_EQ(action(S3Operation::kHeadBucket), "s3:ListBucket");
  EXPECT_EQ(action(S3Operation::kListObjects), "s3:ListBucket");
  EXPECT_EQ(action(S3Operation::kListObjectsV2), "s3:ListBucket");
  EXPECT_EQ(action(S3Operation::kListObjectVersions), "s3:ListBucketVersions");
  EXPECT_EQ(action(S3Operation::kListMultipartUploads), "s3:ListBucketMultipartUploads");
  EXPECT_EQ(action(S3Operation::kGetObject), "s3:GetObject");
  EXPECT_EQ(action(S3Operation::kHeadObject), "s3:GetObject");
  EXPECT_EQ(action(S3Operation::kPutObject), "s3:PutObject");
  EXPECT_EQ(action(S3Operation::kCopyObject), "s3:PutObject");
  EXPECT_EQ(action(S3Operation::kUploadPart), "s3:PutObject");
  EXPECT_EQ(action(S3Operation::kCompleteMultipartUpload), "s3:PutObject");
  EXPECT_EQ(action(S3Operation::kAbortMultipartUpload), "s3:AbortMultipartUpload");
  EXPECT_EQ(action(S3Operation::kListParts), "s3:ListMultipartUploadParts");
  EXPECT_EQ(action(S3Operation::kDeleteObjects), "s3:DeleteObject");
  EXPECT_EQ(action(S3Operation::kGetBucketLocation), "s3:GetBucketLocation");
  EXPECT_EQ(action(S3Operation::kGetBucketLifecycleConfiguration), "s3:GetLifecycleConfiguration");
  EXPECT_EQ(action(S3Operation::kDeleteBucketLifecycleConfiguration),
            "s3:PutLifecycleConfiguration");
  EXPECT_EQ(action(S3Operation::kDeleteBucketTagging), "s3:PutBucketTagging");
}

TEST(OperationTable, HeadAndGetShareTheHandlerAsDoBothListings) {
  EXPECT_EQ(LookupOperation(S3Operation::kHeadObject).handler,
            LookupOperation(S3Operation::kGetObject).handler);
  EXPECT_EQ(LookupOperation(S3Operation::kListObjectsV2).handler,
            LookupOperation(S3Operation::kListObjects).handler);
  EXPECT_NE(LookupOperation(S3Operation::kPutObject).handler,
            LookupOperation(S3Operation::kCopyObject).handler);
}

TEST(OperationTable, WritesCheckTheDirtyLimitFirst) {
  // Uploads refuse early while the write-back backlog is full; a copy or a create checks
  // the key before the bucket, so a too long key in a missing bucket is KeyTooLong.
  for (auto op : {S3Operation::kPutObject, S3Operation::kCopyObject,
                  S3Operation::kCreateMultipartUpload, S3Operation::kUploadPart}) {
    EXPECT_NE(LookupOperation(op).prologue & kCheckDirtyLimit, 0) << OperationName(op);
  }
  for (auto op : {S3Operation::kCopyObject, S3Operation::kCreateMultipartUpload,
                  S3Operation::kDeleteObject, S3Operation::kGetObjectTagging}) {
    EXPECT_EQ(LookupOperation(op).prologue & (kCheckKeyLength | kNeedBucket),
              kCheckKeyLength | kNeedBucket)
        << OperationName(op);
  }
  // These read no bucket record before their own checks: NoSuchBucket must not win.
  for (auto op : {S3Operation::kGetObject, S3Operation::kListObjects, S3Operation::kDeleteObjects,
                  S3Operation::kPutBucketVersioning, S3Operation::kCreateBucket}) {
    EXPECT_EQ(LookupOperation(op).prologue & kNeedBucket, 0) << OperationName(op);
  }
}

// Every combination of method, target shape, sub-resource and copy source: the
// classification routes only to rows with a handler, refuses only with a method fallback,
// and is the name metrics count.
TEST(OperationTable, ClassificationAgreesWithTheTable) {
  const std::vector<verb> methods = {verb::get,  verb::put,     verb::head,
                                     verb::post, verb::delete_, verb::options};
  const std::vector<std::string> paths = {"/",    "/b",     "/b/",
                                          "/b/k", "/b/k/x", "/_strata/admin/users"};
  const std::vector<std::string> queries = {"",
                                            "?acl",
                                            "?retention",
                                            "?legal-hold",
                                            "?object-lock",
                                            "?website",
                                            "?tagging",
                                            "?lifecycle",
                                            "?restore",
                                            "?delete",
                                            "?attributes",
                                            "?uploads",
                                            "?uploadId=u",
                                            "?partNumber=1&uploadId=u",
                                            "?location",
                                            "?versioning",
                                            "?versions",
                                            "?list-type=2",
                                            "?tagging&acl",
                                            "?cors",
                                            "?lifecycle&acl",
                                            "?delete&acl",
                                            "?restore&versioning"};
  int routed = 0;
  int refused = 0;
  for (auto method : methods) {
    for (const auto& path : paths) {
      for (const auto& query : queries) {
        for (bool copy : {false, true}) {
          auto target = ParseS3Target(path + query, "h", "");
          ASSERT_TRUE(target.ok()) << path << query;
          const Classification c = Classify(*target, method, copy);
          const std::string what = std::string(boost::beast::http::to_string(method)) + " " + path +
                                   query + (copy ? " (copy)" : "");
          EXPECT_EQ(ClassifyOperation(*target, method, copy), c.op) << what;
          if (c.refusal == Refusal::kNone) {
            ++routed;
            EXPECT_NE(LookupOperation(c.op).handler, nullptr) << what;
            EXPECT_FALSE(IsMethodFallback(c.op)) << what;
          } else {
            ++refused;
            EXPECT_EQ(c.op, MethodOperation(method)) << what;
          }
          const bool in_bucket = !target->bucket.empty() && c.op != S3Operation::kAdmin;
          if (!in_bucket) {
            EXPECT_FALSE(c.bucket_first) << what;
          } else if (!c.bucket_first) {
            // Only a PUT on the bucket itself skips the lookup: CreateBucket or its refusal.
            EXPECT_EQ(method, verb::put) << what;
            EXPECT_TRUE(target->key.empty()) << what;
            EXPECT_TRUE(c.op == S3Operation::kCreateBucket || c.refusal != Refusal::kNone) << what;
          }
          if (c.op == S3Operation::kCreateBucket) {
            EXPECT_FALSE(c.bucket_first) << what;
          }
        }
      }
    }
  }
  EXPECT_GT(routed, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace strata::gateway
