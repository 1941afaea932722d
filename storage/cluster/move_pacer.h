// MovePacer: holds the background moves of keys (repair, catch-up, drain) to a rate in
// bytes a second, so that a join or a death never takes the disk and the network from the
// requests. Each move charges the bytes it sent; the pacer answers how long to wait before
// the next one. A short burst (kBurst worth of the rate) goes unpaced, so small keys move
// without a wait each. Not thread-safe: one executor's coroutines share it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace strata::storage::cluster {

class MovePacer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kBurst = std::chrono::milliseconds(250);

  // `bytes_per_second` > 0.
  explicit MovePacer(std::uint64_t bytes_per_second) : rate_(bytes_per_second) {}

  // `bytes` were just sent, at `now`: the wait before the next move (zero when the moves
  // so far are within the rate).
  Clock::duration Charge(std::uint64_t bytes, Clock::time_point now) {
    // The time the bytes take at the rate, in nanoseconds; saturating, so an absurd
    // charge waits long instead of wrapping around to nothing.
    const long double ns = static_cast<long double>(bytes) * 1e9L / rate_;
    const auto cost = std::chrono::nanoseconds(ns > 1e18L ? std::int64_t{1'000'000'000'000'000'000}
                                                          : static_cast<std::int64_t>(ns));
    // Idle time banks at most a burst.
    free_at_ = std::max(free_at_, now - kBurst) + cost;
    return free_at_ > now ? free_at_ - now : Clock::duration::zero();
  }

 private:
  const std::uint64_t rate_;
  Clock::time_point free_at_{};  // when the moves charged so far are paid for
};

}  // namespace strata::storage::cluster
