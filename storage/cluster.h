// Cluster: this gateway's place in a cluster when the configuration has a [cluster]
// section (DESIGN.md, "Cluster"): its membership (storage/membership.h, kept in etcd) and
// its peer transport (storage/peer_transport.h, over TCP), run on a thread of their own so
// neither a slow etcd nor a peer ever holds up an I/O thread.
//
// What it does today: joins (registers under a lease and follows the member list, whose
// epoch it stamps on the transport), serves the peer port (a member answers a ping with its
// node and epoch, after the HMAC handshake), reports its status and probes the members.
// The warm pool (the peer tier), forwarding and replication build on it.
//
// Threads: Open, Start, Stop and Status from any thread but not from the cluster's own;
// Probe is awaited from any executor (it runs on the cluster's thread and resumes the
// caller on its own). Start before any other use but Status; Stop before destruction
// (the destructor stops it otherwise).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/bucket_catalog.h"
#include "storage/membership.h"
#include "storage/peer_transport.h"
#include "storage/shared_catalog.h"
#include "storage/shared_users.h"

namespace strata::storage {

// The ops of the peer calls between gateways (PeerRequest::op).
inline constexpr std::uint32_t kPeerOpPing = 1;         // -> payload "<node> <epoch>"
inline constexpr std::uint32_t kPeerOpS3Request = 2;    // gateway/forward.h
inline constexpr std::uint32_t kPeerOpListing = 3;      // gateway/cluster_listing.h
inline constexpr std::uint32_t kPeerOpS3FanOut = 4;     // gateway/forward.h (FanOut)
inline constexpr std::uint32_t kPeerOpKeySync = 5;      // storage/replication.h
inline constexpr std::uint32_t kPeerOpCatchUp = 6;      // storage/replication.h
inline constexpr std::uint32_t kPeerOpKeyPull = 7;      // storage/replication.h
inline constexpr std::uint32_t kPeerOpDrain = 8;        // storage/replication.h
inline constexpr std::uint32_t kPeerOpReadVersion = 9;  // gateway/remote_copy_source.h
inline constexpr std::uint32_t kPeerOpUploadSync = 10;  // storage/replication.h (SyncUpload)

// Who answers for a key: its primary owner under the current membership view.
struct KeyOwner {
  std::string node;
  std::string peer;   // its peer transport's "host:port"
  bool self = false;  // this gateway
  std::int64_t epoch = 0;
};

// The peer transport's counters, as /metrics shows them.
struct PeerTransportCounters {
  std::uint64_t accepted = 0;         // connections accepted
  std::uint64_t refused = 0;          // over the connection limit
  std::uint64_t sessions_failed = 0;  // closed for a failed handshake or a bad frame
  std::uint64_t calls_served = 0;     // calls handed to this gateway's handler
  std::uint64_t connects = 0;         // connections this gateway opened (authenticated)
};

struct ClusterStatus {
  std::string name;  // [cluster] name
  std::string node;
  std::string zone;
  int replicas = 0;
  std::shared_ptr<const MembershipView> view;  // never null
  bool may_accept_writes = false;              // the membership's fence (storage/membership.h)
  MembershipStats membership;
  PeerTransportCounters transport;
};

// One member as a ping over the peer transport found it.
struct PeerProbe {
  std::string node;
  bool reachable = false;
  double rtt_ms = 0;       // the call's round trip, connection and handshake included
  std::int64_t epoch = 0;  // the epoch the member answered with
  std::string error = {};  // why it is not reachable
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  // The cluster of `config.cluster` (which must be set), timed by `clock` (which outlives
  // it). Nothing is contacted yet. kInvalidArgument for a bad etcd URL or peer address.
  static Result<std::unique_ptr<Cluster>> Open(const Config& config, const Clock& clock);

  // Serves the peer port and joins; returns once the first member list is known. Errors
  // as Membership::Start says (kAlreadyExists: a live member has this node name;
  // kUnavailable: etcd cannot be reached), or why the peer port cannot be served. After an
  // error nothing runs.
  virtual Result<void> Start() = 0;
  // Leaves the cluster at once, ends the calls in flight and stops the thread.
  virtual void Stop() = 0;

