// The counters of the storage engine's background work, as /metrics and the admin API
// read them: plain values, copied out under each worker's own lock. Which worker fills
// which struct: TierCacheStats (tier_caches.h), LifecycleStats (lifecycle_worker.h),
// PrefetchStats (prefetch_jobs.h), ScrubStats (scrubber.h), FetchStats (fetcher.h),
// WritebackStats (writeback.h); EngineStats gathers them (storage/tier_engine.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::storage {

struct TierCacheStats {
  std::string tier;
  std::uint64_t capacity = 0;
  std::int64_t used = 0;        // bytes, as of the last pass
  std::uint64_t resident = 0;   // copies the policy tracks
  std::uint64_t evictions = 0;  // copies evicted
  std::uint64_t evicted_bytes = 0;
  std::uint64_t admitted = 0;  // read-through fills cached
  std::uint64_t refused = 0;   // read-through fills streamed without caching
  std::uint64_t blocked = 0;   // passes that ended above the low mark: no clean copy left
};

struct LifecycleStats {
  std::uint64_t passes = 0;
  std::uint64_t transitions = 0;
  std::uint64_t expirations = 0;  // versions and delete markers removed or expired
  std::uint64_t aborted_uploads = 0;
  std::uint64_t rows = 0;  // due rows handled
  std::uint64_t errors = 0;
};

struct PrefetchStats {
  std::uint64_t jobs_started = 0;  // bulk
  std::uint64_t learned_started = 0;
  std::uint64_t fetched = 0;  // copies made by either kind
  std::uint64_t fetched_bytes = 0;
};

struct ScrubStats {
  bool running = false;                // a pass is under way
  std::uint64_t passes_completed = 0;  // since start
  // Totals since start, over every pass.
  std::uint64_t objects = 0;  // versions looked at
  std::uint64_t chunks = 0;   // 64 KiB chunks read and verified
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;         // versions found damaged (chunk, trailer or record)
  std::uint64_t repaired = 0;       // of those, replaced by a verified copy
  std::uint64_t unrepairable = 0;   // of those, the only copy (dirty)
  std::uint64_t repair_failed = 0;  // of those, not repaired for another reason (logged)
  // The current pass (or the last one when none runs).
  std::uint64_t pass_objects_total = 0;
  std::uint64_t pass_objects_done = 0;
  std::int64_t last_started_ms = 0;   // Unix ms; 0: never
  std::int64_t last_finished_ms = 0;  // Unix ms; 0: none finished
};

struct FetchStats {
  std::uint64_t fetched = 0;  // versions given a local copy
  std::uint64_t fetched_bytes = 0;
  std::uint64_t skipped = 0;  // had a local copy already, or changed meanwhile
  std::uint64_t failed = 0;
  std::uint64_t in_flight = 0;
  std::uint64_t waiting = 0;
};

struct WritebackStats {
  std::uint64_t pushes = 0;    // successful pushes (PUTs and DELETEs)
  std::uint64_t failures = 0;  // failed push attempts
  // enqueued_ms of the oldest item at the last look (every tick, or every 10 s past
  // 10,000 items); 0 when the queue was empty.
  std::int64_t oldest_enqueued_ms = 0;
};

// Everything above at one moment; a worker the configuration has none of is nullopt.
struct EngineStats {
  std::vector<TierCacheStats> tier_caches;  // local tiers with a capacity
  std::optional<LifecycleStats> lifecycle;
  std::optional<ScrubStats> scrub;
  std::optional<FetchStats> fetch;          // with an s3 tier
  std::optional<PrefetchStats> prefetch;    // with an s3 tier
  std::optional<WritebackStats> writeback;  // with an s3 tier
};

}  // namespace strata::storage
