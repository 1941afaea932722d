// ReplicationNode: storage/replication.h over a Cluster. The primary's side (SyncKey and
// the background repair) is primary_sync.cc and replication_repair.cc, the replica's
// (serving kPeerOpKeySync) replica_sync.cc. Everything but disk work runs on the cluster's
// executor, so the state below needs no lock but the counters.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/task_group.h"
#include "storage/cluster/key_locks.h"
#include "storage/cluster/key_sync_wire.h"
#include "storage/cluster/move_pacer.h"
#include "storage/ownership.h"
#include "storage/replication.h"

namespace strata::storage::cluster {

// How many times a sync (of a key, or of an upload) tries an owner that is unreachable,
// restarting or whose view is behind (AfterFailedAttempt waits between): a little more
// than a lease renewal, so a view change settles within it.
inline constexpr int kOwnerAttempts = 30;

// A replica's failure, as the primary should see it: a bucket not mirrored here yet (made
// a moment ago through another gateway; the catalog's watch brings it soon) is retryable.
inline Error RetryableOnReplica(const Error& error) {
  if (error.code == ErrorCode::kNoSuchBucket) {
    return Error(ErrorCode::kUnavailable, "the bucket is not known here yet", true);
  }
  return error;
}

// The keys of a page of version rows (a key's versions come one after the other), each
// once, leaving out `marker` (the last key of the page before, whose versions it may
// continue); `marker` becomes the page's last key.
inline std::vector<std::string> KeysOfPage(const metadata::ListVersionsPage& page,
                                           std::string& marker) {
  std::vector<std::string> keys;
  for (const auto& entry : page.versions) {
    const std::string& key = entry.record.key.str();
    if (key != marker) {
      keys.push_back(key);
      marker = key;
    }
  }
  return keys;
}

class ReplicationNode final : public Replication {
 public:
  ReplicationNode(Cluster& cluster, ObjectStore& store, metadata::Index& index,
                  boost::asio::thread_pool& blocking_pool, std::uint64_t move_rate)
      : cluster_(cluster),
        store_(store),
        index_(index),
        blocking_(blocking_pool),
        pacer_(move_rate) {}
  ~ReplicationNode() override { Stop(); }

  boost::asio::awaitable<Result<void>> SyncKey(const BucketName& bucket, const ObjectKey& key,
                                               bool newest_is_new) override;
  boost::asio::awaitable<Result<void>> SyncUpload(UploadChange change) override;
  Result<void> Drain() override;
  boost::asio::awaitable<Result<void>> DrainMember(std::string node) override;
  void Start() override;
  void Stop() override;
  ReplicationStats Stats() const override;

  // KeySteward: replication_node.cc.
  bool ActsOn(const BucketName& bucket, const ObjectKey& key) const override;
  boost::asio::awaitable<Result<void>> Changed(const BucketName& bucket,
                                               const ObjectKey& key) override;
  Result<void> ChangedBlocking(const BucketName& bucket, const ObjectKey& key) override;

 private:
  struct Counters {
    std::atomic<std::uint64_t> syncs{0};
    std::atomic<std::uint64_t> sync_failures{0};
    std::atomic<std::uint64_t> bytes_sent{0};
    std::atomic<std::uint64_t> replica_writes{0};
    std::atomic<std::uint64_t> bytes_received{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> repair_scans{0};
    std::atomic<std::uint64_t> keys_repaired{0};
    std::atomic<std::uint64_t> under_replicated{0};
    std::atomic<bool> repairing{false};
    std::atomic<bool> catching_up{false};
    std::atomic<std::uint64_t> keys_pulled{0};
    std::atomic<bool> draining{false};
    std::atomic<std::uint64_t> keys_handed_off{0};
    std::atomic<std::uint64_t> keys_dropped{0};
    std::atomic<std::uint64_t> bytes_moved{0};
  };

