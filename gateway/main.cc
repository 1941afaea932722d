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
#include "gateway/cluster_listing.h"
#include "gateway/credentials.h"
#include "gateway/server.h"
#include "gateway/services.h"
#include "gateway/xml_budget.h"
#include "metadata/index.h"
#include "storage/cluster.h"
#include "storage/data_path.h"
#include "storage/read_cache.h"
#include "storage/replication.h"
#include "storage/tier_engine.h"

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
// Copies the cluster's read cache holds at most: its index costs a few hundred bytes each.
constexpr std::size_t kReadCacheEntries = std::size_t{1} << 18;

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
  // Where fsyncs and synced index writes wait, off the I/O threads.
  boost::asio::thread_pool blocking_pool(kBlockingThreads);
  auto engine = storage::TierEngine::Open(*config, **index, clock, blocking_pool);
  if (!engine.ok()) {
    return Fail("cannot open the storage engine: " + engine.error().message);
  }
  // io_uring when configured and the kernel allows it, else pread/pwrite; logs which.
  storage::SelectDataPath(config->server.io_uring);

  gateway::SetXmlBudget(config->server.xml_memory_bytes);

  gateway::IndexCredentialStore credentials(*config, **index);
  auth::Verifier verifier(credentials, clock,
                          auth::VerifierOptions{.region = config->server.region});
  gateway::Services services{*config,  clock,        **index, **engine, (*engine)->store(),
                             verifier, blocking_pool};
  // Read-through fills committed after their answer; the server waits for them on stop.
  TaskGroup background;
  services.background = &background;

  // With [cluster]: join (etcd) and serve the peer port before serving S3, so a gateway
  // that cannot join (etcd unreachable, its node name taken) never answers as a member.
  std::unique_ptr<storage::Cluster> cluster;
  std::unique_ptr<storage::Replication> replication;
  std::unique_ptr<storage::ReadCache> read_cache;
  if (config->cluster) {
    auto opened = storage::Cluster::Open(*config, clock);
    if (!opened.ok()) {
      return Fail("[cluster]: " + opened.error().message);
    }
    cluster = std::move(opened).value();
    auto joined = cluster->Start();
    if (!joined.ok()) {
      return Fail("cannot join cluster " + config->cluster->name + " as " + config->cluster->node +
                  ": " + joined.error().message);
    }
    services.cluster = cluster.get();
    // The bucket catalog is the cluster's: this gateway's index becomes its mirror (made
    // equal to etcd's now), and every bucket change goes through etcd first.
    auto& store = (*engine)->store();
    auto catalog = cluster->StartCatalog(store.bucket_mirror());
    if (!catalog.ok()) {
      cluster->Stop();
      return Fail("cluster " + config->cluster->name +
                  ": cannot read the bucket catalog: " + catalog.error().message);
    }
    store.SetSharedCatalog(*catalog);
    services.catalog = *catalog;
    // A bucket's keys live on their owners: DeleteBucket asks every member.
    (*catalog)->SetEmptinessCheck([&services](const BucketName& name) {
      return gateway::CheckBucketEmptyInCluster(services, name.str());
    });
    // Users made with strata-admin are the cluster's: this gateway's index mirrors them.
    auto users = cluster->StartUsers(**index);
    if (!users.ok()) {
      cluster->Stop();
      return Fail("cluster " + config->cluster->name +
                  ": cannot read the users: " + users.error().message);
    }
    services.users = *users;
    // Every key's other owners hold its changes before they are acknowledged.
    replication = storage::Replication::Make(*cluster, store, **index, blocking_pool,
                                             config->cluster->move_rate);
    replication->Start();
    services.replication = replication.get();
    // Copies of versions read through their owners, on the hot tier's disk.
    if (const auto* hot = config->HotTier();
        hot != nullptr && config->cluster->read_cache > 0 && hot->kind == TierKind::kLocal) {
      auto cache = storage::OpenReadCache(storage::ReadCacheOptions{
          .root = hot->path + "/read-cache",
          .capacity = config->cluster->read_cache,
          .max_entries = kReadCacheEntries,
      });
      if (!cache.ok()) {
        cluster->Stop();
        return Fail("cannot open the read cache: " + cache.error().message);
      }
      read_cache = std::move(cache).value();
      services.read_cache = read_cache.get();
    }
  }

  if (replication) {
    // Write-back and lifecycle act on the keys this gateway is the primary of.
    (*engine)->SetSteward(replication.get());
  }

  gateway::Server server(services);
  auto started = server.Start();
  if (!started.ok()) {
    return Fail(started.error().message);
  }
  (*engine)->Start();
  server.Run();
  // The engine's workers first: in a cluster, their changes are synced to the key's other
  // owners until they stop.
  (*engine)->Stop();
  if (cluster) {
    replication->Stop();
    (*engine)->store().SetSharedCatalog(nullptr);  // the catalog stops with the cluster
    cluster->Stop();  // leaves at once: the other members stop counting on this one
  }
  blocking_pool.join();
  engine->reset();  // before the index closes
  spdlog::info("index closed, bye");
  return 0;
}