  virtual ClusterStatus Status() const = 0;
  // This gateway's node name, and the current membership view (never null).
  virtual const std::string& node() const = 0;
  virtual std::shared_ptr<const MembershipView> View() const = 0;
  // Pings every member of the current view (this gateway too, through its own peer port),
  // one after the other, each within `timeout`.
  virtual boost::asio::awaitable<std::vector<PeerProbe>> Probe(
      std::chrono::milliseconds timeout) = 0;

  // The primary owner of (bucket, key) by placement (storage/placement.h) over the current
  // view; nullopt before the first view. Any thread; no lock shared with other callers
  // beyond an atomic load.
  virtual std::optional<KeyOwner> PrimaryOf(std::string_view bucket,
                                            std::string_view key) const = 0;
  // Every owner of (bucket, key), primary first, as storage/ownership.h names them over
  // the current view: its serving owners ([cluster] replicas of the ready members, in
  // distinct zones where the view has enough), then the owners it is moving to (a joining
  // member's keys, a draining member's) as extra replicas. Empty before the first view.
  // Any thread, as PrimaryOf.
  virtual std::vector<KeyOwner> OwnersOf(std::string_view bucket, std::string_view key) const = 0;
  // [cluster] replicas.
  virtual int replicas() const = 0;
  // This gateway as the current view has it: caught up with its keys (MemberInfo::ready),
  // and being drained (MemberInfo::draining).
  virtual bool ready() const = 0;
  virtual bool draining() const = 0;
  // Announces this gateway's state (Membership::Announce): storage/replication.h does,
  // once it caught up, and while and after it is drained. Awaited from any executor.
  virtual boost::asio::awaitable<Result<void>> Announce(bool ready, bool draining) = 0;
  // The membership's fence (storage/membership.h): false once this gateway may have lost
  // its registration, when it must accept no more writes. Any thread.
  virtual bool MayAcceptWrites() const = 0;

  // Serves calls of `op` (not kPeerOpPing) with `handler`, on the cluster's thread; an
  // empty handler stops serving it. A call of an op with no handler is refused with a
  // retryable kUnavailable, so a caller that reached this gateway before it serves S3, or
  // after it stopped, tries again. Any thread; a handler already running runs on.
  virtual void SetHandler(std::uint32_t op, PeerHandler handler) = 0;

  // The executor every PeerCall and PeerIncomingCall method must run on.
  virtual boost::asio::any_io_executor executor() = 0;
  // PeerTransport::Call to another member. On executor() only.
  virtual PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer,
                                                   const PeerRequest& request) = 0;
  // The peer transport's end on one of the server's I/O threads (`core`, an io_context
  // run by one thread). Its calls run on that thread from start to end, so a request
  // forwarded to its key's owner never changes threads on this gateway; and the calls of
  // kPeerOpS3Request and kPeerOpS3FanOut that other members send to the peer port are
  // served on these threads, in turn, with `forwarded` (their connections move there at
  // their first call), not on executor() with SetHandler's. (Other ops on such a
  // connection are served by their SetHandler handler as usual.) It stamps the membership's
  // epoch as Call does, and its connections and calls count in Status. nullptr when the
  // transport is RDMA (whose calls stay on executor()). Stop it from another thread while
  // `core` still runs, before `core` ends; after Start, before Stop.
  virtual std::unique_ptr<PeerTransport> MakeCoreClient(boost::asio::any_io_executor core,
                                                        PeerHandler forwarded) = 0;

  // After Start: the cluster's bucket catalog (storage/shared_catalog.h), kept in etcd
  // under /<name>/buckets/, with `mirror` (which outlives the cluster's Stop) made equal to
  // it first (the reconcile) and then kept so by a watch. Owned by the cluster, stopped by
  // Stop. Once; kUnavailable when etcd cannot be reached (nothing runs then).
  virtual Result<SharedCatalog*> StartCatalog(BucketMirror& mirror) = 0;
  // After Start: the cluster's users (storage/shared_users.h), kept in etcd under
  // /<name>/users/, with `mirror`'s user records (which outlive the cluster's Stop) made
  // equal to them first and then kept so by a watch. Owned by the cluster, stopped by
  // Stop. Once; kUnavailable when etcd cannot be reached (nothing runs then).
  virtual Result<SharedUsers*> StartUsers(metadata::BucketCatalog& mirror) = 0;
};

}  // namespace strata::storage
