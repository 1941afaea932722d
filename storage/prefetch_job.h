// PrefetchJobInfo: what the admin API shows of a prefetch job (bulk or learned), as the
// tier engine reports it (TierEngine::StartPrefetch and friends; the jobs themselves are
// storage's private PrefetchJobs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::storage {

enum class PrefetchState { kRunning, kDone, kCancelled, kFailed };
std::string_view PrefetchStateName(PrefetchState state);

struct PrefetchJobInfo {
  std::uint64_t id = 0;
  std::string bucket;
  std::string prefix;
  bool learned = false;
  std::uint64_t budget = 0;  // bytes
  PrefetchState state = PrefetchState::kRunning;
  std::uint64_t listed = 0;         // keys the listing showed
  std::uint64_t already_local = 0;  // had a local copy
  std::uint64_t queued = 0;         // fetches queued
  std::uint64_t queued_bytes = 0;   // what the budget counts
  std::uint64_t fetched = 0;        // fetches that made a local copy
  std::uint64_t fetched_bytes = 0;
  std::uint64_t skipped = 0;  // queued, then found local or changed
  std::uint64_t failed = 0;
  // Stopped before the end of the listing: the budget, or (learned) the room ran out.
  bool budget_reached = false;
  std::string error;            // kFailed: why
  std::int64_t started_ms = 0;  // wall time
  std::int64_t ended_ms = 0;    // 0 while running
};

}  // namespace strata::storage
