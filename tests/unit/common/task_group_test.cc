// TaskGroup: counts, cancellation reaching a waiting task, Wait and Join, refusal after
// Close. Everything runs on io_contexts the test drives; nothing sleeps.
#include "common/task_group.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/clock_timer.h"

namespace strata {
namespace {

namespace asio = boost::asio;

// Waits for `timer` to be cancelled or to expire; records how it ended.
asio::awaitable<void> WaitOn(asio::steady_timer& timer, int& finished,
                             boost::system::error_code& ended) {
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  ended = ec;
  ++finished;
}

TEST(TaskGroupTest, CountsTasksUntilTheyFinish) {
  asio::io_context ioc;
  TaskGroup group;
  asio::steady_timer gate(ioc, asio::steady_timer::time_point::max());
  int finished = 0;
  boost::system::error_code ended;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(gate, finished, ended)));
  }
  EXPECT_EQ(group.size(), 3u);
  ioc.poll();  // all three wait on the gate now
  EXPECT_EQ(finished, 0);
  EXPECT_EQ(group.size(), 3u);
  gate.cancel_one();
  ioc.poll();
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(group.size(), 2u);
  gate.cancel();
  ioc.poll();
  EXPECT_EQ(finished, 3);
  EXPECT_EQ(group.size(), 0u);
}

// A task spawned without a cancellation slot (an accept loop, ended by closing its
// acceptor) is counted like any other, and Cancel does not reach it.
TEST(TaskGroupTest, CancelDoesNotReachAnUncancellableTask) {
  asio::io_context ioc;
  TaskGroup group;
  asio::steady_timer gate(ioc, asio::steady_timer::time_point::max());
  int finished = 0;
  boost::system::error_code ended;
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(gate, finished, ended),
                          /*cancellable=*/false));
  ioc.poll();
  group.Cancel();
  ioc.poll();
  EXPECT_EQ(finished, 0);
  EXPECT_EQ(group.size(), 1u);
  gate.cancel();  // its owner's own way of ending it
  ioc.poll();
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroupTest, CancelReachesATaskWaitingOnATimer) {
  asio::io_context ioc;
  TaskGroup group;
  asio::steady_timer timer(ioc, std::chrono::hours(24));
  int finished = 0;
  boost::system::error_code ended;
  bool after_cancel = false;
  auto task = [&]() -> asio::awaitable<void> {
    co_await WaitOn(timer, finished, ended);
    // A cancelled coroutine's next co_await throws: it ends here.
    asio::steady_timer again(co_await asio::this_coro::executor, std::chrono::hours(24));
    co_await again.async_wait(asio::use_awaitable);
    after_cancel = true;
  };
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), task()));
  ioc.poll();
  ASSERT_EQ(finished, 0);
  group.Cancel();
  ioc.run();  // returns once the cancelled task is gone: nothing else holds the context
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(ended, asio::error::operation_aborted);
  EXPECT_FALSE(after_cancel);
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroupTest, CancelReachesAClockTimerWaitAndLaterSpawns) {
  asio::io_context ioc;
  FakeClock clock(WallTime{} + std::chrono::hours(1000));
  TaskGroup group;
  int results = 0;
  bool reached = true;
  auto task = [&]() -> asio::awaitable<void> {
    ClockTimer timer(co_await asio::this_coro::executor, clock);
    reached = co_await timer.WaitFor(std::chrono::hours(1));
    ++results;
  };
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), task()));
  ioc.poll();
  EXPECT_EQ(results, 0);
  group.Cancel();
  ioc.poll();
  EXPECT_EQ(results, 1);
  EXPECT_FALSE(reached);  // cancelled, not timed out: the clock never moved
  // Spawned after Cancel (before Close): cancelled as well.
  reached = true;
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), task()));
  ioc.restart();  // it ran out of work
  ioc.poll();
  EXPECT_EQ(results, 2);
  EXPECT_FALSE(reached);
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroupTest, WaitCompletesWhenTheLastTaskEnds) {
  asio::io_context ioc;
  TaskGroup group;
  asio::steady_timer gate(ioc, asio::steady_timer::time_point::max());
  int finished = 0;
  boost::system::error_code ended;
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(gate, finished, ended)));
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(gate, finished, ended)));
  bool waited = false;
  int finished_when_waited = -1;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        co_await group.Wait();
        waited = true;
        finished_when_waited = finished;
      },
      asio::detached);
  ioc.poll();
  EXPECT_FALSE(waited);
  gate.cancel_one();
  ioc.poll();
  EXPECT_FALSE(waited);  // one task still counted
  gate.cancel_one();
  ioc.poll();
  EXPECT_TRUE(waited);
  EXPECT_EQ(finished_when_waited, 2);

  // With nothing counted, Wait completes at once.
  bool again = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        co_await group.Wait();
        again = true;
      },
      asio::detached);
  ioc.restart();  // it ran out of work
  ioc.poll();
  EXPECT_TRUE(again);
}

TEST(TaskGroupTest, SpawnAfterCloseIsRefusedAndNeverRuns) {
  asio::io_context ioc;
  TaskGroup group;
  group.Close();
  EXPECT_TRUE(group.closed());
  bool ran = false;
  auto task = [&]() -> asio::awaitable<void> {
    ran = true;
    co_return;
  };
  EXPECT_FALSE(group.Spawn(ioc.get_executor(), task()));
  ioc.run();
  EXPECT_FALSE(ran);
  EXPECT_EQ(group.size(), 0u);
}

TEST(TaskGroupTest, JoinWaitsForTasksOnAnotherThread) {
  asio::io_context ioc;
  TaskGroup group;
  asio::steady_timer timer(ioc, std::chrono::hours(24));
  int finished = 0;
  boost::system::error_code ended;
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(timer, finished, ended)));
  std::thread runner([&] { ioc.run(); });
  // A deadline already past: the task still runs.
  EXPECT_FALSE(group.JoinUntil(std::chrono::steady_clock::now()));
  // Shutdown: stop accepting, cancel, wait.
  group.Close();
  group.Cancel();
  group.Join();
  EXPECT_EQ(group.size(), 0u);
  runner.join();  // the context ran out of work
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(ended, asio::error::operation_aborted);
}

TEST(TaskGroupTest, ATaskDestroyedWithItsContextIsUncounted) {
  TaskGroup group;
  int finished = 0;
  boost::system::error_code ended;
  {
    asio::io_context ioc;
    asio::steady_timer timer(ioc, std::chrono::hours(24));
    ASSERT_TRUE(group.Spawn(ioc.get_executor(), WaitOn(timer, finished, ended)));
    ioc.poll();
    EXPECT_EQ(group.size(), 1u);
  }
  EXPECT_EQ(group.size(), 0u);
  EXPECT_EQ(finished, 0);
}

TEST(TaskGroupTest, AThrowingTaskIsUncounted) {
  asio::io_context ioc;
  TaskGroup group;
  auto task = []() -> asio::awaitable<void> {
    throw std::runtime_error("boom");
    co_return;
  };
  ASSERT_TRUE(group.Spawn(ioc.get_executor(), task()));
  ioc.run();
  EXPECT_EQ(group.size(), 0u);
}

}  // namespace
}  // namespace strata
