#include "gateway/body_pace.h"

#include <algorithm>

namespace strata::gateway {

BodyPace::Duration BodyPace::Allowance(Duration cap) const {
  if (min_rate_ == 0) {
    return cap;
  }
  using std::chrono::duration_cast;
  // bytes / rate seconds, in the clock's ticks without overflow for any body size.
  const auto earned = duration_cast<Duration>(
      std::chrono::duration<double>(static_cast<double>(bytes_) / static_cast<double>(min_rate_)));
  const Duration budget = grace_ + earned;
  if (budget <= waited_) {
    return Duration::zero();
  }
  return std::min(cap, budget - waited_);
}

}  // namespace strata::gateway
