// TierEngine: the storage engine as one thing, the entry the gateway holds (DESIGN.md
// "Layout": handlers call the tier engine for bytes). It owns the object store over the
// local tiers and, with an `s3` tier, the upstream with its write-back worker and fetcher,
// plus capacity (admission and eviction), read repair, prefetch, lifecycle and the
// scrubber, wired in the one order their lifetimes need; main builds it with Open and
// nothing outside storage names those classes to construct them.
//
// This is the first step of the engine of issue 18: it owns and orders the engine's parts
// and reports their counters as one EngineStats. The request path still reaches a few
// parts through the accessors below (read-through, restore, the admin endpoints); each
// such use moves behind a method here as the read path moves into storage.
//
// Lifetime: Open, then Start once the server accepts, then Stop after the server stopped
// and before the index closes (the destructor stops too). Accessors and Stats are
// thread-safe (every part is); Start and Stop are for main's thread.
#pragma once

#include <memory>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/object_store.h"

namespace strata::storage {

class Upstream;
class WritebackWorker;
class Fetcher;
class CopyRepairer;
class TierCaches;
class PrefetchJobs;
class LifecycleWorker;
class Scrubber;

class TierEngine {
 public:
  // Opens the store on the local tiers (creating their directories, sweeping orphans) and
  // builds the background parts the configuration asks for; none runs before Start.
  // `config`, `index` and `clock` outlive the engine. Errors name what failed: the local
  // tiers, or an `s3` tier's endpoint.
  static Result<std::unique_ptr<TierEngine>> Open(const Config& config, metadata::Index& index,
                                                  const Clock& clock);
  ~TierEngine();
  TierEngine(const TierEngine&) = delete;
  TierEngine& operator=(const TierEngine&) = delete;

  // Starts the background work: write-back, fetches, lifecycle, eviction, scrubbing.
  void Start();
  // Stops it, in dependency order (the scrubber waits on repairs the fetcher runs; prefetch
  // jobs run on the fetcher's thread; upstream clients go before their io_contexts).
  // Idempotent.
  void Stop();

  ObjectStore& store() { return *store_; }
  // Counters of every part, for /metrics.
  EngineStats Stats() const;

  // The parts the request path still reaches directly; nullptr when the configuration has
  // none (no `s3` tier: no upstream, write-back, fetcher or prefetch; no capacity on any
  // local tier: tier_caches still exists and admits everything).
  Upstream* upstream() const { return upstream_.get(); }
  WritebackWorker* writeback() const { return writeback_.get(); }
  Fetcher* fetcher() const { return fetcher_.get(); }
  TierCaches* tier_caches() const { return tier_caches_.get(); }
  PrefetchJobs* prefetch() const { return prefetch_.get(); }
  LifecycleWorker* lifecycle() const { return lifecycle_.get(); }
  Scrubber* scrubber() const { return scrubber_.get(); }

 private:
  TierEngine() = default;

  bool stopped_ = false;
  // Declared in construction order; destroyed in reverse, after Stop.
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<Upstream> upstream_;
  std::unique_ptr<WritebackWorker> writeback_;
  std::unique_ptr<Fetcher> fetcher_;
  std::unique_ptr<CopyRepairer> repairer_;
  std::unique_ptr<TierCaches> tier_caches_;
  std::unique_ptr<PrefetchJobs> prefetch_;
  std::unique_ptr<LifecycleWorker> lifecycle_;
  std::unique_ptr<Scrubber> scrubber_;
};

}  // namespace strata::storage
