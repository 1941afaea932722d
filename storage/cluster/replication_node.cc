#include "storage/cluster/replication_node.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>

namespace strata::storage {

std::unique_ptr<Replication> Replication::Make(Cluster& cluster, ObjectStore& store,
                                               metadata::Index& index,
                                               boost::asio::thread_pool& blocking_pool,
                                               std::uint64_t move_rate) {
  return std::make_unique<cluster::ReplicationNode>(cluster, store, index, blocking_pool,
                                                    move_rate);
}

namespace cluster {

void ReplicationNode::Start() {
  if (started_) {
    return;
  }
  started_ = true;
  cluster_.SetHandler(kPeerOpKeySync,
                      [this](PeerIncomingCall& call) -> PeerTask<void> { return ServeSync(call); });
  cluster_.SetHandler(kPeerOpCatchUp, [this](PeerIncomingCall& call) -> PeerTask<void> {
    return ServeCatchUp(call);
  });
  cluster_.SetHandler(kPeerOpKeyPull, [this](PeerIncomingCall& call) -> PeerTask<void> {
    return ServeKeyPull(call);
  });
  cluster_.SetHandler(
      kPeerOpDrain, [this](PeerIncomingCall& call) -> PeerTask<void> { return ServeDrain(call); });
  cluster_.SetHandler(kPeerOpUploadSync, [this](PeerIncomingCall& call) -> PeerTask<void> {
    return ServeUploadSync(call);
  });
  tasks_.Spawn(cluster_.executor(), RepairLoop());  // which catches up first when not ready
}

void ReplicationNode::Stop() {
  if (stopped_.exchange(true)) {
    return;
  }
  if (started_) {
    cluster_.SetHandler(kPeerOpKeySync, {});
    cluster_.SetHandler(kPeerOpCatchUp, {});
    cluster_.SetHandler(kPeerOpKeyPull, {});
    cluster_.SetHandler(kPeerOpDrain, {});
    cluster_.SetHandler(kPeerOpUploadSync, {});
  }
  tasks_.Close();
  tasks_.Cancel();
  tasks_.Join();
}

bool ReplicationNode::ActsOn(const BucketName& bucket, const ObjectKey& key) const {
  const auto owners = cluster_.OwnersOf(bucket.view(), key.view());
  return !owners.empty() && owners.front().self;
}

boost::asio::awaitable<Result<void>> ReplicationNode::Changed(const BucketName& bucket,
                                                              const ObjectKey& key) {
  co_return co_await SyncKey(bucket, key, /*newest_is_new=*/false);
}

Result<void> ReplicationNode::ChangedBlocking(const BucketName& bucket, const ObjectKey& key) {
  // A sync gives up on an owner within a few seconds (SyncOwner's attempts); the wait is a
  // bound on top of that, for a cluster executor that stopped running.
  constexpr auto kLongestSync = std::chrono::seconds(30);
  if (stopped_) {
    return Error(ErrorCode::kUnavailable, "replication is stopping", true);
  }
  auto done = boost::asio::co_spawn(cluster_.executor(), SyncOnCluster(bucket, key, false),
                                    boost::asio::use_future);
  if (done.wait_for(kLongestSync) != std::future_status::ready) {
    return Error(ErrorCode::kUnavailable, "the sync of " + key.str() + " did not end", true);
  }
  try {
    return done.get();
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnavailable, std::string("the sync was abandoned: ") + e.what(), true);
  }
}

ReplicationStats ReplicationNode::Stats() const {
  auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  return ReplicationStats{
      .syncs = get(counters_.syncs),
      .sync_failures = get(counters_.sync_failures),
      .bytes_sent = get(counters_.bytes_sent),
      .replica_writes = get(counters_.replica_writes),
      .bytes_received = get(counters_.bytes_received),
      .refused = get(counters_.refused),
      .repair_scans = get(counters_.repair_scans),
      .keys_repaired = get(counters_.keys_repaired),
      .under_replicated = get(counters_.under_replicated),
      .repairing = counters_.repairing.load(std::memory_order_relaxed),
      .catching_up = counters_.catching_up.load(std::memory_order_relaxed),
      .keys_pulled = get(counters_.keys_pulled),
      .draining = counters_.draining.load(std::memory_order_relaxed),
      .keys_handed_off = get(counters_.keys_handed_off),
      .keys_dropped = get(counters_.keys_dropped),
      .bytes_moved = get(counters_.bytes_moved),
  };
}

}  // namespace cluster
}  // namespace strata::storage
