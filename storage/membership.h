// Membership: which gateways form the cluster right now, and whether this one may still act
// as a member (DESIGN.md, "Cluster"). Placement (storage/placement.h) turns a view's
// members into each key's owners; the epoch names the view, so two gateways can tell
// whether they agree and a primary whose view is stale can be fenced.
//
// The implementation keeps the members in etcd (EtcdMembership, storage/cluster/; made by
// MakeEtcdMembership below): each gateway holds `/<name>/members/<node>` under a lease it
// renews, so a gateway that stops renewing (crashed, partitioned) leaves when its lease
// expires, and one that stops cleanly leaves at once. Tests of code above may use a fake.
//
// Threads: Start, Stop and ClaimName are coroutines for the executor the membership was
// made with (one io_context run by one thread). View, Subscribe, Unsubscribe,
// MayAcceptWrites and Stats may be called from any thread. Subscribers are called on that
// executor's thread, one view at a time, in epoch order; a subscriber must not block and
// must not call Subscribe or Unsubscribe. Stop before destroying.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "storage/placement.h"

namespace strata::storage {

// A member as it registered: placement's Member (node, zone) plus how to reach it.
struct MemberInfo : Member {
  std::string peer;                  // [cluster] peer_listen: its peer transport's "host:port"
  std::uint64_t capacity_bytes = 0;  // its share of the warm pool, as it announced
  // Whether it has caught up with the keys it owns (storage/replication.h): a member joins
  // not ready, is a replica of its keys meanwhile but the primary of none, and says so once
  // the primaries brought it up to date. A registration that does not say is ready.
  bool ready = true;
  // Being emptied before it leaves (`strata-admin cluster drain`): it owns no key in the
  // placement its keys move to (storage/ownership.h), and once they are there it announces
  // itself not ready, owning nothing. A registration that does not say is not draining.
  bool draining = false;
};

// One state of the member list. Immutable once published; shared by every reader.
struct MembershipView {
  // The etcd revision of the last change to the member list (a join, a leave, a member
  // re-announcing itself): equal epochs on two gateways mean the same members. 0: none yet.
  std::int64_t epoch = 0;
  std::vector<MemberInfo> members;  // sorted by node name

  const MemberInfo* Find(const std::string& node) const {
    for (const auto& m : members) {
      if (m.node == node) {
        return &m;
      }
    }
    return nullptr;
  }
};

struct MembershipStats {
  std::uint64_t keepalives = 0;          // renewals of the lease that succeeded
  std::uint64_t keepalive_failures = 0;  // renewals that failed (etcd unreachable, lease gone)
  std::uint64_t views = 0;               // views published
  std::uint64_t watch_restarts = 0;      // watch streams reopened after a failure
};

using ViewCallback = std::function<void(std::shared_ptr<const MembershipView>)>;

class Membership {
 public:
  virtual ~Membership() = default;

  // Joins: registers this gateway and starts renewing its registration and following the
  // member list; the first view is published before it returns. kAlreadyExists when a
  // live member holds this node name already (another gateway, or this one's previous
  // run whose registration has not expired yet); kUnavailable when the store is
  // unreachable. Call once.
  virtual boost::asio::awaitable<Result<void>> Start() = 0;
  // Leaves at once (the registration is removed, not left to expire) and ends the
  // background work. Errors only say that the removal failed: the work is stopped anyway
  // and the registration expires by itself.
  virtual boost::asio::awaitable<Result<void>> Stop() = 0;

  // The current view (an empty one before Start).
  virtual std::shared_ptr<const MembershipView> View() const = 0;
  // Calls `callback` with every view published from now on. Returns an id for Unsubscribe,
  // which returns once no call of the callback is running.
  virtual std::uint64_t Subscribe(ViewCallback callback) = 0;
  virtual void Unsubscribe(std::uint64_t id) = 0;

  // Fencing: true only while this gateway's registration is certainly alive, that is while
  // the last successful renewal plus the lease's TTL, less one renewal interval as a
  // safety margin, lies ahead on the injected clock. A gateway that cannot renew stops
  // accepting writes before its registration can expire and another takes over its keys.
  virtual bool MayAcceptWrites() const = 0;

  // Announces this member's state (MemberInfo::ready and ::draining): it joined not ready
  // and not draining. kUnavailable when the store is unreachable (try again). After
  // Start. A registration made again after the lease was lost (a partition) announces
  // not ready: the member catches up again before it serves.
  virtual boost::asio::awaitable<Result<void>> Announce(bool ready, bool draining) = 0;

  // Takes `name` cluster-wide, once: true when this call took it (storing `value`), false
  // when it was already taken (its value left as it was). The building block of the
  // bucket catalog. kUnavailable when the store is unreachable: whether the claim was
  // made is then unknown (claim again; a false may then be this gateway's own claim).
  virtual boost::asio::awaitable<Result<bool>> ClaimName(std::string name, std::string value) = 0;

  virtual MembershipStats Stats() const = 0;
};

// The etcd-backed membership for `cluster`, run on `executor`, timed by `clock` (which
// outlives it). `capacity_bytes` is announced to the other members. kInvalidArgument for
// a bad etcd URL. Nothing is contacted before Start.
Result<std::unique_ptr<Membership>> MakeEtcdMembership(boost::asio::any_io_executor executor,
                                                       const ClusterConfig& cluster,
                                                       const Clock& clock,
                                                       std::uint64_t capacity_bytes);

}  // namespace strata::storage
