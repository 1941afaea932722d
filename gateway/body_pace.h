// BodyPace: the minimum transfer rate a request body is held to. Each byte resetting an
// idle timer lets a client trickle a body a byte a second and hold a connection (and
// a file being written) for ever; instead the time a body may take grows with what
// it has delivered: a grace period plus one second per `min_rate` bytes, as Apache's
// mod_reqtimeout does. Only the time spent waiting for the client counts, so a
// server busy between reads (an fsync, a full disk queue) never cuts off a client
// that kept up. Pure arithmetic on durations the session measures; one per request,
// on its connection's thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace strata::gateway {

class BodyPace {
 public:
  using Duration = std::chrono::steady_clock::duration;

  // min_rate 0: no minimum (Allowance is always `cap`).
  BodyPace(std::uint64_t min_rate_bytes_per_s, Duration grace)
      : min_rate_(min_rate_bytes_per_s), grace_(grace) {}

  // How long the next read may wait, at most `cap` (the idle timeout): once it passes,
  // the body has averaged less than the minimum rate. Zero when it already has.
  Duration Allowance(Duration cap) const;

  // One read: waited this long and got `bytes`.
  void Record(Duration waited, std::uint64_t bytes) {
    waited_ += waited;
    bytes_ += bytes;
  }

 private:
  std::uint64_t min_rate_;
  Duration grace_;
  Duration waited_{0};
  std::uint64_t bytes_ = 0;
};

}  // namespace strata::gateway
