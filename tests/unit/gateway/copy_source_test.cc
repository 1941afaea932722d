// x-amz-copy-source and x-amz-copy-source-range: parsing only (ReadCopySource needs a
// store and is covered end to end).
#include "gateway/handlers/copy_source.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

#include "tests/unit/gateway/mutate.h"

namespace strata::gateway {
namespace {

struct Named {
  const char* header;
  const char* bucket;
  const char* key;
  const char* version_id;
};

TEST(ParseCopySource, BucketKeyAndVersion) {
  const Named cases[] = {
      {"bucket/key", "bucket", "key", ""},
      {"/bucket/key", "bucket", "key", ""},
      {"bucket/dir/sub/file.txt", "bucket", "dir/sub/file.txt", ""},
      {"bucket/dir/", "bucket", "dir/", ""},  // a "directory" key
      {"bucket//double", "bucket", "/double", ""},
      {"bucket/my%20file.txt", "bucket", "my file.txt", ""},
      {"bucket/a+b", "bucket", "a+b", ""},  // '+' is not a space in a header
      {"bucket/%E2%82%AC%20%C3%A9t%C3%A9", "bucket", "\xE2\x82\xAC \xC3\xA9t\xC3\xA9", ""},
      {"bucket/\xE2\x82\xAC", "bucket", "\xE2\x82\xAC", ""},  // raw UTF-8 passes through
      {"bucket/a%2Fb", "bucket", "a/b", ""},
      {"bucket%2Fkey", "bucket", "key", ""},  // some clients encode the separator too
      {"bucket/a%3Fb", "bucket", "a?b", ""},  // an encoded '?' is part of the key
      {"bucket/100%25", "bucket", "100%", ""},
      {"bucket/key?versionId=null", "bucket", "key", "null"},
      {"/bucket/dir/key?versionId=3HL4kqtJlcpXroDTDmJ", "bucket", "dir/key", "3HL4kqtJlcpXroDTDmJ"},
      {"bucket/a%20b?versionId=v1", "bucket", "a b", "v1"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseCopySource(c.header);
    ASSERT_TRUE(parsed.ok()) << c.header << ": " << parsed.error().message;
    EXPECT_EQ(parsed->bucket, c.bucket) << c.header;
    EXPECT_EQ(parsed->key, c.key) << c.header;
    EXPECT_EQ(parsed->version_id, c.version_id) << c.header;
  }
}

TEST(ParseCopySource, RefusesWhatNamesNoObject) {
  for (const char* header : {
           "",                       // empty
           "/",                      //
           "bucket",                 // no key
           "/bucket",                //
           "bucket/",                //
           "/bucket/",               //
           "/key",                   // no bucket: "key" is taken as the bucket
           "//key",                  // empty bucket
           "%2Fkey",                 //
           "bucket/key?versionId=",  // empty version
           "bucket/key?version=1",   // another parameter
           "bucket/key?",            //
           "bucket/key?x=1&versionId=2",
           "bucket/a%zz",  // bad escapes
           "bucket/a%2",   //
           "bucket/a%",    //
           "bucket/%G0",   //
           "bu%ket/key",   //
       }) {
    auto parsed = ParseCopySource(header);
    ASSERT_FALSE(parsed.ok()) << header;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << header;
  }
}

TEST(ParseCopySourceRange, InclusiveRangesWithinTheObject) {
  auto whole = ParseCopySourceRange("bytes=0-9", 10);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->first, 0u);
  EXPECT_EQ(whole->length, 10u);

  auto one = ParseCopySourceRange("bytes=5-5", 10);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first, 5u);
  EXPECT_EQ(one->length, 1u);

  auto last_byte = ParseCopySourceRange("bytes=9-9", 10);
  ASSERT_TRUE(last_byte.ok());
  EXPECT_EQ(last_byte->first, 9u);
  EXPECT_EQ(last_byte->length, 1u);

  // A 5 GiB part out of a larger object: no 32-bit truncation.
  auto big = ParseCopySourceRange("bytes=5368709120-10737418239", 20ull << 30);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->first, 5ull << 30);
  EXPECT_EQ(big->length, 5ull << 30);

  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  auto huge = ParseCopySourceRange("bytes=0-18446744073709551614", max);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->length, max);
}

TEST(ParseCopySourceRange, RefusesMalformedOrOutside) {
  const std::pair<const char*, std::uint64_t> refused[] = {
      {"bytes=5-4", 10},   // first > last
      {"bytes=0-10", 10},  // last == size
      {"bytes=10-10", 10},
      {"bytes=0-0", 0},  // nothing to copy from an empty object
      {"bytes=-5", 10},  // suffix ranges are GET's, not copy's
      {"bytes=5-", 10},  // open ranges too
      {"bytes=-", 10},
      {"bytes=", 10},
      {"", 10},
      {"bytes", 10},
      {"0-5", 10},
      {"Bytes=0-5", 10},
      {"bytes =0-5", 10},
      {"bytes= 0-5", 10},  // whitespace is not skipped
      {"bytes=0 -5", 10},
      {"bytes=0- 5", 10},
      {"bytes=0-5 ", 10},
      {" bytes=0-5", 10},
      {"bytes=a-b", 10},
      {"bytes=1-2x", 10},
      {"bytes=0x1-2", 10},
      {"bytes=+1-2", 10},
      {"bytes=1--2", 10},
      {"bytes=0-1,3-4", 10},  // one range only
      {"bytes=0-99999999999999999999", std::numeric_limits<std::uint64_t>::max()},
  };
  for (const auto& [header, size] : refused) {
    auto parsed = ParseCopySourceRange(header, size);
    ASSERT_FALSE(parsed.ok()) << header << " of " << size;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << header;
  }
}

TEST(CopySourceFuzz, SourcesAndRanges) {
  std::mt19937 rng(31);
  const std::string sources[] = {"/bucket/dir/my%20key%E2%82%AC?versionId=abc", "b/k",
                                 "bucket%2Fa%2Fb"};
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string header = testing::Mutate(sources[i % 3], rng);
    auto parsed = ParseCopySource(header);
    if (parsed.ok()) {
      ++accepted;
      // A bucket and a key are named, and the bucket is one path segment.
      EXPECT_FALSE(parsed->bucket.empty()) << header;
      EXPECT_FALSE(parsed->key.empty()) << header;
      EXPECT_EQ(parsed->bucket.find('/'), std::string::npos) << header;
    } else {
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << header;
    }

    const std::string range = testing::Mutate("bytes=100-2000", rng);
    const std::uint64_t size = rng() % 5000;
    auto r = ParseCopySourceRange(range, size);
    if (r.ok()) {
      EXPECT_GE(r->length, 1u) << range;
      EXPECT_LE(r->first + r->length, size) << range << " of " << size;
    } else {
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << range;
    }
  }
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace strata::gateway
