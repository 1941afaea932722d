#include "storage/cluster/etcd_membership.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <nlohmann/json.hpp>

#include "common/clock_timer.h"

namespace strata::storage::cluster {

namespace asio = boost::asio;
using json = nlohmann::json;

namespace {

// After a failed watch, the next try waits this long (on the injected clock).
constexpr std::chrono::milliseconds kWatchRetry{500};

// Network waits of the membership's calls: a renewal must end before the next is due.
EtcdOptions OptionsFor(const ClusterConfig& cluster) {
  EtcdOptions options;
  const auto interval = cluster.lease_ttl / 3;
  options.request_timeout = std::clamp<std::chrono::milliseconds>(
      interval, std::chrono::milliseconds(500), std::chrono::milliseconds(5'000));
  options.connect_timeout = std::min(options.request_timeout, options.connect_timeout);
  return options;
}

}  // namespace

std::string EtcdMembership::MembersPrefix(std::string_view cluster) {
  return "/" + std::string(cluster) + "/members/";
}

std::string EtcdMembership::NameKey(std::string_view cluster, std::string_view name) {
  return "/" + std::string(cluster) + "/names/" + std::string(name);
}

std::string EtcdMembership::EncodeMember(const MemberInfo& member) {
  // Node and zone names come from the configuration; dump() refuses bytes that are not
  // UTF-8, so replace them rather than throw.
  const json j = {{"node", member.node},   {"zone", member.zone},
                  {"peer", member.peer},   {"capacity_bytes", member.capacity_bytes},
                  {"ready", member.ready}, {"draining", member.draining}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<MemberInfo> EtcdMembership::DecodeMember(std::string_view node,
                                                       std::string_view value) {
  try {
    const json j = json::parse(value.begin(), value.end(), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      return std::nullopt;
    }
    const auto zone = j.find("zone");
    const auto peer = j.find("peer");
    const auto capacity = j.find("capacity_bytes");
    const auto named = j.find("node");
    const auto ready = j.find("ready");
    const auto draining = j.find("draining");
    if ((ready != j.end() && !ready->is_boolean()) ||
        (draining != j.end() && !draining->is_boolean())) {
      return std::nullopt;
    }
    if (zone == j.end() || !zone->is_string() || peer == j.end() || !peer->is_string() ||
        (named != j.end() && (!named->is_string() || named->get<std::string>() != node))) {
      return std::nullopt;
    }
    MemberInfo m;
    m.node = std::string(node);
    m.zone = zone->get<std::string>();
    m.peer = peer->get<std::string>();
    m.ready = ready == j.end() || ready->get<bool>();
    m.draining = draining != j.end() && draining->get<bool>();
    if (capacity != j.end()) {
      if (!capacity->is_number_unsigned()) {
        return std::nullopt;
      }
      m.capacity_bytes = capacity->get<std::uint64_t>();
    }
    return m;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

EtcdMembership::EtcdMembership(asio::any_io_executor executor, ClusterConfig cluster,
                               const Clock& clock, std::uint64_t capacity_bytes,
                               std::shared_ptr<EtcdClient> client)
    : executor_(std::move(executor)),
      cluster_(std::move(cluster)),
      clock_(clock),
      capacity_bytes_(capacity_bytes),
      client_(std::move(client)),
      prefix_(MembersPrefix(cluster_.name)),
      ttl_(std::chrono::duration_cast<SteadyTime::duration>(cluster_.lease_ttl)),
      interval_(ttl_ / 3),
      view_(std::make_shared<const MembershipView>()) {}

EtcdMembership::~EtcdMembership() {
  tasks_.Close();
  tasks_.Cancel();
}

MemberInfo EtcdMembership::Me(bool ready, bool draining) const {
  MemberInfo me;
  me.node = cluster_.node;
  me.zone = cluster_.zone;
  me.peer = cluster_.peer_listen;
  me.capacity_bytes = capacity_bytes_;
  me.ready = ready;
  me.draining = draining;
  return me;
}

asio::awaitable<Result<void>> EtcdMembership::Announce(bool ready, bool draining) {
  if (lease_id_ == 0) {
    co_return Error(ErrorCode::kUnavailable, "cluster: not registered now", true);
  }
  auto put =
      co_await client_->Put(prefix_ + cluster_.node, EncodeMember(Me(ready, draining)), lease_id_);
  if (!put.ok()) {
    co_return std::move(put).error();
  }
  ready_ = ready;
  draining_ = draining;
  co_return Ok();
}

asio::awaitable<Result<std::int64_t>> EtcdMembership::Register() {
  const std::int64_t ttl_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(cluster_.lease_ttl).count();
  const SteadyTime sent = clock_.SteadyNow();
  auto lease = co_await client_->LeaseGrant(ttl_seconds);
  if (!lease.ok()) {
    co_return std::move(lease).error();
  }
  const MemberInfo me = Me(ready_, draining_);
  const std::string key = prefix_ + cluster_.node;
  TxnRequest txn;
  txn.compare.push_back(Compare{key, Compare::Target::kCreate, Compare::Op::kEqual, 0, {}});
  txn.success.push_back(TxnOp::Put(key, EncodeMember(me), lease->id));
  txn.failure.push_back(TxnOp::Range(key));
  auto put = co_await client_->Txn(std::move(txn));
  if (!put.ok() || !put->succeeded) {
    // The lease would expire by itself; revoking it spares etcd the wait.
    (void)co_await client_->LeaseRevoke(lease->id);
    if (!put.ok()) {
      co_return std::move(put).error();
    }
    std::string holder;
    if (!put->ranges.empty() && !put->ranges[0].kvs.empty()) {
      const KeyValue& kv = put->ranges[0].kvs[0];
      auto other = DecodeMember(cluster_.node, kv.value);
      holder = " (peer " + (other ? other->peer : std::string("?")) + ", registered at revision " +
               std::to_string(kv.create_revision) + ")";
    }
    co_return Error(ErrorCode::kAlreadyExists,
                    "cluster: node name \"" + cluster_.node + "\" is held by a live member" +
                        holder + "; a previous run's registration expires within lease_ttl");
  }
  lease_id_ = lease->id;
  renewed_at_ = sent;
  // Fencing counts with the shorter of the TTL asked for and the one granted (compared in
  // seconds: a granted TTL is etcd's word, never converted where it could overflow).
  if (lease->ttl_seconds < ttl_seconds) {
    ttl_ = std::chrono::seconds(lease->ttl_seconds);
  }
  interval_ = ttl_ / 3;
  writes_until_ = (sent + ttl_ - interval_).time_since_epoch().count();
  co_return put->revision;
}

asio::awaitable<Result<void>> EtcdMembership::ReadMembers() {
  RangeRequest request;
  request.key = prefix_;
  request.range_end = PrefixEnd(prefix_);
  auto range = co_await client_->Range(std::move(request));
  if (!range.ok()) {
    co_return std::move(range).error();
  }
  members_.clear();
  std::int64_t latest = 0;
  for (const KeyValue& kv : range->kvs) {
    latest = std::max(latest, kv.mod_revision);
    const std::string node = kv.key.substr(prefix_.size());
    if (auto m = DecodeMember(node, kv.value)) {
      members_[node] = std::move(*m);
    } else {
      spdlog::warn("cluster: ignoring {}{}: not a member registration", prefix_, node);
    }
  }
  epoch_ = std::max(epoch_, latest);
  applied_ = range->revision;
  co_return Ok();
}

asio::awaitable<Result<void>> EtcdMembership::Start() {
  if (started_) {
    co_return Error(ErrorCode::kInvalidRequest, "cluster: membership started twice");
  }
  started_ = true;
  auto registered = co_await Register();
  if (!registered.ok()) {
    co_return std::move(registered).error();
  }
  const std::int64_t put_revision = *registered;
  auto read = co_await ReadMembers();
  if (!read.ok()) {
    (void)co_await client_->LeaseRevoke(lease_id_);
    lease_id_ = 0;
    writes_until_ = SteadyTime::min().time_since_epoch().count();
    co_return std::move(read).error();
  }
  Publish();
  spdlog::info("cluster: {} joined {} (zone {}, epoch {}, {} members)", cluster_.node,
               cluster_.name, cluster_.zone, epoch_, members_.size());
  tasks_.Spawn(executor_, KeepAliveLoop());
  // From the revision after this member's own put: a change between the put and the read
  // comes again as an event and raises the epoch (Apply).
  tasks_.Spawn(executor_, WatchLoop(put_revision + 1));
  co_return Ok();
}

asio::awaitable<Result<void>> EtcdMembership::Stop() {
  stopping_ = true;
  writes_until_ = SteadyTime::min().time_since_epoch().count();
  tasks_.Close();
  tasks_.Cancel();
  if (watch_ != nullptr) {
    watch_->Close();
  }
  co_await tasks_.Wait();
  if (lease_id_ == 0) {
    co_return Ok();
  }
  const std::int64_t lease = lease_id_;
  lease_id_ = 0;
  auto revoked = co_await client_->LeaseRevoke(lease);
  if (!revoked.ok() && revoked.error().code != ErrorCode::kNotFound) {
    spdlog::warn("cluster: {} could not revoke its lease (it expires by itself): {}", cluster_.node,
                 revoked.error().message);
    co_return std::move(revoked).error();
  }
  spdlog::info("cluster: {} left {}", cluster_.node, cluster_.name);
  co_return Ok();
}

asio::awaitable<void> EtcdMembership::KeepAliveLoop() {
  ClockTimer timer(executor_, clock_);
  const SteadyTime::duration retry = std::max<SteadyTime::duration>(
      interval_ / 4,
      std::chrono::duration_cast<SteadyTime::duration>(std::chrono::milliseconds(50)));
  // From the grant's time, not this coroutine's first run: the clock may have moved between.
  SteadyTime next = renewed_at_ + interval_;
  while (!stopping_) {
    co_await timer.WaitUntil(next);
    if (stopping_) {
      break;
    }
    if (clock_.SteadyNow() < next) {
      continue;  // woken early
    }
    const SteadyTime sent = clock_.SteadyNow();
    auto renewed = co_await client_->LeaseKeepAlive(lease_id_);
    if (stopping_) {
      break;
    }
    if (renewed.ok()) {
      renewed_at_ = sent;
      writes_until_ = (sent + ttl_ - interval_).time_since_epoch().count();
      ++keepalives_;
      next = sent + interval_;
      continue;
    }
    ++keepalive_failures_;
    spdlog::warn("cluster: {} could not renew its lease: {}", cluster_.node,
                 renewed.error().message);
    if (renewed.error().retryable && watch_ != nullptr) {
      // The watch has no idle timeout (a quiet stream is normal), so a connection that died
      // silently would keep it waiting for good: if renewals cannot get through, reopen it too.
      watch_->Close();
    }
    if (renewed.error().code == ErrorCode::kNotFound) {
      // The lease expired: this member has left the others' views. Join again.
      writes_until_ = SteadyTime::min().time_since_epoch().count();
      lease_id_ = 0;
      // Others took its keys over meanwhile: it joins afresh and catches up again.
      ready_ = false;
      draining_ = false;
      auto again = co_await Register();
      if (again.ok()) {
        spdlog::info("cluster: {} registered again after its lease expired", cluster_.node);
        next = renewed_at_ + interval_;
        continue;
      }
      spdlog::warn("cluster: {} could not register again: {}", cluster_.node,
                   again.error().message);
    }
    next = clock_.SteadyNow() + retry;
  }
}

asio::awaitable<void> EtcdMembership::WatchLoop(std::int64_t from_revision) {
  ClockTimer timer(executor_, clock_);
  std::int64_t next = from_revision;
  const std::string end = PrefixEnd(prefix_);
  while (!stopping_) {
    auto opened = co_await client_->Watch(prefix_, end, next);
    if (stopping_) {
      break;
    }
    if (opened.ok()) {
      std::unique_ptr<EtcdWatch> watch = std::move(opened).value();
      // Stop closes the stream through watch_; a cancelled frame unwinds past here too.
      struct Published {
        EtcdWatch*& slot;
        ~Published() { slot = nullptr; }
      } published{watch_};
      watch_ = watch.get();
      for (;;) {
        auto batch = co_await watch->Next();
        if (!batch.ok()) {
          opened = std::move(batch).error();
          break;
        }
        Apply(*batch);
        // Events come in revision order: go on after the last one seen.
        next = std::max(next, batch->events.back().kv.mod_revision + 1);
      }
      if (stopping_) {
        break;
      }
    }
    ++watch_restarts_;
    spdlog::warn("cluster: {} lost its watch of the members: {}", cluster_.node,
                 opened.error().message);
    if (opened.error().code == ErrorCode::kPreconditionFailed) {
      // Compacted past the last event seen: read the list again and go on from there. The
      // deletes in between are unknown, so the epoch becomes the read's revision.
      auto read = co_await ReadMembers();
      if (read.ok()) {
        epoch_ = std::max(epoch_, applied_);
        next = applied_ + 1;
        Publish();
      }
    }
    co_await timer.WaitFor(kWatchRetry);
  }
}

void EtcdMembership::Apply(const WatchBatch& batch) {
  bool changed = false;
  for (const WatchEvent& event : batch.events) {
    const std::int64_t revision = event.kv.mod_revision;
    if (event.kv.key.compare(0, prefix_.size(), prefix_) != 0) {
      continue;
    }
    if (revision > epoch_) {
      epoch_ = revision;
      changed = true;
    }
    if (revision <= applied_) {
      continue;  // the read already reflects it; only its revision counted
    }
    applied_ = revision;
    const std::string node = event.kv.key.substr(prefix_.size());
    if (event.type == WatchEvent::Type::kDelete) {
      members_.erase(node);
    } else if (auto m = DecodeMember(node, event.kv.value)) {
      members_[node] = std::move(*m);
    } else {
      spdlog::warn("cluster: ignoring {}{}: not a member registration", prefix_, node);
      members_.erase(node);
    }
  }
  if (changed) {
    Publish();
  }
}

void EtcdMembership::Publish() {
  auto view = std::make_shared<MembershipView>();
  view->epoch = epoch_;
  view->members.reserve(members_.size());
  for (const auto& [node, m] : members_) {
    view->members.push_back(m);
  }
  std::shared_ptr<const MembershipView> published = std::move(view);
  std::vector<std::shared_ptr<ViewCallback>> callbacks;
  {
    std::lock_guard lock(mu_);
    view_ = published;
    for (const auto& [id, callback] : subscribers_) {
      callbacks.push_back(callback);
    }
  }
  ++views_;
  std::lock_guard calling(notify_mu_);
  for (const auto& callback : callbacks) {
    (*callback)(published);
  }
}

std::shared_ptr<const MembershipView> EtcdMembership::View() const {
  std::lock_guard lock(mu_);
  return view_;
}

std::uint64_t EtcdMembership::Subscribe(ViewCallback callback) {
  std::lock_guard lock(mu_);
  subscribers_.emplace(++next_subscriber_, std::make_shared<ViewCallback>(std::move(callback)));
  return next_subscriber_;
}

void EtcdMembership::Unsubscribe(std::uint64_t id) {
  {
    std::lock_guard lock(mu_);
    subscribers_.erase(id);
  }
  // A Publish that copied the callback before the erase may be calling it: wait it out.
  std::lock_guard calling(notify_mu_);
}

bool EtcdMembership::MayAcceptWrites() const {
  return clock_.SteadyNow().time_since_epoch().count() < writes_until_.load();
}

asio::awaitable<Result<bool>> EtcdMembership::ClaimName(std::string name, std::string value) {
  const std::string key = NameKey(cluster_.name, name);
  TxnRequest txn;
  txn.compare.push_back(Compare{key, Compare::Target::kCreate, Compare::Op::kEqual, 0, {}});
  txn.success.push_back(TxnOp::Put(key, std::move(value)));
  auto claimed = co_await client_->Txn(std::move(txn));
  if (!claimed.ok()) {
    co_return std::move(claimed).error();
  }
  co_return claimed->succeeded;
}

MembershipStats EtcdMembership::Stats() const {
  MembershipStats s;
  s.keepalives = keepalives_.load();
  s.keepalive_failures = keepalive_failures_.load();
  s.views = views_.load();
  s.watch_restarts = watch_restarts_.load();
  return s;
}

}  // namespace strata::storage::cluster

namespace strata::storage {

Result<std::unique_ptr<Membership>> MakeEtcdMembership(boost::asio::any_io_executor executor,
                                                       const ClusterConfig& cluster,
                                                       const Clock& clock,
                                                       std::uint64_t capacity_bytes) {
  auto client = cluster::EtcdClient::Make(executor, cluster.etcd, cluster::OptionsFor(cluster));
  if (!client.ok()) {
    return std::move(client).error();
  }
  return std::unique_ptr<Membership>(std::make_unique<cluster::EtcdMembership>(
      std::move(executor), cluster, clock, capacity_bytes, std::move(client).value()));
}

}  // namespace strata::storage
