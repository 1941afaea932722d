#include "gateway/conditions.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

TEST(ParseRange, Forms) {
  auto r = ParseRange("bytes=0-9", 100);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->first, 0u);
  EXPECT_EQ((*r)->last, 9u);
  r = ParseRange("bytes=90-", 100);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->first, 90u);
  EXPECT_EQ((*r)->last, 99u);
  r = ParseRange("bytes=-10", 100);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->first, 90u);
  r = ParseRange("bytes=-1000", 100);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->first, 0u);
  r = ParseRange("bytes=50-5000", 100);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->last, 99u);
}

TEST(ParseRange, IgnoredForms) {
  for (const char* h : {"", "items=0-1", "bytes=", "bytes=5-1", "bytes=a-b", "bytes=0-1,3-4",
                        "bytes=--1", "bytes=1"}) {
    auto r = ParseRange(h, 100);
    ASSERT_TRUE(r.ok()) << h;
    EXPECT_FALSE(r->has_value()) << h;
  }
}

TEST(ParseRange, Unsatisfiable) {
  for (auto [h, size] :
       {std::pair{"bytes=100-", 100}, std::pair{"bytes=100-200", 100}, std::pair{"bytes=-0", 100},
        std::pair{"bytes=0-", 0}, std::pair{"bytes=-5", 0}}) {
    auto r = ParseRange(h, size);
    ASSERT_FALSE(r.ok()) << h;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidRange);
  }
}

TEST(Preconditions, EtagLists) {
  EXPECT_TRUE(EtagMatches("\"abc\"", "abc"));
  EXPECT_TRUE(EtagMatches("\"x\", \"abc\"", "abc"));
  EXPECT_TRUE(EtagMatches("*", "abc"));
  EXPECT_TRUE(EtagMatches("W/\"abc\"", "abc"));
  EXPECT_FALSE(EtagMatches("\"abd\"", "abc"));
}

TEST(Preconditions, S3Precedence) {
  const std::int64_t modified = 1'000'000'000'000;  // 2001-09-09T01:46:40Z
  const char* before = "Sat, 08 Sep 2001 00:00:00 GMT";
  const char* after = "Mon, 10 Sep 2001 00:00:00 GMT";
  EXPECT_EQ(EvaluatePreconditions({}, "e", modified), std::nullopt);
  EXPECT_EQ(EvaluatePreconditions({.if_match = "\"x\""}, "e", modified), 412u);
  // If-Match true wins over a failing If-Unmodified-Since.
  EXPECT_EQ(
      EvaluatePreconditions({.if_match = "\"e\"", .if_unmodified_since = before}, "e", modified),
      std::nullopt);
  EXPECT_EQ(EvaluatePreconditions({.if_unmodified_since = before}, "e", modified), 412u);
  EXPECT_EQ(EvaluatePreconditions({.if_none_match = "\"e\""}, "e", modified), 304u);
  // If-None-Match false wins over a matching If-Modified-Since.
  EXPECT_EQ(
      EvaluatePreconditions({.if_none_match = "\"x\"", .if_modified_since = after}, "e", modified),
      std::nullopt);
  EXPECT_EQ(EvaluatePreconditions({.if_modified_since = after}, "e", modified), 304u);
  EXPECT_EQ(EvaluatePreconditions({.if_modified_since = before}, "e", modified), std::nullopt);
  EXPECT_EQ(EvaluatePreconditions({.if_modified_since = "garbage"}, "e", modified), std::nullopt);
}

}  // namespace
}  // namespace strata::gateway
