// EtcdMembership: storage/membership.h's Membership kept in etcd (private to storage/;
// main makes it with MakeEtcdMembership).
//
// Keys (every key under the cluster's name, `/<name>/`, so clusters may share one etcd):
//   /<name>/members/<node>  JSON {"node", "zone", "peer", "capacity_bytes"}, under this
//                           gateway's lease: gone when the lease is revoked or expires
//   /<name>/names/<name>    a name claimed once cluster-wide (ClaimName), no lease
//
// Start grants a lease of lease_ttl and creates the member key in one transaction that
// succeeds only if the key does not exist (a live member of the same name keeps it:
// kAlreadyExists), reads the member list, and spawns two coroutines in its TaskGroup:
//   - keepalive: renews the lease every ttl/3 on the injected clock (retrying every ttl/12
//     after a failure, which also reopens the watch: its stream has no idle timeout); a
//     lease etcd no longer has (it expired while etcd was unreachable) is replaced by
//     registering again, as at Start;
//   - watch: follows /<name>/members/ from the revision of its own put on, so every change
//     after it is seen exactly once, also one made between the put and the read. A broken
//     stream is reopened from the revision after the last event seen; if etcd compacted
//     that away, the list is read again.
// Epoch: the revision of the latest put or delete under /<name>/members/ that this gateway
// knows of. Every member's registration is a put after which it sees every change, so two
// members that saw the same last event agree on the epoch. (After a compaction forced a
// fresh read, the epoch is that read's revision: later than the true last change, and
// possibly different on another member until the next change.)
//
// Fencing: MayAcceptWrites compares the injected clock with (time the last successful
// renewal was sent) + TTL - ttl/3. The send time, not the answer's, since etcd counts the
// TTL from when it handled the renewal, later than the send; the TTL is the smaller of the
// configured and the granted one.
//
// Threads: as Membership says. Everything else (the client, the member map) is used on the
// executor's thread only.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "common/task_group.h"
#include "storage/cluster/etcd_client.h"
#include "storage/membership.h"

namespace strata::storage::cluster {

class EtcdMembership final : public Membership {
 public:
  // `client` runs on `executor`; `clock` outlives this.
  EtcdMembership(boost::asio::any_io_executor executor, ClusterConfig cluster, const Clock& clock,
                 std::uint64_t capacity_bytes, std::shared_ptr<EtcdClient> client);
  ~EtcdMembership() override;

  boost::asio::awaitable<Result<void>> Start() override;
  boost::asio::awaitable<Result<void>> Stop() override;
  boost::asio::awaitable<Result<void>> Announce(bool ready, bool draining) override;
  std::shared_ptr<const MembershipView> View() const override;
  std::uint64_t Subscribe(ViewCallback callback) override;
  void Unsubscribe(std::uint64_t id) override;
  bool MayAcceptWrites() const override;
  boost::asio::awaitable<Result<bool>> ClaimName(std::string name, std::string value) override;
  MembershipStats Stats() const override;

  // The key layout, for tests and tools.
  static std::string MembersPrefix(std::string_view cluster);
  static std::string NameKey(std::string_view cluster, std::string_view name);
  // A member's registration value, and back (nullopt: not a registration).
  static std::string EncodeMember(const MemberInfo& member);
  static std::optional<MemberInfo> DecodeMember(std::string_view node, std::string_view value);

 private:
  // This gateway's registration, announcing `ready` and `draining`.
  MemberInfo Me(bool ready, bool draining) const;
  // Grants a lease and creates the member key under it; sets lease_id_ and the fencing
  // deadline; the put's revision.
  boost::asio::awaitable<Result<std::int64_t>> Register();
  // Reads the member list whole: members_, epoch_ and applied_ from it.
  boost::asio::awaitable<Result<void>> ReadMembers();
  boost::asio::awaitable<void> KeepAliveLoop();
  boost::asio::awaitable<void> WatchLoop(std::int64_t from_revision);
  // Applies one batch of watched events; publishes a view when the list or epoch changed.
  void Apply(const WatchBatch& batch);
  void Publish();

  const boost::asio::any_io_executor executor_;
  const ClusterConfig cluster_;
  const Clock& clock_;
  const std::uint64_t capacity_bytes_;
  const std::shared_ptr<EtcdClient> client_;
  const std::string prefix_;  // /<name>/members/
  // The lease TTL fencing counts with, and the renewal interval (a third of it).
  SteadyTime::duration ttl_;
  SteadyTime::duration interval_;

  // The executor's thread only.
  bool started_ = false;
  bool stopping_ = false;
  std::int64_t lease_id_ = 0;
  bool ready_ = false;                         // announced in the registration (Announce)
  bool draining_ = false;                      // likewise
  SteadyTime renewed_at_{};                    // when the last successful grant or renewal was sent
  std::map<std::string, MemberInfo> members_;  // by node
  std::int64_t epoch_ = 0;
  std::int64_t applied_ = 0;    // the revision members_ reflects
  EtcdWatch* watch_ = nullptr;  // the open stream, owned by WatchLoop's frame

  // Any thread.
  std::atomic<SteadyTime::rep> writes_until_{SteadyTime::min().time_since_epoch().count()};
  std::atomic<std::uint64_t> keepalives_{0};
  std::atomic<std::uint64_t> keepalive_failures_{0};
  std::atomic<std::uint64_t> views_{0};
  std::atomic<std::uint64_t> watch_restarts_{0};

  mutable std::mutex mu_;  // guards view_, subscribers_, next_subscriber_
  std::shared_ptr<const MembershipView> view_;
  std::map<std::uint64_t, std::shared_ptr<ViewCallback>> subscribers_;
  std::uint64_t next_subscriber_ = 0;
  // Held while subscribers are called, so Unsubscribe can wait for a call to end.
  std::mutex notify_mu_;

  TaskGroup tasks_;  // keepalive and watch; last, so it is joined before the rest goes
};

}  // namespace strata::storage::cluster
