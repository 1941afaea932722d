#include "common/http_time.h"

#include <gtest/gtest.h>

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

TEST(HttpTime, HttpDateRoundTrips) {
  EXPECT_EQ(ParseHttpDate(FormatHttpDate(1796078370000)), 1796078370);
  EXPECT_FALSE(ParseHttpDate("Sun, 99 Nov 2026 22:39:30 GMT").has_value());
}

}  // namespace
}  // namespace strata
