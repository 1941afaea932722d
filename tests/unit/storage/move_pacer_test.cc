// MovePacer (storage/cluster/move_pacer.h): background moves held to a byte rate, with a
// short burst free.
#include "storage/cluster/move_pacer.h"

#include <gtest/gtest.h>

#include <chrono>

namespace strata::storage::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = MovePacer::Clock;

TEST(MovePacer, SmallMovesWithinTheBurstDoNotWait) {
  MovePacer pacer(100 << 20);  // 100 MiB/s: 25 MiB is the 250 ms burst
  const Clock::time_point now = Clock::now();
  EXPECT_EQ(pacer.Charge(10 << 20, now), Clock::duration::zero());
  EXPECT_EQ(pacer.Charge(10 << 20, now), Clock::duration::zero());
}

TEST(MovePacer, SustainedMovesWaitForTheirBytes) {
  MovePacer pacer(100 << 20);
  const Clock::time_point now = Clock::now();
  // 125 MiB at once: 1.25 s of the rate, less the 250 ms burst banked by the idle start.
  const auto wait = pacer.Charge(125 << 20, now);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(wait), 1000ms);
  // The next 100 MiB right away: another second on top.
  const auto next = pacer.Charge(100 << 20, now);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(next), 2000ms);
  // Having waited it out, the rate holds from there: nothing banked beyond a burst.
  const auto later = now + 2000ms;
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(pacer.Charge(50 << 20, later)),
            500ms);
}

TEST(MovePacer, IdleTimeBanksAtMostABurst) {
  MovePacer pacer(1 << 20);  // 1 MiB/s
  const Clock::time_point start = Clock::now();
  (void)pacer.Charge(0, start);
  // An hour idle, then 2 MiB: only 250 ms of it are free.
  const auto wait = pacer.Charge(2 << 20, start + 1h);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(wait), 1750ms);
}

TEST(MovePacer, AbsurdChargeSaturates) {
  MovePacer pacer(1);
  const auto wait = pacer.Charge(~std::uint64_t{0}, Clock::now());
  EXPECT_GT(wait, 24h * 365 * 10);
}

}  // namespace
}  // namespace strata::storage::cluster
