// strata: the gateway binary. Wires the concrete classes together (the only place that
// does) and serves until SIGTERM/SIGINT.
#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "auth/verifier.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "common/task_group.h"
#include "gateway/credentials.h"
#include "gateway/server.h"
#include "gateway/services.h"
#include "gateway/xml_budget.h"
#include "metadata/index.h"
#include "storage/data_path.h"
#include "storage/engine/lifecycle_worker.h"
#include "storage/engine/prefetch_jobs.h"
#include "storage/engine/scrubber.h"
#include "storage/engine/tier_caches.h"
#include "storage/object_store.h"
#include "storage/upstream/fetcher.h"
#include "storage/upstream/repairer.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/writeback.h"

namespace {

int Usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: strata [--config FILE] [--check]\n"
               "  --config FILE  the TOML configuration (default: the embedded conf/strata.toml)\n"
               "  --check        validate the configuration and exit\n");
  return code;
}

// Threads of the pool that runs blocking calls (fsyncs, synced index writes). They wait on
// the device, not the CPU, and a device keeps many syncs in flight at once (the journal
// commits them together): with 4 threads, 64 connections' PUTs queued behind 4 fsyncs at a
// time. As wide as the concurrent writes a host sees; idle threads cost only their stacks.
constexpr int kBlockingThreads = 64;

int Fail(const std::string& message) {
  std::fprintf(stderr, "strata: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace strata;
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--check") {
      check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      return Usage(0);
    } else {
      return Usage(2);
    }
  }

  auto config = config_path.empty()
                    ? ParseConfig(EmbeddedDefaultConfig(), "<embedded conf/strata.toml>")
                    : LoadConfigFile(config_path);
  if (!config.ok()) {
    return Fail(config.error().message);
  }
  if (check_only) {
    std::printf("configuration ok\n");
    return 0;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  if (!SetLogLevel(config->server.log_level)) {
    return Fail("server.log_level: unknown level");
  }

  std::error_code ec;
  std::filesystem::create_directories(config->server.data_dir, ec);
  if (ec) {
    return Fail("server.data_dir: cannot create " + config->server.data_dir + ": " + ec.message());
  }
  // The one clock every worker reads and waits on.
  SystemClock clock;
  auto index = metadata::Index::Open(
      config->server.data_dir + "/index",
      metadata::IndexOptions{.sync = config->server.fsync,
                             .lifecycle_day_ms = config->lifecycle.day.count(),
                             .block_cache_bytes = config->server.index_cache_bytes,
                             .clock = &clock});
  if (!index.ok()) {
    return Fail("cannot open the index: " + index.error().message);
  }
  auto store = storage::ObjectStore::Open(*config, **index, storage::SweepOptions{}, clock);
  if (!store.ok()) {
    return Fail("cannot open the storage engine: " + store.error().message);
  }
  // io_uring when configured and the kernel allows it, else pread/pwrite; logs which.
  storage::SelectDataPath(config->server.io_uring);

  gateway::SetXmlBudget(config->server.xml_memory_bytes);

  gateway::IndexCredentialStore credentials(*config, **index);
  auth::Verifier verifier(credentials, clock,
                          auth::VerifierOptions{.region = config->server.region});
  boost::asio::thread_pool blocking_pool(kBlockingThreads);
  gateway::Services services{*config, clock, **index, **store, verifier, blocking_pool};
  // Read-through fills committed after their answer; the server waits for them on stop.
  TaskGroup background;
  services.background = &background;

  // The cold tier: an upstream S3 store, and the worker writing the queue back to it.
  std::unique_ptr<storage::Upstream> upstream;
  std::unique_ptr<storage::WritebackWorker> writeback;
  std::unique_ptr<storage::Fetcher> fetcher;
  if (const TierConfig* cold = config->UpstreamTier()) {
    auto made = storage::Upstream::Create(*cold);
    if (!made.ok()) {
      return Fail(made.error().message);
    }
    upstream = std::move(made).value();
    storage::WritebackOptions options{.delay = config->writeback.delay};
    for (const auto& [cls, tier] : config->storage_classes) {
      if (tier == cold->name) {
        options.cold_classes.insert(cls);
      }
    }
    writeback =
        std::make_unique<storage::WritebackWorker>(**index, **store, *upstream, options, clock);
    services.upstream = upstream.get();
    services.writeback = writeback.get();
    fetcher = std::make_unique<storage::Fetcher>(
        **store, *upstream, storage::FetchOptions{.concurrency = config->prefetch.concurrency},
        clock);
    services.fetcher = fetcher.get();
    const auto backlog = (*index)->WritebackBacklog();
    spdlog::info("upstream: tier {} at {}; write-back delay {} ms, backlog {} objects, {} bytes",
                 cold->name, cold->endpoint, config->writeback.delay.count(), backlog.objects,
                 backlog.bytes);
  }

  // Read repair: a damaged local copy of a version the upstream has is fetched again.
  std::unique_ptr<storage::CopyRepairer> repairer;
  if (fetcher) {
    repairer = std::make_unique<storage::UpstreamRepairer>(*fetcher, upstream->tier_name());
  } else {
    repairer = std::make_unique<storage::NoRepairer>();
  }
  (*store)->SetRepairer(repairer.get());

  // Capacity: admission and eviction on the local tiers that have a capacity. The store
  // reports every copy that lands to it, from any thread that moves data: it outlives the
  // lifecycle worker (declared after it), and the write-back worker and fetcher are
  // stopped explicitly below before it goes.
  storage::TierCaches tier_caches(*config, **index, **store, storage::TierCacheOptions{}, clock);
  (*store)->SetResidencyListener(
      [&tier_caches](const metadata::ObjectRecord& record) { tier_caches.OnResident(record); });
  services.tier_caches = &tier_caches;

  // Prefetch jobs run on the fetcher's thread: stopped (below) before the fetcher.
  std::unique_ptr<storage::PrefetchJobs> prefetch;
  if (fetcher) {
    prefetch = std::make_unique<storage::PrefetchJobs>(*config, clock, **index, **store, *fetcher,
                                                       &tier_caches);
    services.prefetch = prefetch.get();
  }

  // Lifecycle rules, applied from the index's due-time queue every [lifecycle] interval.
  storage::LifecycleWorker lifecycle(*config, **index, **store, clock);
  services.lifecycle = &lifecycle;

  // The scrubber: every local copy verified in the background at [scrub] bytes_per_second.
  storage::Scrubber scrubber(config->scrub, **index, **store, *repairer, clock);
  services.scrubber = &scrubber;

  gateway::Server server(services);
  auto started = server.Start();
  if (!started.ok()) {
    return Fail(started.error().message);
  }
  if (writeback) {
    writeback->Start();
  }
  if (fetcher) {
    fetcher->Start();
  }
  lifecycle.Start();
  tier_caches.Start();
  scrubber.Start();
  server.Run();
  (*store)->SetRepairer(nullptr);
  scrubber.Stop();  // it waits on repairs, which the fetcher runs
  // The prefetch jobs run on the fetcher's thread: stopped (cancelled, waited for) while
  // it runs; the fetcher then cancels the fetches they queued, whose answers still reach
  // the jobs' counters; only then may those go.
  if (prefetch) {
    prefetch->Stop();
  }
  fetcher.reset();
  prefetch.reset();
  if (upstream) {
    upstream->ReleaseClients();
  }
  blocking_pool.join();
  spdlog::info("index closed, bye");
  return 0;
}
