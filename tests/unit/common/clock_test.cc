// FakeClock and the waits on it: a ClockTimer's wait ends when the test advances the clock
// past its deadline (not before), a thread's WaitUntil likewise; nothing sleeps.
#include "common/clock.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "common/clock_timer.h"

namespace strata {
namespace {

namespace asio = boost::asio;
using std::chrono::hours;
using std::chrono::seconds;

TEST(FakeClockTest, AdvanceMovesWallAndMonotonicTimeSetOnlyTheWall) {
  FakeClock clock(WallTime{} + hours(100));
  const WallTime wall = clock.Now();
  const SteadyTime steady = clock.SteadyNow();
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.Now() - wall, seconds(5));
  EXPECT_EQ(clock.SteadyNow() - steady, seconds(5));
  clock.Set(wall - hours(1));
  EXPECT_EQ(clock.Now(), wall - hours(1));
  EXPECT_EQ(clock.SteadyNow() - steady, seconds(5));
  EXPECT_TRUE(clock.Manual());
  EXPECT_FALSE(SystemClock().Manual());
}

TEST(ClockTimerTest, AWaitEndsWhenTheClockPassesItsDeadline) {
  asio::io_context ioc;
  FakeClock clock(WallTime{} + hours(100));
  std::optional<bool> reached;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        ClockTimer timer(co_await asio::this_coro::executor, clock);
        reached = co_await timer.WaitFor(seconds(10));
      },
      asio::detached);
  ioc.poll();
  EXPECT_FALSE(reached.has_value());
  EXPECT_EQ(clock.watchers(), 1u);
  clock.Advance(seconds(9));
  ioc.poll();
  EXPECT_FALSE(reached.has_value());  // a second early
  clock.Advance(seconds(1));
  ioc.poll();
  ASSERT_TRUE(reached.has_value());
  EXPECT_TRUE(*reached);
  EXPECT_EQ(clock.watchers(), 0u);  // the wait is over: it no longer watches
}

TEST(ClockTimerTest, WakeEndsAWaitEarlyAndAPastDeadlineDoesNotWait) {
  asio::io_context ioc;
  FakeClock clock(WallTime{} + hours(100));
  ClockTimer timer(ioc.get_executor(), clock);
  std::optional<bool> woken;
  std::optional<bool> past;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        woken = co_await timer.WaitUntil(SteadyTime::max());
        past = co_await timer.WaitUntil(clock.SteadyNow() - seconds(1));
      },
      asio::detached);
  ioc.poll();
  EXPECT_FALSE(woken.has_value());
  clock.Advance(hours(1000));
  ioc.poll();
  EXPECT_FALSE(woken.has_value());  // no deadline: only a Wake ends it
  timer.Wake();
  ioc.poll();
  ASSERT_TRUE(woken.has_value());
  EXPECT_FALSE(*woken);
  ASSERT_TRUE(past.has_value());
  EXPECT_TRUE(*past);
}

TEST(ClockTimerTest, OnTheSystemClockAPastDeadlineCompletes) {
  asio::io_context ioc;
  SystemClock clock;
  std::optional<bool> reached;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        ClockTimer timer(co_await asio::this_coro::executor, clock);
        reached = co_await timer.WaitUntil(clock.SteadyNow() - seconds(1));
      },
      asio::detached);
  ioc.run();
  ASSERT_TRUE(reached.has_value());
  EXPECT_TRUE(*reached);
}

TEST(ClockWaitTest, AThreadWaitEndsWhenTheClockPassesItsDeadlineOrWhenDone) {
  FakeClock clock(WallTime{} + hours(100));
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::optional<bool> result;
  const SteadyTime deadline = clock.SteadyNow() + hours(1);
  std::thread waiter([&] {
    std::unique_lock lock(mu);
    result = clock.WaitUntil(lock, cv, deadline, [&] { return done; });
  });
  while (clock.watchers() == 0) {
    std::this_thread::yield();  // until it waits
  }
  clock.Advance(hours(1) - seconds(1));
  {
    std::lock_guard lock(mu);
    EXPECT_FALSE(result.has_value());  // not yet: a second early
  }
  clock.Advance(seconds(1));
  waiter.join();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(*result);  // timed out

  // Ended by `done`, the clock standing still.
  result.reset();
  std::thread second([&] {
    std::unique_lock lock(mu);
    result = clock.WaitFor(lock, cv, hours(1), [&] { return done; });
  });
  while (clock.watchers() == 0) {
    std::this_thread::yield();
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  second.join();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(*result);
}

}  // namespace
}  // namespace strata
