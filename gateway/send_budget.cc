#include "gateway/send_budget.h"

#include <atomic>

namespace strata::gateway {
namespace {

thread_local std::size_t t_core_bytes = 0;
std::atomic<std::uint64_t> g_total_bytes{0};

}  // namespace

bool SendBudgetAllows(std::size_t more) { return t_core_bytes + more <= kSendBudget; }

std::uint64_t SendBlockBytes() { return g_total_bytes.load(std::memory_order_relaxed); }

SendBlock::SendBlock(std::size_t size) : bytes_(size) {
  t_core_bytes += size;
  g_total_bytes.fetch_add(size, std::memory_order_relaxed);
}

SendBlock::~SendBlock() {
  t_core_bytes -= bytes_.size();
  g_total_bytes.fetch_sub(bytes_.size(), std::memory_order_relaxed);
}

}  // namespace strata::gateway
