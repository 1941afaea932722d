// RequestView lookups and the canonicalization helpers both signature versions build on.
#include "auth/request.h"

#include <gtest/gtest.h>

#include "auth/internal/canonical.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

TEST(RequestView, HeaderIsCaseInsensitiveAndFirstWins) {
  testing::OwnedRequest r;
  r.headers = {{"Content-Type", " text/plain "}, {"X-Amz-Meta-A", "1"}, {"x-amz-meta-a", "2"}};
  RequestView v = r.View();
  EXPECT_EQ(v.Header("content-type"), " text/plain ");  // untrimmed, as received
  EXPECT_EQ(v.Header("CONTENT-TYPE"), " text/plain ");
  EXPECT_EQ(v.Header("x-amz-meta-a"), "1");
  EXPECT_TRUE(v.HasHeader("X-AMZ-META-A"));
  EXPECT_FALSE(v.HasHeader("x-amz-meta"));
  EXPECT_FALSE(v.HasHeader("content-typ"));
  EXPECT_EQ(v.Header("missing"), "");
  EXPECT_TRUE(RequestView{}.Header("x").empty());
}

TEST(RequestView, PresentButEmptyHeader) {
  testing::OwnedRequest r;
  r.headers = {{"x-amz-content-sha256", ""}};
  RequestView v = r.View();
  EXPECT_TRUE(v.HasHeader("x-amz-content-sha256"));
  EXPECT_EQ(v.Header("x-amz-content-sha256"), "");
}

TEST(Canonical, UriDecodeAndCanonicalUri) {
  std::string out;
  EXPECT_TRUE(internal::UriDecode("a%20b%2Fc+d", out));
  EXPECT_EQ(out, "a b/c+d");
  EXPECT_FALSE(internal::UriDecode("a%2", out));
  EXPECT_FALSE(internal::UriDecode("a%zz", out));
  EXPECT_FALSE(internal::UriDecode("%", out));
  EXPECT_EQ(internal::CanonicalUri(""), "/");
  EXPECT_EQ(internal::CanonicalUri("/test$file.text"), "/test%24file.text");
  EXPECT_EQ(internal::CanonicalUri("/a%2fb/caf%c3%a9"), "/a/b/caf%C3%A9");
  EXPECT_EQ(internal::CanonicalUri("/bad%zz"), "/bad%25zz");
}

TEST(Canonical, Query) {
  EXPECT_EQ(internal::CanonicalQuery(internal::ParseQuery("")), "");
  EXPECT_EQ(internal::CanonicalQuery(internal::ParseQuery("lifecycle")), "lifecycle=");
  EXPECT_EQ(internal::CanonicalQuery(internal::ParseQuery("b=2&a=1&&a=0&c")), "a=0&a=1&b=2&c=");
  EXPECT_EQ(internal::CanonicalQuery(internal::ParseQuery("prefix=a/b&delimiter=%2f")),
            "delimiter=%2F&prefix=a%2Fb");
  EXPECT_EQ(internal::CanonicalQuery(internal::ParseQuery("k=a+b&s=a%20b")), "k=a%2Bb&s=a%20b");
  EXPECT_EQ(
      internal::CanonicalQuery(internal::ParseQuery("X-Amz-Signature=x&a=1"), "X-Amz-Signature"),
      "a=1");
}

TEST(Canonical, HeaderValue) {
  EXPECT_EQ(internal::CanonicalHeaderValue("  a   b \t c  "), "a b c");
  EXPECT_EQ(internal::CanonicalHeaderValue(""), "");
  EXPECT_EQ(internal::CanonicalHeaderValue("\"a  b\""), "\"a b\"");
}

TEST(Canonical, Dates) {
  auto t = internal::ParseAmzDate("20130524T000000Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, testing::ExampleTime());
  EXPECT_EQ(internal::FormatAmzDate(*t), "20130524T000000Z");
  EXPECT_FALSE(internal::ParseAmzDate("20130229T000000Z"));  // not a leap year
  EXPECT_TRUE(internal::ParseAmzDate("20120229T235959Z"));
  EXPECT_FALSE(internal::ParseAmzDate("20130524T000000z"));
  EXPECT_FALSE(internal::ParseAmzDate("2013052aT000000Z"));
  EXPECT_EQ(internal::ParseHttpDate("Fri, 24 May 2013 00:00:00 GMT"), testing::ExampleTime());
  EXPECT_EQ(internal::ParseHttpDate("Thu, 23 May 2013 19:00:00 -0500"), testing::ExampleTime());
  EXPECT_FALSE(internal::ParseHttpDate("Fri, 24 Foo 2013 00:00:00 GMT"));
  EXPECT_FALSE(internal::ParseHttpDate("Fri, 24 May 2013 00:00 GMT"));
  EXPECT_FALSE(internal::ParseHttpDate(""));
  // Dates past what the clock's nanoseconds hold (2262-04-11) are refused, not overflowed
  // into a time in 1677 (signed overflow, which UBSan aborts on; found by
  // tests/fuzz/http_request_fuzz.cc).
  EXPECT_TRUE(internal::ParseAmzDate("22620411T000000Z"));
  EXPECT_FALSE(internal::ParseAmzDate("22620412T000000Z"));
  EXPECT_FALSE(internal::ParseAmzDate("99991231T235959Z"));
  EXPECT_FALSE(internal::ParseHttpDate("Fri, 31 Dec 9999 23:59:59 GMT"));
  std::int64_t n = 0;
  EXPECT_TRUE(internal::ParseDecimal("604800", n));
  EXPECT_EQ(n, 604800);
  EXPECT_FALSE(internal::ParseDecimal("", n));
  EXPECT_FALSE(internal::ParseDecimal("+1", n));
  EXPECT_FALSE(internal::ParseDecimal("99999999999999999999", n));
}

}  // namespace
}  // namespace strata::auth
