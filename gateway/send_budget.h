// The memory GET responses hold in send blocks, bounded per core.
//
// Each core's sessions run on its one thread, so each core keeps its own count and its
// own budget without locks. Past kSendBudget a GET gets one small block instead of two
// large ones, so memory stays bounded by connections x kMinSendBlock however many
// download at once, while a few large downloads still overlap disk and network with
// full blocks (handlers/object_io.cc). A process-wide total is kept for /metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::gateway {

inline constexpr std::size_t kSendBudget = 32 << 20;  // per core
inline constexpr std::size_t kMinSendBlock = 64 << 10;

// Whether this core may lend `more` bytes of send blocks now.
bool SendBudgetAllows(std::size_t more);

// Bytes of send blocks held now by every core's GETs.
std::uint64_t SendBlockBytes();

// A send block, counted against this core's budget while it lives. Made and destroyed on
// the same core thread (a session never changes thread).
class SendBlock {
 public:
  explicit SendBlock(std::size_t size);
  SendBlock(const SendBlock&) = delete;
  SendBlock& operator=(const SendBlock&) = delete;
  ~SendBlock();

  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
};

}  // namespace strata::gateway
