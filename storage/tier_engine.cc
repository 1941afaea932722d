#include "storage/tier_engine.h"

#include <spdlog/spdlog.h>

#include "storage/engine/cold_reads.h"
#include "storage/engine/lifecycle_worker.h"
#include "storage/engine/prefetch_jobs.h"
#include "storage/engine/scrubber.h"
#include "storage/engine/tier_caches.h"
#include "storage/upstream/copy_flights.h"
#include "storage/upstream/fetcher.h"
#include "storage/upstream/repairer.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/upstream_tier.h"
#include "storage/upstream/writeback.h"

namespace strata::storage {
namespace {

// The write-back options of the `s3` tier `cold`: the delay, and the storage classes that
// name it (a version of such a class drops its local copy once pushed).
WritebackOptions WritebackOptionsFor(const Config& config, const TierConfig& cold) {
  WritebackOptions options{.delay = config.writeback.delay};
  for (const auto& [cls, tier] : config.storage_classes) {
    if (tier == cold.name) {
      options.cold_classes.insert(cls);
    }
  }
  return options;
}

}  // namespace

Result<std::unique_ptr<TierEngine>> TierEngine::Open(const Config& config, metadata::Index& index,
                                                     const Clock& clock,
                                                     boost::asio::thread_pool& blocking_pool) {
  std::unique_ptr<TierEngine> engine(new TierEngine());
  engine->config_ = &config;
  engine->index_ = &index;
  engine->clock_ = &clock;
  engine->blocking_pool_ = &blocking_pool;
  // The upstream objects being copied onto the hot tier now, by read-through GETs and the
  // fetcher alike: one copy of a key at a time.
  engine->flights_ = std::make_unique<CopyFlights>();
  auto store = ObjectStore::Open(config, index, SweepOptions{}, clock);
  if (!store.ok()) {
    return std::move(store).error();
  }
  engine->store_ = std::move(store).value();
  ObjectStore& objects = *engine->store_;

  // The cold tier: an upstream S3 store, the worker writing the queue back to it, and the
  // fetcher that copies its objects onto the hot tier (restore, prefetch, repair).
  if (const TierConfig* cold = config.UpstreamTier()) {
    auto made = Upstream::Create(*cold);
    if (!made.ok()) {
      return std::move(made).error();
    }
    engine->upstream_ = std::move(made).value();
    // Its spool (for BeginWrite, which the write-back push does not use: it sends from the
    // local copy) is the hot tier's tmp/, where an interrupted spool is cleared at open.
    const TierConfig* hot = config.HotTier();
    engine->upstream_tier_ = std::make_unique<UpstreamTier>(
        *engine->upstream_, hot != nullptr ? hot->path + "/tmp" : std::string("/tmp"));
    engine->writeback_ = std::make_unique<WritebackWorker>(
        index, objects, *engine->upstream_tier_, WritebackOptionsFor(config, *cold), clock);
    engine->fetcher_ = std::make_unique<Fetcher>(
        objects, *engine->upstream_, *engine->upstream_tier_,
        FetchOptions{.concurrency = config.prefetch.concurrency}, clock, engine->flights_.get());
    const auto backlog = index.WritebackBacklog();
    spdlog::info("upstream: tier {} at {}; write-back delay {} ms, backlog {} objects, {} bytes",
                 cold->name, cold->endpoint, config.writeback.delay.count(), backlog.objects,
                 backlog.bytes);
  }

  // Read repair: a damaged local copy of a version the upstream has is fetched again.
  if (engine->fetcher_) {
    engine->repairer_ =
        std::make_unique<UpstreamRepairer>(*engine->fetcher_, engine->upstream_->tier_name());
  } else {
    engine->repairer_ = std::make_unique<NoRepairer>();
  }
  objects.SetRepairer(engine->repairer_.get());

  // Capacity: admission and eviction on the local tiers that have a capacity. The store
  // reports every copy that lands to it, from any thread that moves data.
  engine->tier_caches_ =
      std::make_unique<TierCaches>(config, index, objects, TierCacheOptions{}, clock);
  objects.SetResidencyListener(
      [caches = engine->tier_caches_.get()](const metadata::ObjectRecord& record) {
        caches->OnResident(record);
      });

  // Prefetch jobs run on the fetcher's thread.
  if (engine->fetcher_) {
    engine->prefetch_ = std::make_unique<PrefetchJobs>(
        config, clock, index, objects, *engine->fetcher_, engine->tier_caches_.get());
  }
  // Reads of bound buckets that reach the upstream: read-through, evicted versions,
  // revalidation, merged listings, adoption.
  if (engine->upstream_) {
    engine->cold_reads_ = std::make_unique<ColdReads>(ColdReadParts{
        .config = config,
        .clock = clock,
        .index = index,
        .store = objects,
        .upstream = *engine->upstream_,
        .tier_caches = engine->tier_caches_.get(),
        .prefetch = engine->prefetch_.get(),
        .flights = *engine->flights_,
        .blocking_pool = blocking_pool,
    });
  }
  // Lifecycle rules, applied from the index's due-time queue every [lifecycle] interval.
  engine->lifecycle_ = std::make_unique<LifecycleWorker>(config, index, objects, clock);
  // Every local copy verified in the background at [scrub] bytes_per_second.
  engine->scrubber_ =
      std::make_unique<Scrubber>(config.scrub, index, objects, *engine->repairer_, clock);
  return engine;
}

void TierEngine::SetSteward(KeySteward* steward) {
  if (writeback_) {
    writeback_->SetSteward(steward);
  }
  lifecycle_->SetSteward(steward);
}

void TierEngine::Start() {
  if (writeback_) {
    writeback_->Start();
  }
  if (fetcher_) {
    fetcher_->Start();
  }
  lifecycle_->Start();
  tier_caches_->Start();
  scrubber_->Start();
}

void TierEngine::Stop() {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  if (store_) {
    store_->SetRepairer(nullptr);
  }
  if (scrubber_) {
    scrubber_->Stop();  // it waits on repairs, which the fetcher runs
  }
  // The prefetch jobs run on the fetcher's thread: stopped (cancelled, waited for) while
  // it runs; the fetcher then cancels the fetches they queued, whose answers still reach
  // the jobs' counters; only then may those go.
  cold_reads_.reset();  // it reaches the prefetch jobs, which go next
  if (prefetch_) {
    prefetch_->Stop();
  }
  fetcher_.reset();
  prefetch_.reset();
  // Before the cluster stops: in one, its passes sync their changes there. (Absent when
  // Open failed before making it.)
  if (lifecycle_) {
    lifecycle_->Stop();
  }
  // The write-back worker's thread uses the upstream's client of that thread: stopped
  // (its pushes cancelled, their items kept queued) before the clients go.
  writeback_.reset();
  if (upstream_) {
    upstream_->ReleaseClients();  // the I/O threads' clients, before their io_contexts go
  }
}

TierEngine::~TierEngine() {
  Stop();
  // Whatever still commits copies (lifecycle moves) stops before the listener's tier
  // caches go.
  lifecycle_.reset();
  scrubber_.reset();
  if (store_) {
    store_->SetResidencyListener(nullptr);
  }
  tier_caches_.reset();
  repairer_.reset();
  upstream_tier_.reset();
  upstream_.reset();
}

EngineStats TierEngine::Stats() const {
  EngineStats stats;
  if (tier_caches_) {
    stats.tier_caches = tier_caches_->stats();
  }
  if (lifecycle_) {
    stats.lifecycle = lifecycle_->stats();
  }
  if (scrubber_) {
    stats.scrub = scrubber_->stats();
  }
  if (fetcher_) {
    stats.fetch = fetcher_->stats();
  }
  if (prefetch_) {
    stats.prefetch = prefetch_->stats();
  }
  if (writeback_) {
    stats.writeback = writeback_->stats();
  }
  return stats;
}

}  // namespace strata::storage
