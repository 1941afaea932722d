// Mutation loops over the gateway's parsers of outside input (request target, Range,
// CreateBucketConfiguration, Delete and Tagging XML, x-amz-tagging) with fixed seeds under
// ASan and UBSan, each asserting a property of what is accepted (a round trip where the
// parser has an inverse) and S3's error code for what is refused. Coverage-guided fuzzing
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

// Every loop below also counts what was accepted and what was refused and requires both:
// a parser that refused everything (or accepted everything) would pass the per-input
// checks vacuously.

TEST(GatewayFuzz, RequestTargets) {
  std::mt19937 rng(11);
  const std::string seeds[] = {"/bucket/dir/key%20x?list-type=2&prefix=a%2Fb&max-keys=5",
                               "/b?uploads", "/", "/b/k?versionId=null&partNumber=1"};
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::string target = Mutate(seeds[i % 4], rng);
    auto parsed = ParseS3Target(target, Mutate("b.s3.example.com:9000", rng), "s3.example.com");
    if (!parsed.ok()) {
      ++refused;
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << target;
      continue;
    }
    ++accepted;
    // What was parsed comes from the target: the raw parts split it at the first '?', and
    // the bucket and key are its decoded path (the bucket its first segment, unless the
    // Host named it).
    EXPECT_EQ(parsed->bucket.find('/'), std::string::npos) << target;
    const auto q = target.find('?');
    EXPECT_EQ(parsed->raw_path, target.substr(0, q)) << target;
    EXPECT_EQ(parsed->raw_query, q == std::string::npos ? "" : target.substr(q + 1)) << target;
    const auto path = PercentDecode(parsed->raw_path, false);
    ASSERT_TRUE(path.has_value()) << target;
    if (parsed->virtual_hosted) {
      EXPECT_FALSE(parsed->bucket.empty()) << target;
      EXPECT_EQ(*path, "/" + parsed->key) << target;
    } else {
      const bool has_slash = path->find('/', 1) != std::string::npos;
      EXPECT_EQ(*path, "/" + parsed->bucket + (has_slash ? "/" + parsed->key : "")) << target;
    }
  }
  EXPECT_GT(accepted, kIterations / 4);
  EXPECT_GT(refused, 0);
}

TEST(GatewayFuzz, Ranges) {
  std::mt19937 rng(12);
  int satisfiable = 0;
  int unsatisfiable = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::string header = Mutate("bytes=100-2000", rng);
    std::uint64_t size = rng() % 5000;
    auto range = ParseRange(header, size);
    if (!range.ok()) {
      ++unsatisfiable;
      EXPECT_EQ(range.error().code, ErrorCode::kInvalidRange) << header;
    } else if (range->has_value()) {
      ++satisfiable;
      EXPECT_LE((*range)->first, (*range)->last) << header;
      EXPECT_LT((*range)->last, size) << header;
    }
  }
  EXPECT_GT(satisfiable, kIterations / 40);  // 248 of the 5000 with this seed
  EXPECT_GT(unsatisfiable, 0);
}

// <CreateBucketConfiguration> around `location`, as a client writes it.
std::string LocationDoc(const std::string& location) {
  return "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
         "<LocationConstraint>" +
         XmlEscape(location) + "</LocationConstraint></CreateBucketConfiguration>";
}

TEST(GatewayFuzz, CreateBucketConfigurationXml) {
  std::mt19937 rng(13);
  const std::string doc = LocationDoc("eu-west-1");
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < kIterations; ++i) {
    const std::string body = Mutate(doc, rng);
    auto parsed = ParseCreateBucketConfiguration(body);
    if (!parsed.ok()) {
      ++refused;
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml) << body;
      continue;
    }
    ++accepted;
    // Round trip: the constraint read, written back as a document, reads the same.
    auto again = ParseCreateBucketConfiguration(LocationDoc(*parsed));
    ASSERT_TRUE(again.ok()) << body << " -> " << *parsed;
    EXPECT_EQ(*again, *parsed) << body;
  }
  EXPECT_GT(accepted, kIterations / 20);
  EXPECT_GT(refused, kIterations / 20);
}

