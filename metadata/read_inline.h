// Index reads from the I/O threads, which must never wait on a disk.
//
// MemoryOnlyReads: while one lives on a thread, the index's reads on that thread are
// served from memory only (RocksDB's memtables and block cache: ReadTier
// kBlockCacheTier); a read that would need a block from disk fails at once instead (with
// kUnavailable) and the scope notes it: needed_disk(). Scopes nest and are per thread, so
// one never lives across a co_await.
// Only reads honour it: the writing methods must not run inside a scope (the reads they
// make under their key lock would fail half-way); they run on the blocking pool anyway.
//
// ReadInline(pool, read): runs `read` (a pure index read, any result type) inline in
// such a scope, and, when it needed the disk, again on the blocking pool. A GET of a hot
// key reads its bucket and version inline (the rows are cached: a few microseconds, no
// hop between threads); a cold row costs one hop. ReadInlineCounts says how often each
// happened (/metrics: strata_index_reads_total{path}).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/offload.h"

namespace strata::metadata {

class MemoryOnlyReads {
 public:
  MemoryOnlyReads() : outer_active_(active_), outer_missed_(missed_) {
    active_ = true;
    missed_ = false;
  }
  ~MemoryOnlyReads() {
    active_ = outer_active_;
    missed_ = outer_active_ && (outer_missed_ || missed_);
  }
  MemoryOnlyReads(const MemoryOnlyReads&) = delete;
  MemoryOnlyReads& operator=(const MemoryOnlyReads&) = delete;

  // Whether the calling thread is inside a scope.
  static bool active() { return active_; }
  // Whether a read in this scope (on this thread, since it began) failed for want of a
  // disk read: its result says nothing of the index, do it again outside a scope.
  bool needed_disk() const { return missed_; }
  // Called by the index when a read in a scope would have read the disk.
  static void NoteDiskNeeded() { missed_ = true; }

 private:
  bool outer_active_;
  bool outer_missed_;
  static thread_local bool active_;
  static thread_local bool missed_;
};

struct InlineReadCounts {
  std::uint64_t memory = 0;  // served inline from memory
  std::uint64_t pool = 0;    // needed the disk: read again on the blocking pool
};
InlineReadCounts ReadInlineCounts();

namespace internal {
extern std::atomic<std::uint64_t> inline_reads_memory;
extern std::atomic<std::uint64_t> inline_reads_pool;
}  // namespace internal

template <typename Read>
boost::asio::awaitable<std::invoke_result_t<Read&>> ReadInline(boost::asio::thread_pool& pool,
                                                               Read read) {
  // GCC 12 destroys a temporary passed into a coroutine twice when it owns memory (a
  // lambda capturing a string by value): capture references only.
  static_assert(std::is_trivially_destructible_v<Read>,
                "ReadInline's read must capture by reference only");
  {
    MemoryOnlyReads memory_only;
    auto result = read();
    if (!memory_only.needed_disk()) {
      internal::inline_reads_memory.fetch_add(1, std::memory_order_relaxed);
      co_return result;
    }
  }
  internal::inline_reads_pool.fetch_add(1, std::memory_order_relaxed);
  co_return co_await Offload(pool, std::move(read));
}

}  // namespace strata::metadata
