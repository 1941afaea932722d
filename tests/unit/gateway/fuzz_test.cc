// Mutation loops over the gateway's parsers of outside input (request target, Range,
// CreateBucketConfiguration, Delete and Tagging XML, x-amz-tagging) with fixed seeds under
// ASan and UBSan, each asserting a property of what is accepted. Coverage-guided fuzzing
// of the same parsers is tests/fuzz/ (libFuzzer); these stay as quick deterministic checks.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "gateway/conditions.h"
#include "gateway/s3_target.h"
#include "gateway/tags.h"
#include "gateway/xml.h"
#include "tests/unit/gateway/mutate.h"

namespace strata::gateway {
namespace {

constexpr int kIterations = 5000;

using testing::Mutate;

TEST(GatewayFuzz, RequestTargets) {
  std::mt19937 rng(11);
  const std::string seeds[] = {"/bucket/dir/key%20x?list-type=2&prefix=a%2Fb&max-keys=5",
                               "/b?uploads", "/", "/b/k?versionId=null&partNumber=1"};
  for (int i = 0; i < kIterations; ++i) {
    std::string target = Mutate(seeds[i % 4], rng);
    auto parsed = ParseS3Target(target, Mutate("b.s3.example.com:9000", rng), "s3.example.com");
    if (parsed.ok()) {
      // What was parsed comes from the target: a bucket never contains '/'.
      EXPECT_EQ(parsed->bucket.find('/'), std::string::npos) << target;
    }
  }
}

TEST(GatewayFuzz, Ranges) {
  std::mt19937 rng(12);
  for (int i = 0; i < kIterations; ++i) {
    std::string header = Mutate("bytes=100-2000", rng);
    std::uint64_t size = rng() % 5000;
    auto range = ParseRange(header, size);
    if (range.ok() && range->has_value()) {
      EXPECT_LE((*range)->first, (*range)->last) << header;
      EXPECT_LT((*range)->last, size) << header;
    }
  }
}

TEST(GatewayFuzz, CreateBucketConfigurationXml) {
  std::mt19937 rng(13);
  const std::string doc =
      "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>";
  for (int i = 0; i < kIterations; ++i) {
    auto parsed = ParseCreateBucketConfiguration(Mutate(doc, rng));
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml);
    }
  }
}

TEST(GatewayFuzz, DeleteRequestXml) {
  std::mt19937 rng(15);
  const std::string doc =
      "<Delete><Quiet>false</Quiet><Object><Key>a/b</Key><VersionId>null</VersionId></Object>"
      "<Object><Key>c</Key></Object></Delete>";
  for (int i = 0; i < kIterations; ++i) {
    auto parsed = ParseDeleteRequest(Mutate(doc, rng));
    if (parsed.ok()) {
      EXPECT_FALSE(parsed->objects.empty());
      for (const auto& o : parsed->objects) {
        EXPECT_FALSE(o.key.empty());
      }
    } else {
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml);
    }
  }
}

TEST(GatewayFuzz, TaggingXml) {
  std::mt19937 rng(16);
  const std::string doc =
      "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>"
      "<Tag><Key>project</Key><Value>blue</Value></Tag><Tag><Key>a</Key><Value></Value></Tag>"
      "</TagSet></Tagging>";
  for (int i = 0; i < kIterations; ++i) {
    auto parsed = ParseTagging(Mutate(doc, rng));
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml);
      continue;
    }
    // Whatever parsed is judged by the tag rules without crashing, with S3's codes.
    auto valid = ValidateTags(*parsed, TagOwner::kObject);
    if (!valid.ok()) {
      EXPECT_TRUE(valid.error().code == ErrorCode::kInvalidTag ||
                  valid.error().code == ErrorCode::kTooManyTags);
    }
  }
}

TEST(GatewayFuzz, TaggingHeader) {
  std::mt19937 rng(17);
  for (int i = 0; i < kIterations; ++i) {
    std::string header = Mutate("project=blue&empty=&two%20words=a+b", rng);
    auto parsed = ParseTaggingHeader(header);
    if (parsed.ok()) {
      EXPECT_LE(parsed->size(), kMaxObjectTags) << header;
      EXPECT_TRUE(ValidateTags(*parsed, TagOwner::kObject).ok()) << header;
    } else {
      const auto code = parsed.error().code;
      EXPECT_TRUE(code == ErrorCode::kInvalidArgument || code == ErrorCode::kInvalidTag ||
                  code == ErrorCode::kTooManyTags)
          << header;
    }
  }
}

}  // namespace
}  // namespace strata::gateway
