// Services: what request handlers need, wired once by main and shared by every core.
// All members are thread-safe; the struct outlives every session.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "auth/verifier.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/task_group.h"
#include "metadata/index.h"
#include "storage/cluster.h"
#include "storage/object_store.h"
#include "storage/read_cache.h"
#include "storage/replication.h"
#include "storage/shared_catalog.h"
#include "storage/tier_engine.h"

namespace strata::gateway {

struct Services {
  const Config& config;
  const Clock& clock;
  metadata::Index& index;
  // Object bytes and what the tiers decide: which copy a read is served from, the
  // upstream of bound buckets, restore, prefetch, write-back, scrubbing, /metrics.
  storage::TierEngine& engine;
  storage::ObjectStore& store;  // engine.store(): buckets, writes, local reads
  const auth::Verifier& verifier;
  boost::asio::thread_pool& blocking_pool;  // fsync and synced index writes
  // The membership and peer transport with a [cluster] section; nullptr without.
  storage::Cluster* cluster = nullptr;
  // The cluster's bucket catalog (storage/shared_catalog.h) with a [cluster] section,
  // already set on `store`; nullptr without. The request path asks it when the local
  // mirror has no such bucket.
  storage::SharedCatalog* catalog = nullptr;
  // The cluster's users (storage/shared_users.h) with a [cluster] section, mirrored into
  // the index the credentials are read from; nullptr without. The admin API makes and
  // removes users through it.
  storage::SharedUsers* users = nullptr;
  // The key copies on the other owners (storage/replication.h) with a [cluster] section;
  // nullptr without. A change served here as a key's primary is synced before its answer.
  storage::Replication* replication = nullptr;
  // Copies of versions this gateway read through their owners (storage/read_cache.h), with
  // a [cluster] section and a read_cache size; nullptr without.
  storage::ReadCache* read_cache = nullptr;
  // Work a request leaves running after its answer (the commit of a read-through fill),
  // on the request's core; Server::Run waits for it (then cancels it) after the sessions.
  TaskGroup* background = nullptr;
};

}  // namespace strata::gateway
