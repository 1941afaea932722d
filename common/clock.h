// Clock: the one source of wall time, injected so tests advance time instead of sleeping.
// Thread-safe: any thread may call Now().
#pragma once

#include <atomic>
#include <chrono>

namespace strata {

using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual WallTime Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  WallTime Now() const override { return std::chrono::system_clock::now(); }
};

// A clock the test sets and advances by hand.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(WallTime start) : now_(start.time_since_epoch().count()) {}
  WallTime Now() const override { return WallTime(WallTime::duration(now_.load())); }
  void Set(WallTime t) { now_ = t.time_since_epoch().count(); }
  void Advance(std::chrono::nanoseconds d) {
    now_ += std::chrono::duration_cast<WallTime::duration>(d).count();
  }

 private:
  std::atomic<WallTime::rep> now_;
};

}  // namespace strata
