#include "gateway/body_pace.h"

namespace strata::gateway {

BodyPace::Duration BodyPace::Allowance(Duration cap) const {
  if (min_rate_ == 0) {
    return cap;
  }
  using Seconds = std::chrono::duration<double>;
  // In floating seconds: bytes / rate of a large body at a low rate overflows the clock's
  // 64-bit nanoseconds.
  const double left = Seconds(grace_).count() +
                      static_cast<double>(bytes_) / static_cast<double>(min_rate_) -
                      Seconds(waited_).count();
  if (left <= 0) {
    return Duration::zero();
  }
  if (left >= Seconds(cap).count()) {
    return cap;
  }
  return std::chrono::duration_cast<Duration>(Seconds(left));
}

}  // namespace strata::gateway
