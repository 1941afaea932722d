// Services: what request handlers need, wired once by main and shared by every core.
// All members are thread-safe; the struct outlives every session.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "auth/verifier.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/task_group.h"
#include "metadata/index.h"
#include "storage/object_store.h"

namespace strata::storage {
class Upstream;
class WritebackWorker;
class TierCaches;
class Fetcher;
class PrefetchJobs;
class LifecycleWorker;
class Scrubber;
class TierEngine;
}  // namespace strata::storage

namespace strata::gateway {

struct Services {
  const Config& config;
  const Clock& clock;
  metadata::Index& index;
  storage::ObjectStore& store;
  const auth::Verifier& verifier;
  boost::asio::thread_pool& blocking_pool;  // fsync and synced index writes
  // The engine that owns `store` and every part below (nullptr in tests that wire a bare
  // store): /metrics reads its counters.
  storage::TierEngine* engine = nullptr;
  // With an `s3` tier: the upstream and the worker pushing the write-back queue to it.
  storage::Upstream* upstream = nullptr;
  storage::WritebackWorker* writeback = nullptr;
  // Local tiers with a capacity: admission of read-through fills, hits, eviction.
  storage::TierCaches* tier_caches = nullptr;
  // With an `s3` tier: background fetches of upstream copies onto the hot tier (restore).
  storage::Fetcher* fetcher = nullptr;
  // With an `s3` tier: bulk prefetch jobs and the scans the read path recognises.
  storage::PrefetchJobs* prefetch = nullptr;
  // Applies the lifecycle rules (its counters go to /metrics).
  storage::LifecycleWorker* lifecycle = nullptr;
  // Verifies every local copy in the background and repairs what it can (admin API).
  storage::Scrubber* scrubber = nullptr;
  // Work a request leaves running after its answer (the commit of a read-through fill),
  // on the request's core; Server::Run waits for it (then cancels it) after the sessions.
  TaskGroup* background = nullptr;
};

}  // namespace strata::gateway
