#include "gateway/s3_target.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

TEST(S3Target, PathStyle) {
  auto t = ParseS3Target("/photos/2006/Feb/puppy%20one.jpg?versionId=3&x=a%2Fb", "host:9000", "");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->bucket, "photos");
  EXPECT_EQ(t->key, "2006/Feb/puppy one.jpg");
  EXPECT_EQ(t->raw_path, "/photos/2006/Feb/puppy%20one.jpg");
  EXPECT_EQ(t->raw_query, "versionId=3&x=a%2Fb");
  EXPECT_EQ(t->Param("x"), "a/b");
  EXPECT_TRUE(t->HasParam("versionId"));
  EXPECT_FALSE(t->virtual_hosted);
}

TEST(S3Target, ServiceBucketAndTrailingSlash) {
  auto service = ParseS3Target("/", "h", "");
  ASSERT_TRUE(service.ok());
  EXPECT_TRUE(service->bucket.empty());
  auto bucket = ParseS3Target("/b/?location", "h", "");
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->bucket, "b");
  EXPECT_TRUE(bucket->key.empty());
  EXPECT_TRUE(bucket->HasParam("location"));
  EXPECT_EQ(bucket->Param("location"), "");
}

TEST(S3Target, PlusIsLiteralInPathAndSpaceInQuery) {
  auto t = ParseS3Target("/b/a+b?prefix=c+d", "h", "");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->key, "a+b");
  EXPECT_EQ(t->Param("prefix"), "c d");
}

TEST(S3Target, VirtualHosted) {
  auto t = ParseS3Target("/dir/key", "my.bucket.s3.example.com:9000", "s3.example.com");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->virtual_hosted);
  EXPECT_EQ(t->bucket, "my.bucket");
  EXPECT_EQ(t->key, "dir/key");
  auto plain = ParseS3Target("/b/k", "s3.example.com", "s3.example.com");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->virtual_hosted);
  EXPECT_EQ(plain->bucket, "b");
}

TEST(S3Target, RejectsMalformedTargets) {
  EXPECT_FALSE(ParseS3Target("", "h", "").ok());
  EXPECT_FALSE(ParseS3Target("http://x/b", "h", "").ok());
  EXPECT_FALSE(ParseS3Target("/b/k%2", "h", "").ok());
  EXPECT_FALSE(ParseS3Target("/b/k%zz", "h", "").ok());
  EXPECT_FALSE(ParseS3Target("/b/k?a=%", "h", "").ok());
  auto err = ParseS3Target("*", "h", "");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::gateway