  // primary_sync.cc. On the cluster's executor: the key's state as here now, to every
  // other owner, under the key's lock; `sent` (when given) counts the object bytes sent.
  boost::asio::awaitable<Result<void>> SyncOnCluster(BucketName bucket, ObjectKey key,
                                                     bool newest_is_new,
                                                     std::uint64_t* sent = nullptr);
  // One owner brought to the state `base` (read under the key's lock); `local_bytes[i]`:
  // version i has bytes here that a replica needs.
  boost::asio::awaitable<Result<void>> SyncOwner(const KeyOwner& owner, const KeySyncRequest& base,
                                                 const std::vector<bool>& local_bytes,
                                                 bool newest_is_new, std::uint64_t* sent);
  // After a retryable failure of a sync to `owner`: waits a little, then nullopt to try
  // again, or how the sync ends: kUnavailable when this gateway is no longer the key's
  // primary, Ok when `owner` left the key's owners (the repair scan syncs the new one).
  boost::asio::awaitable<std::optional<Result<void>>> AfterFailedAttempt(const std::string& bucket,
                                                                         const std::string& key,
                                                                         const std::string& owner);
  // One call: the records with `send` flagged versions' bytes. The replica's missing
  // indexes (empty: applied).
  boost::asio::awaitable<Result<std::vector<std::uint32_t>>> SyncCall(const std::string& peer,
                                                                      const KeySyncRequest& request,
                                                                      std::uint64_t* sent);

  // upload_sync.cc: SyncUpload on the cluster's executor (the primary's side), and the
  // replica's side of kPeerOpUploadSync.
  boost::asio::awaitable<Result<void>> SyncUploadOnCluster(UploadChange change);
  boost::asio::awaitable<Result<void>> UploadSyncCall(const std::string& peer,
                                                      const UploadChange& change);
  PeerTask<void> ServeUploadSync(PeerIncomingCall& call);
  // upload_repair.cc: the uploads of `bucket` held here that this gateway is the primary
  // of under `now` and whose owners changed since `before`, each moved (MoveUpload) to
  // their owners; a move that fails adds one to `failed`. False when the view moved on from
  // `epoch` (the scan runs again).
  boost::asio::awaitable<Result<bool>> RepairUploads(const BucketName& bucket,
                                                     const Ownership& before, const Ownership& now,
                                                     std::int64_t epoch, std::uint64_t& failed);
  // The uploads of `bucket` held here whose key `moves` names, each moved (MoveUpload); a
  // move that fails adds one to `failed`. False when the view moved on from `epoch`.
  boost::asio::awaitable<Result<bool>> MoveUploads(
      const BucketName& bucket, std::int64_t epoch,
      const std::function<bool(const std::string&)>& moves, std::uint64_t& failed);
  // The upload's record, then each of its parts with its bytes, synced to the key's other
  // owners, paced as every background move.
  boost::asio::awaitable<Result<void>> MoveUpload(const metadata::UploadRecord& upload);
  // The copy here of the upload a completion made `newest` from, gone: the key sync that
  // carries the completed version ends it. Blocking.
  void EndCompletedUpload(const metadata::ObjectRecord& newest);

  // The bytes of `record`'s local copy into `call`'s stream, in chunks read on the blocking
  // pool; counted as sent (and into `sent` when given). kCorruption when the copy ends early.
  boost::asio::awaitable<Result<void>> StreamLocalCopy(PeerCall& call,
                                                       const metadata::ObjectRecord& record,
                                                       std::uint64_t* sent);

  // moves.cc: the pieces every background move is made of.
  enum class Move { kCatchUp, kDrain };
  // Runs CatchUpRound or DrainRound until one succeeds and its outcome is announced (caught
  // up: ready; drained: not ready, draining), 500 ms between tries. False when stopped.
  boost::asio::awaitable<bool> RoundsThenAnnounce(Move move);
  // A sync in the background (repair, catch-up, drain): the object bytes it sent, counted
  // as moved. The caller paces by them (Pace).
  boost::asio::awaitable<Result<std::uint64_t>> MoveKey(const BucketName& bucket,
                                                        const ObjectKey& key);
  // Waits as the pacer says after `bytes` were moved.
  boost::asio::awaitable<void> Pace(std::uint64_t bytes);
  // One call of `op` to `peer` with `payload` and no streams: the answer's payload.
  boost::asio::awaitable<Result<std::string>> SmallCall(const std::string& peer, std::uint32_t op,
                                                        std::string payload);
  // Asks `primary` to sync the key to its owners (kPeerOpKeyPull).
  boost::asio::awaitable<Result<PullAnswer>> PullKey(const std::string& primary,
                                                     const std::string& bucket,
                                                     const std::string& key);
  // Waits until every other member answers a ping with `epoch` or a later one, so that a
  // call made next is served in a view at least as new as this gateway's. kUnavailable
  // (retryable) when one does not within a few seconds.
  boost::asio::awaitable<Result<void>> AwaitViewEverywhere(std::int64_t epoch);
  // The keys of `bucket` held here, a page at a time, each given to `visit`; stops at the
  // first error. Ok when the bucket is gone.
  boost::asio::awaitable<Result<void>> ForEachHeldKey(
      const BucketName& bucket,
      const std::function<boost::asio::awaitable<Result<void>>(const std::string&)>& visit);