std::string DeleteDoc(const DeleteRequest& request) {
  std::string doc =
      std::string("<Delete><Quiet>") + (request.quiet ? "true" : "false") + "</Quiet>";
  for (const auto& o : request.objects) {
    doc += "<Object><Key>" + XmlEscape(o.key) + "</Key>";
    if (!o.version_id.empty()) {
      doc += "<VersionId>" + XmlEscape(o.version_id) + "</VersionId>";
    }
    doc += "</Object>";
  }
  return doc + "</Delete>";
}

TEST(GatewayFuzz, DeleteRequestXml) {
  std::mt19937 rng(15);
  const std::string doc =
      "<Delete><Quiet>false</Quiet><Object><Key>a/b</Key><VersionId>null</VersionId></Object>"
      "<Object><Key>c</Key></Object></Delete>";
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < kIterations; ++i) {
    const std::string body = Mutate(doc, rng);
    auto parsed = ParseDeleteRequest(body);
    if (!parsed.ok()) {
      ++refused;
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml) << body;
      continue;
    }
    ++accepted;
    EXPECT_FALSE(parsed->objects.empty());
    for (const auto& o : parsed->objects) {
      EXPECT_FALSE(o.key.empty());
    }
    // Round trip: the request written back as a document reads the same.
    auto again = ParseDeleteRequest(DeleteDoc(*parsed));
    ASSERT_TRUE(again.ok()) << body;
    EXPECT_EQ(again->quiet, parsed->quiet) << body;
    ASSERT_EQ(again->objects.size(), parsed->objects.size()) << body;
    for (std::size_t o = 0; o < parsed->objects.size(); ++o) {
      EXPECT_EQ(again->objects[o].key, parsed->objects[o].key) << body;
      EXPECT_EQ(again->objects[o].version_id, parsed->objects[o].version_id) << body;
    }
  }
  EXPECT_GT(accepted, kIterations / 100);  // 109 of the 5000 with this seed
  EXPECT_GT(refused, kIterations / 20);
}

std::string TaggingDoc(const metadata::Tags& tags) {
  std::string doc = "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>";
  for (const auto& [key, value] : tags) {
    doc += "<Tag><Key>" + XmlEscape(key) + "</Key><Value>" + XmlEscape(value) + "</Value></Tag>";
  }
  return doc + "</TagSet></Tagging>";
}

TEST(GatewayFuzz, TaggingXml) {
  std::mt19937 rng(16);
  const std::string doc =
      "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>"
      "<Tag><Key>project</Key><Value>blue</Value></Tag><Tag><Key>a</Key><Value></Value></Tag>"
      "</TagSet></Tagging>";
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < kIterations; ++i) {
    const std::string body = Mutate(doc, rng);
    auto parsed = ParseTagging(body);
    if (!parsed.ok()) {
      ++refused;
      EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml) << body;
      continue;
    }
    ++accepted;
    // Round trip: the tags written back as a document read the same, in the same order.
    auto again = ParseTagging(TaggingDoc(*parsed));
    ASSERT_TRUE(again.ok()) << body;
    EXPECT_EQ(*again, *parsed) << body;
    // Whatever parsed is judged by the tag rules without crashing, with S3's codes.
    auto valid = ValidateTags(*parsed, TagOwner::kObject);
    if (!valid.ok()) {
      EXPECT_TRUE(valid.error().code == ErrorCode::kInvalidTag ||
                  valid.error().code == ErrorCode::kTooManyTags);
    }
  }
  EXPECT_GT(accepted, kIterations / 20);
  EXPECT_GT(refused, kIterations / 20);
}

TEST(GatewayFuzz, TaggingHeader) {
  std::mt19937 rng(17);
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < kIterations; ++i) {
    std::string header = Mutate("project=blue&empty=&two%20words=a+b", rng);
    auto parsed = ParseTaggingHeader(header);
    (parsed.ok() ? accepted : refused)++;
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
  EXPECT_GT(accepted, kIterations / 20);
  EXPECT_GT(refused, kIterations / 20);
}

}  // namespace
}  // namespace strata::gateway
