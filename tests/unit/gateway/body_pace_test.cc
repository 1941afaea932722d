#include "gateway/body_pace.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr auto kIdle = seconds(60);

TEST(BodyPace, GraceThenASecondPerRateBytes) {
  BodyPace pace(100, seconds(2));
  EXPECT_EQ(pace.Allowance(kIdle), seconds(2));
  pace.Record(seconds(1), 100);  // earned a second, spent one
  EXPECT_EQ(pace.Allowance(kIdle), seconds(2));
  pace.Record(milliseconds(500), 0);
  EXPECT_EQ(pace.Allowance(kIdle), milliseconds(1500));
}

TEST(BodyPace, ATrickleRunsOut) {
  // One byte a second against 100 bytes a second: the grace and 10 ms a byte.
  BodyPace pace(100, seconds(2));
  int reads = 0;
  while (pace.Allowance(kIdle) >= seconds(1)) {
    pace.Record(seconds(1), 1);
    ++reads;
  }
  EXPECT_EQ(reads, 2);
  EXPECT_LT(pace.Allowance(kIdle), seconds(1));
  pace.Record(pace.Allowance(kIdle), 0);
  EXPECT_EQ(pace.Allowance(kIdle), BodyPace::Duration::zero());
}

TEST(BodyPace, AFastClientIsCappedByTheIdleTimeout) {
  BodyPace pace(100, seconds(2));
  pace.Record(milliseconds(10), std::uint64_t{1} << 40);  // a TiB earns years
  EXPECT_EQ(pace.Allowance(kIdle), kIdle);
}

TEST(BodyPace, ZeroRateIsNoMinimum) {
  BodyPace pace(0, seconds(0));
  pace.Record(seconds(1000), 0);
  EXPECT_EQ(pace.Allowance(kIdle), kIdle);
}

}  // namespace
}  // namespace strata::gateway
