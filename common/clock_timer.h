// ClockTimer: a coroutine's wait on a Clock's monotonic time. With a clock whose time moves
// by itself (SystemClock) it is an asio::steady_timer; with a manual one (FakeClock) the
// wait completes when the test moves the clock past the deadline. Wake() ends a wait early
// (an event: "something changed, look again"), and so does cancellation of the waiting
// coroutine (TaskGroup::Cancel), as for any Asio operation.
//
// Not thread-safe: made and used on its executor's thread (one io_context run by one
// thread); the clock outlives it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

#include "common/clock.h"

namespace strata {

class ClockTimer {
 public:
  ClockTimer(boost::asio::any_io_executor executor, const Clock& clock)
      : clock_(clock), state_(std::make_shared<State>(executor)) {}
  ~ClockTimer() = default;
  ClockTimer(const ClockTimer&) = delete;
  ClockTimer& operator=(const ClockTimer&) = delete;

  // Waits until the clock reaches `deadline` (true), or Wake() or cancellation (false).
  // SteadyTime::max() waits for a Wake only.
  boost::asio::awaitable<bool> WaitUntil(SteadyTime deadline) {
    std::shared_ptr<State> state = state_;
    boost::system::error_code ec;
    if (!clock_.Manual()) {
      state->timer.expires_at(deadline);
      co_await state->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      co_return !ec;
    }
    state->fired = false;
    state->deadline = deadline;
    state->timer.expires_at(boost::asio::steady_timer::time_point::max());
    // Each move of the clock looks, on this timer's thread, whether the deadline passed.
    const Clock& clock = clock_;
    const std::uint64_t watch =
        clock.Watch([weak = std::weak_ptr<State>(state), executor = state->executor, &clock] {
          boost::asio::post(executor, [weak, &clock] {
            std::shared_ptr<State> s = weak.lock();
            if (s && !s->fired && clock.SteadyNow() >= s->deadline) {
              s->fired = true;
              s->timer.cancel();
            }
          });
        });
    // Also when a cancelled coroutine unwinds from the co_await below.
    struct Unwatch {
      const Clock& clock;
      std::uint64_t id;
      ~Unwatch() { clock.Unwatch(id); }
    } unwatch{clock, watch};
    // A move between Watch and here posted its look, which runs once this coroutine waits.
    if (clock.SteadyNow() < deadline) {
      co_await state->timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    } else {
      state->fired = true;
    }
    state->deadline = SteadyTime::max();
    co_return state->fired;
  }
  boost::asio::awaitable<bool> WaitFor(SteadyTime::duration timeout) {
    return WaitUntil(clock_.SteadyNow() + timeout);
  }

  // Ends the wait in progress, if any (it returns false).
  void Wake() { state_->timer.cancel(); }

 private:
  // Shared with the looks a clock move posts, which may run after the timer is gone.
  struct State {
    explicit State(boost::asio::any_io_executor ex) : executor(ex), timer(ex) {}
    boost::asio::any_io_executor executor;
    boost::asio::steady_timer timer;
    SteadyTime deadline = SteadyTime::max();
    bool fired = false;
  };

  const Clock& clock_;
  std::shared_ptr<State> state_;
};

}  // namespace strata
