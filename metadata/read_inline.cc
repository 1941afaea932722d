#include "metadata/read_inline.h"

namespace strata::metadata {

thread_local bool MemoryOnlyReads::active_ = false;
thread_local bool MemoryOnlyReads::missed_ = false;

namespace internal {
std::atomic<std::uint64_t> inline_reads_memory{0};
std::atomic<std::uint64_t> inline_reads_pool{0};
}  // namespace internal

InlineReadCounts ReadInlineCounts() {
  return {internal::inline_reads_memory.load(std::memory_order_relaxed),
          internal::inline_reads_pool.load(std::memory_order_relaxed)};
}

}  // namespace strata::metadata