  // replica_sync.cc: Ok when `peer` is the key's primary in this gateway's view and this
  // gateway one of its owners: only then may it change the key's copy here (a member that
  // lost its place, its lease or a view behind this one, is refused and counted).
  Result<void> FromPrimary(const std::string& peer, const std::string& bucket,
                           const std::string& key);
  // Serves one kPeerOpKeySync call.
  PeerTask<void> ServeSync(PeerIncomingCall& call);
  PeerTask<void> ApplySync(PeerIncomingCall& call, KeySyncRequest request);

  // catch_up.cc: a member that joins (new, or back after its lease expired) is brought up
  // to date by the primaries before it announces itself ready (storage/replication.h).
  boost::asio::awaitable<void> CatchUpLoop();
  boost::asio::awaitable<Result<void>> CatchUpRound();
  // Asks `peer` to sync here every key of `bucket` it is the primary of and this gateway
  // owns.
  boost::asio::awaitable<Result<void>> CatchUpBucket(const std::string& peer,
                                                     const std::string& bucket);
  // Each key held here: pulled from its primary (which may remove it), or dropped when
  // this gateway no longer owns it.
  boost::asio::awaitable<Result<void>> ReconcileHeldKeys(const std::string& bucket);
  PeerTask<void> ServeCatchUp(PeerIncomingCall& call);
  PeerTask<void> ServeKeyPull(PeerIncomingCall& call);

  // replication_repair.cc: after each membership change, syncs the keys this gateway is
  // now the primary of whose owners changed, and once no member joins or drains, drops
  // the copies of keys it no longer owns. Runs the catch-up whenever this gateway is not
  // ready (it joined, or registered again after its lease expired).
  boost::asio::awaitable<void> RepairLoop();
  boost::asio::awaitable<Result<bool>> RepairScan(const Ownership& before, std::int64_t epoch);
  // A key held here that this gateway does not own: dropped once its primary synced it to
  // its owners (kept when the primary has no version of it and replicas = 1).
  boost::asio::awaitable<Result<void>> DropUnowned(const BucketName& bucket, const ObjectKey& key,
                                                   const std::string& primary);

  // drain.cc: this gateway's keys handed to their next owners, then announced drained.
  // On the cluster's executor: asks member `node` to drain (kPeerOpDrain).
  boost::asio::awaitable<Result<void>> AskToDrain(std::string node);
  PeerTask<void> ServeDrain(PeerIncomingCall& call);
  boost::asio::awaitable<void> DrainLoop();
  boost::asio::awaitable<Result<void>> DrainRound();

  Cluster& cluster_;
  ObjectStore& store_;
  metadata::Index& index_;
  boost::asio::thread_pool& blocking_;
  KeyLocks locks_;   // the primary's per-key order of syncs
  MovePacer pacer_;  // the background moves' rate (the cluster's executor)
  TaskGroup tasks_;  // the repair loop, a drain
  std::atomic<bool> drain_started_{false};
  // The last view the repair loop scanned to the end (every key and upload here moved to
  // its owners in it, or counted under-replicated): a joiner's catch-up waits for it to
  // reach the view the joiner is in, so the uploads of its keys reach it before it becomes
  // their primary.
  std::atomic<std::int64_t> scanned_epoch_{0};
  bool started_ = false;
  std::atomic<bool> stopped_{false};
  Counters counters_;
};

}  // namespace strata::storage::cluster
