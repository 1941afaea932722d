// Replication: the `replicas` copies of every key of a cluster (DESIGN.md, "Cluster").
//
// A key's primary (the first of its owners, storage/placement.h) orders its changes: every
// write through any gateway is served there (gateway/forward.h). Once the primary has
// committed a change, SyncKey makes each other owner hold the key's versions exactly as the
// primary holds them now: the whole stack of records travels (so a replica that missed a
// change, or holds versions deleted since, is corrected by the next sync), and the bytes of
// the versions the replica lacks come along (it says which; a write sends the newest one's
// at once). The replica writes them durably (fsync, one index batch) before it answers,
// so a write acknowledged after SyncKey is on `replicas` owners in distinct zones. Syncs
// of one key run one at a time on the primary and read its state afresh, so replicas see
// the key's states in the primary's order.
//
// A replica refuses a sync from a member that is not the key's primary in its own view,
// and the transport refuses a caller whose epoch is older: a primary that lost its place
// cannot overwrite the new primary's copies. When the membership changes, each primary
// syncs, in the background and one key at a time, the keys whose owners changed, so a
// member's death leaves its keys under-replicated for seconds, not until their next write.
//
// A member that joins (a new one, or one back after its lease expired, with whatever its
// data directory holds) registers not ready: it receives every change of the keys it will
// own but answers for none, and the members that held them keep serving them
// (storage/ownership.h). It catches up first: once every member's view has it, every
// ready member syncs to it the keys it is the primary of that the joiner owns, and the
// joiner asks the primary of each key it holds to sync that key (a key deleted meanwhile
// is removed, an old version replaced) and drops the keys it no longer owns; then it
// announces itself ready and becomes their primary. So a joining member never serves a
// stale version or resurrects a delete (with replicas = 1 a key whose primary has no
// version is kept: the joiner may hold its only copy).
//
// Drain (`strata-admin cluster drain`) is the join's mirror: the member announces itself
// draining and stays a serving owner of its keys while their next owners receive every
// change; it makes each key it holds reach them (syncing the keys it is the primary of,
// asking the primaries of the others), then announces itself not ready, owning nothing,
// and can be stopped. After a change settles (no member joining or draining), a member
// drops its copies of keys it no longer owns once their primary confirmed it holds them.
//
// Every background move (repair, catch-up, drain) is paced to [cluster] move_rate bytes
// a second on the sending gateway; writes and reads are not.
//
// Threads: SyncKey is awaited from any executor (it runs on the cluster's, with disk work
// on the blocking pool, and resumes the caller on its own). Start and Stop from any thread
// but the cluster's.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/index.h"
#include "storage/cluster.h"
#include "storage/key_steward.h"
#include "storage/object_store.h"

namespace strata::storage {

// A change of a multipart upload its primary made (SyncUpload): created (no part), a part
// stored (its bytes go along), or aborted (`gone`; only the upload's bucket, key and id
// are read).
struct UploadChange {
  metadata::UploadRecord upload;
  std::optional<metadata::PartRecord> part = {};
  bool gone = false;
};

struct ReplicationStats {
  std::uint64_t syncs = 0;             // key syncs that reached every other owner
  std::uint64_t sync_failures = 0;     // key syncs that did not (the write answered 503)
  std::uint64_t bytes_sent = 0;        // object bytes sent to replicas
  std::uint64_t replica_writes = 0;    // syncs applied here as a replica
  std::uint64_t bytes_received = 0;    // object bytes received as a replica
  std::uint64_t refused = 0;           // syncs refused here (not from the key's primary, bad)
  std::uint64_t repair_scans = 0;      // background scans after a membership change, finished
  std::uint64_t keys_repaired = 0;     // keys those scans synced
  std::uint64_t under_replicated = 0;  // keys whose last background sync failed (retried)
  bool repairing = false;              // a background scan is running
  bool catching_up = false;            // joined, not ready yet (catching up)
  std::uint64_t keys_pulled = 0;       // keys this gateway asked their primary for
  bool draining = false;               // handing its keys to their next owners
  std::uint64_t keys_handed_off = 0;   // keys a drain of this gateway made reach them
  std::uint64_t keys_dropped = 0;      // copies dropped here: keys this gateway no longer owns
  std::uint64_t bytes_moved = 0;       // object bytes background moves sent (paced)
};

// It is also the steward of the keys (storage/key_steward.h): this gateway's write-back
// and lifecycle act on the keys it is the primary of, and SyncKey carries their changes.
class Replication : public KeySteward {
 public:
  ~Replication() override = default;

  // The replication of `cluster` (started) over this gateway's `store` and `index`; all
  // outlive it. Serves the replica side of key syncs (kPeerOpKeySync) from Start on.
  // `move_rate`: [cluster] move_rate.
  static std::unique_ptr<Replication> Make(Cluster& cluster, ObjectStore& store,
                                           metadata::Index& index,
                                           boost::asio::thread_pool& blocking_pool,
                                           std::uint64_t move_rate);

  // After this gateway, as the primary of bucket/key, committed a change of it: returns
  // once every other owner holds the key as it is here now. kUnavailable (retryable) when
  // this gateway is not the key's primary any more, or an owner could not be brought up
  // to date within a few seconds: the change stays here and the next sync carries it.
  // `newest_is_new`: the change made the newest version (a PUT, a copy, a completed
  // upload), whose bytes no replica has: they go with the first call instead of after
  // the replica asked for them.
  virtual boost::asio::awaitable<Result<void>> SyncKey(const BucketName& bucket,
                                                       const ObjectKey& key,
                                                       bool newest_is_new) = 0;

  // After this gateway, as the primary of the upload's key, created an upload, stored one
  // of its parts or aborted it: returns once every other owner holds the same (the upload
  // record as it is here, the part with its bytes, written durably and checked against
  // its size, ETag and CRC64NVME), so the key's next primary can go on with the upload
  // after this gateway dies. kUnavailable (retryable) as SyncKey. A completion needs no
  // call of its own: the key sync of the version it made ends the replicas' copies.
  virtual boost::asio::awaitable<Result<void>> SyncUpload(UploadChange change) = 0;

  // Starts draining this gateway (see above) in the background; Ok at once when it is
  // draining or drained already. kInvalidRequest while it catches up (it owns nothing to
  // hand over yet). Any thread, after Start.
  virtual Result<void> Drain() = 0;
  // Drain() on the member `node` of this gateway's view (this one, or another asked over
  // the peer transport). kNotFound: no such member. Awaited from any executor.
  virtual boost::asio::awaitable<Result<void>> DrainMember(std::string node) = 0;

  virtual void Start() = 0;
  // Stops serving syncs and the background repair; waits for what runs.
  virtual void Stop() = 0;

  virtual ReplicationStats Stats() const = 0;
};

}  // namespace strata::storage
