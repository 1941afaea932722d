// Clock: the one source of time, wall and monotonic, injected so tests advance time instead
// of sleeping. Workers read the time through it and wait on it: a thread with WaitUntil
// (below), a coroutine with ClockTimer (common/clock_timer.h). SystemClock is the real
// time (main passes it); FakeClock moves only when the test says, and every wait on it
// that the move reaches completes.
// Thread-safe: any thread may call every method.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace strata {

using WallTime = std::chrono::system_clock::time_point;
using SteadyTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall time: what records, ETags' dates and queue due times are stamped with.
  virtual WallTime Now() const = 0;
  // Monotonic time: intervals, timeouts, backoff, idle times.
  virtual SteadyTime SteadyNow() const = 0;

  // Whether the time moves only when told to (FakeClock). Waits on such a clock complete
  // from its moves, not from the OS's timers.
  virtual bool Manual() const { return false; }
  // For a manual clock: calls `moved` after every move of its time, on the thread that
  // moved it, until Unwatch(id); Unwatch returns once no call is running. `moved` must not
  // call Watch or Unwatch. A clock whose time moves by itself returns 0 and never calls.
  virtual std::uint64_t Watch(std::function<void()> /*moved*/) const { return 0; }
  virtual void Unwatch(std::uint64_t /*id*/) const {}

  // Blocks on `cv` (`lock` holding its mutex) until `done()` or SteadyNow() >= deadline,
  // and returns done(). Whoever makes done() true notifies `cv` (holding the mutex). Like
  // condition_variable::wait_until, the mutex is released while waiting.
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 SteadyTime deadline, const std::function<bool()>& done) const {
    if (!Manual()) {
      return cv.wait_until(lock, deadline, done);
    }
    // Watch takes the clock's lock, which a move holds while it calls the watchers (and
    // they take ours): never take it while holding ours.
    std::mutex* mu = lock.mutex();
    lock.unlock();
    const std::uint64_t id = Watch([mu, &cv] {
      std::lock_guard wake(*mu);
      cv.notify_all();
    });
    lock.lock();
    cv.wait(lock, [&] { return done() || SteadyNow() >= deadline; });
    lock.unlock();
    Unwatch(id);
    lock.lock();
    return done();
  }
  bool WaitFor(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
               std::chrono::nanoseconds timeout, const std::function<bool()>& done) const {
    return WaitUntil(lock, cv,
                     SteadyNow() + std::chrono::duration_cast<SteadyTime::duration>(timeout), done);
  }

  // The process's system clock, for callers nobody wired a clock into (tools, tests that
  // do not care about time). main passes its own SystemClock.
  static const Clock& System();
};

class SystemClock final : public Clock {
 public:
  WallTime Now() const override { return std::chrono::system_clock::now(); }
  SteadyTime SteadyNow() const override { return std::chrono::steady_clock::now(); }
};

inline const Clock& Clock::System() {
  static const SystemClock clock;
  return clock;
}

// A clock the test sets and advances by hand. Advance moves the wall and the monotonic
// time together; Set moves only the wall time (as an NTP step would). Either wakes every
// wait on the clock.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(WallTime start) : now_(start.time_since_epoch().count()) {}
  WallTime Now() const override { return WallTime(WallTime::duration(now_.load())); }
  SteadyTime SteadyNow() const override { return SteadyTime(SteadyTime::duration(steady_.load())); }
  bool Manual() const override { return true; }
  std::uint64_t Watch(std::function<void()> moved) const override {
    std::lock_guard lock(mu_);
    watchers_.emplace(++next_watch_, std::move(moved));
    return next_watch_;
  }
  void Unwatch(std::uint64_t id) const override {
    std::lock_guard lock(mu_);
    watchers_.erase(id);
  }

  void Set(WallTime t) {
    now_ = t.time_since_epoch().count();
    Moved();
  }
  void Advance(std::chrono::nanoseconds d) {
    now_ += std::chrono::duration_cast<WallTime::duration>(d).count();
    steady_ += std::chrono::duration_cast<SteadyTime::duration>(d).count();
    Moved();
  }
  // Waits registered now (threads in WaitUntil, coroutines in a ClockTimer wait): lets a
  // test advance the time only once a worker is waiting on it.
  std::size_t watchers() const {
    std::lock_guard lock(mu_);
    return watchers_.size();
  }
  // Waits ever registered: one more than before tells that a worker woken by a move has
  // looked at the time and waits again.
  std::uint64_t waits_begun() const {
    std::lock_guard lock(mu_);
    return next_watch_;
  }

 private:
  void Moved() {
    std::lock_guard lock(mu_);
    for (const auto& [id, moved] : watchers_) {
      moved();
    }
  }

  std::atomic<WallTime::rep> now_;
  // Starts an hour in, so that "now minus an interval" stays a valid time point.
  std::atomic<SteadyTime::rep> steady_{
      std::chrono::duration_cast<SteadyTime::duration>(std::chrono::hours(1)).count()};
  mutable std::mutex mu_;  // guards watchers_ and next_watch_
  mutable std::map<std::uint64_t, std::function<void()>> watchers_;
  mutable std::uint64_t next_watch_ = 0;
};

}  // namespace strata
