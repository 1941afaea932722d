#include "common/http_time.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>

namespace strata {
namespace {

TEST(HttpTime, Iso8601RoundTripsAndRefusesGarbage) {
  const std::int64_t ms = 1796078370123;  // 2026-12-01T...Z with milliseconds
  EXPECT_EQ(ParseIso8601(FormatIso8601(ms)), ms);
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01Z"), 1000);
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01.123456Z"), 1123);
  for (const char* bad : {"", "1970-01-01", "1970-01-01T00:00:01", "1970-01-01T00:00:01.Z",
                          "1970-01-01T00:00:01Zjunk", "yesterday", "1970-13-01T00:00:01Z"}) {
    EXPECT_FALSE(ParseIso8601(bad).has_value()) << bad;
  }
}

// The calendar arithmetic against the C library's formatting, across leap days, month and
// year ends, and centuries.
TEST(HttpTime, HttpDateMatchesStrftime) {
  auto reference = [](std::int64_t unix_s) {
    std::time_t t = static_cast<std::time_t>(unix_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    return std::string(buf, std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm));
  };
  EXPECT_EQ(FormatHttpDate(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(951782400999), "Tue, 29 Feb 2000 00:00:00 GMT");
  std::int64_t s = 0;
  for (int i = 0; i < 200000; ++i) {
    s += 86399 + (i % 7) * 3607;  // about a day a step, landing on every hour and weekday
    ASSERT_EQ(FormatHttpDate(s * 1000 + i % 1000), reference(s)) << s;
  }
  EXPECT_GT(s, std::int64_t{16000000000});  // the walk went past the year 2470
}

TEST(HttpTime, HttpDateRoundTrips) {
  EXPECT_EQ(ParseHttpDate(FormatHttpDate(1796078370000)), 1796078370);
  EXPECT_FALSE(ParseHttpDate("Sun, 99 Nov 2026 22:39:30 GMT").has_value());
}

// Times before 1970 with milliseconds: the fraction was written negative (".-970Z") and
// the second rounded toward 1970 (found by tests/fuzz/http_time_fuzz.cc).
TEST(HttpTime, Iso8601BeforeTheEpoch) {
  EXPECT_EQ(FormatIso8601(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(-1000), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(FormatIso8601(-1001), "1969-12-31T23:59:58.999Z");
  EXPECT_EQ(ParseIso8601(FormatIso8601(-5555)), -5555);
}

}  // namespace
}  // namespace strata
