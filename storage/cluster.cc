// Cluster: wires the membership (EtcdMembership) and the peer transport (TCP or RDMA,
// MakePeerTransport) of a gateway in a cluster, on one io_context thread of their own.
#include "storage/cluster.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <charconv>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "common/run_on.h"
#include "common/task_group.h"
#include "storage/cluster/etcd_catalog.h"
#include "storage/cluster/etcd_users.h"
#include "storage/ownership.h"
#include "storage/peer/core_clients.h"
#include "storage/peer/hopping_call.h"
#include "storage/peer/make_transport.h"

namespace strata::storage {
namespace {

namespace asio = boost::asio;

// A view's members and their placement, made once per view for PrimaryOf.
struct Routing {
  Ownership ownership;
};

std::uint64_t PeerCapacity(const Config& config) {
  std::uint64_t total = 0;
  for (const auto& tier : config.tiers) {
    if (tier.kind == TierKind::kPeer) {
      total += tier.capacity;
    }
  }
  return total;
}

class ClusterNode final : public Cluster {
 public:
  ClusterNode(const Config& config, const Clock& clock)
      : config_(*config.cluster),
        clock_(clock),
        capacity_(PeerCapacity(config)),
        work_(asio::make_work_guard(io_)) {}

  ~ClusterNode() override { Stop(); }

  Result<void> Init() {
    auto membership = MakeEtcdMembership(io_.get_executor(), config_, clock_, capacity_);
    if (!membership.ok()) {
      return std::move(membership).error();
    }
    membership_ = std::move(membership).value();
    auto made = peer::MakePeerTransport(io_.get_executor(), config_);
    if (!made.ok()) {
      return std::move(made).error();
    }
    transport_ = std::move(made->transport);
    transport_counters_ = std::move(made->counters);
    if (made->tcp != nullptr) {
      // Forwarded requests are served on the I/O threads: their sessions move to the
      // cores' transports at their first call (the cores' clients send nothing else).
      core_clients_.emplace(config_);
      made->tcp->SetHandOff(peer::SessionHandOff{
          .takes = [](std::uint32_t op) { return op == kPeerOpS3Request || op == kPeerOpS3FanOut; },
          .adopt =
              [this](std::unique_ptr<peer::HandedSession>& session) {
                return core_clients_->Adopt(session);
              }});
    }
    return Ok();
  }

  Result<void> Start() override {
    thread_ = std::thread([this] { io_.run(); });
    auto served =
        transport_->Serve([this](PeerIncomingCall& call) -> PeerTask<void> { return Serve(call); });
    if (!served.ok()) {
      Stop();
      return served;
    }
    auto joined = Join();
    if (!joined.ok()) {
      Stop();
      return joined;
    }
    subscription_ = membership_->Subscribe([this](std::shared_ptr<const MembershipView> view) {
      StampEpoch(view->epoch);
      Route(view);
    });
    const auto view = membership_->View();
    StampEpoch(view->epoch);
    Route(view);
    joined_ = true;
    spdlog::info("cluster {}: joined as {} (zone {}), {} members, epoch {}; peer port {}",
                 config_.name, config_.node, config_.zone, view->members.size(), view->epoch,
                 config_.peer_listen);
    return Ok();
  }

  void Stop() override {
    if (stopped_ || !thread_.joinable()) {
      stopped_ = true;
      return;
    }
    stopped_ = true;
    if (catalog_) {
      (void)asio::co_spawn(io_, catalog_->Stop(), asio::use_future).get();
    }
    if (users_) {
      (void)asio::co_spawn(io_, users_->Stop(), asio::use_future).get();
    }
    if (joined_) {
      membership_->Unsubscribe(subscription_);
      // Leave first, so the other members stop sending here.
      auto left = asio::co_spawn(io_, membership_->Stop(), asio::use_future).get();
      if (!left.ok()) {
        spdlog::warn("cluster {}: leaving: {} (the registration expires by itself)", config_.name,
                     left.error().message);
      }
    }
    transport_->Stop();
    probes_.Close();
    probes_.Cancel();
    probes_.Join();
    work_.reset();
    thread_.join();
  }

  ClusterStatus Status() const override {
    PeerTransportCounters transport = transport_counters_();
    if (core_clients_) {
      const auto cores = core_clients_->counters();
      transport.connects += cores.connects;
      transport.calls_served += cores.calls_served;
      transport.sessions_failed += cores.sessions_failed;
    }
    return ClusterStatus{
        .name = config_.name,
        .node = config_.node,
        .zone = config_.zone,
        .replicas = config_.replicas,
        .view = membership_->View(),
        .may_accept_writes = membership_->MayAcceptWrites(),
        .membership = membership_->Stats(),
        .transport = transport,
    };
  }

  const std::string& node() const override { return config_.node; }
  std::shared_ptr<const MembershipView> View() const override { return membership_->View(); }

  asio::awaitable<std::vector<PeerProbe>> Probe(std::chrono::milliseconds timeout) override {
    co_return co_await asio::co_spawn(io_, ProbeAll(timeout), asio::use_awaitable);
  }

  std::optional<KeyOwner> PrimaryOf(std::string_view bucket, std::string_view key) const override {
    auto owners = Owners(bucket, key);
    if (owners.empty()) {
      return std::nullopt;
    }
    return std::move(owners.front());
  }

  std::vector<KeyOwner> OwnersOf(std::string_view bucket, std::string_view key) const override {
    return Owners(bucket, key);
  }

  int replicas() const override { return config_.replicas; }

  asio::awaitable<Result<void>> Announce(bool ready, bool draining) override {
    co_return co_await asio::co_spawn(io_, membership_->Announce(ready, draining),
                                      asio::use_awaitable);
  }

  bool ready() const override {
    const auto view = membership_->View();
    const MemberInfo* me = view->Find(config_.node);
    return me != nullptr && me->ready;
  }
  bool draining() const override {
    const auto view = membership_->View();
    const MemberInfo* me = view->Find(config_.node);
    return me != nullptr && me->draining;
  }
  bool MayAcceptWrites() const override { return membership_->MayAcceptWrites(); }

  void SetHandler(std::uint32_t op, PeerHandler handler) override {
    std::lock_guard lock(handlers_mu_);
    if (handler) {
      handlers_[op] = std::make_shared<PeerHandler>(std::move(handler));
    } else {
      handlers_.erase(op);
    }
  }

  asio::any_io_executor executor() override { return io_.get_executor(); }

  PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer, const PeerRequest& request) override {
    return transport_->Call(std::move(peer), request);
  }

  std::unique_ptr<PeerTransport> MakeCoreClient(asio::any_io_executor core,
                                                PeerHandler forwarded) override {
    if (!core_clients_) {
      return nullptr;
    }
    // The hosted connections' other calls (a caller that mixes ops on its connections)
    // are served as any call to the peer port: by their handler, on the cluster's thread.
    auto host = [this, core,
                 forwarded = std::move(forwarded)](PeerIncomingCall& call) -> PeerTask<void> {
      const std::uint32_t op = call.request().op;
      if (op == kPeerOpS3Request || op == kPeerOpS3FanOut) {
        co_return co_await forwarded(call);
      }
      peer::HoppingCall hopping(call, core);
      co_return co_await RunOn(io_.get_executor(), Serve(hopping));
    };
    return core_clients_->Make(std::move(core), std::move(host));
  }

  Result<SharedCatalog*> StartCatalog(BucketMirror& mirror) override {
    if (catalog_ || !joined_ || stopped_) {
      return Error(ErrorCode::kInvalidRequest, "cluster: the catalog starts once, after Start");
    }
    auto catalog = StartMirror<cluster::EtcdCatalog>(mirror);
    if (!catalog.ok()) {
      return std::move(catalog).error();
    }
    catalog_ = std::move(catalog).value();
    return static_cast<SharedCatalog*>(catalog_.get());
  }

  Result<SharedUsers*> StartUsers(metadata::BucketCatalog& mirror) override {
    if (users_ || !joined_ || stopped_) {
      return Error(ErrorCode::kInvalidRequest, "cluster: the users start once, after Start");
    }
    auto users = StartMirror<cluster::EtcdUsers>(mirror);
    if (!users.ok()) {
      return std::move(users).error();
    }
    users_ = std::move(users).value();
    return static_cast<SharedUsers*>(users_.get());
  }

 private:
  // A mirror of an etcd prefix (the catalog, the users), made with a client of its own (its
  // calls never queue behind the membership's) and started on the cluster's thread.
  template <typename Mirror, typename Target>
  Result<std::unique_ptr<Mirror>> StartMirror(Target& target) {
    auto client = cluster::EtcdClient::Make(io_.get_executor(), config_.etcd, {});
    if (!client.ok()) {
      return std::move(client).error();
    }
    auto mirror = std::make_unique<Mirror>(io_, config_.name, std::move(client).value(), target);
    auto started = asio::co_spawn(io_, mirror->Start(), asio::use_future).get();
    if (!started.ok()) {
      // Dropped on the cluster's thread, which its client's sockets belong to.
      asio::co_spawn(
          io_, [dropped = std::move(mirror)]() -> asio::awaitable<void> { co_return; },
          asio::use_future)
          .get();
      return std::move(started).error();
    }
    return mirror;
  }

  // The key's owners as storage/ownership.h names them over the current view.
  std::vector<KeyOwner> Owners(std::string_view bucket, std::string_view key) const {
    const auto routing = routing_.load(std::memory_order_acquire);
    std::vector<KeyOwner> owners;
    if (!routing) {
      return owners;
    }
    for (const MemberInfo* member : routing->ownership.Owners(bucket, key)) {
      owners.push_back(KeyOwner{.node = member->node,
                                .peer = member->peer,
                                .self = member->node == config_.node,
                                .epoch = routing->ownership.view().epoch});
    }
    return owners;
  }

  // Membership::Start, again while the node name is registered already, until twice the
  // lease's TTL has passed: a registration left by a run of this gateway that crashed
  // expires within one TTL, one held by a live gateway of the same name never does.
  Result<void> Join() {
    const auto deadline =
        std::chrono::steady_clock::now() + 2 * config_.lease_ttl + std::chrono::seconds(1);
    bool waited = false;
    while (true) {
      auto joined = asio::co_spawn(io_, membership_->Start(), asio::use_future).get();
      if (joined.ok() || joined.error().code != ErrorCode::kAlreadyExists ||
          std::chrono::steady_clock::now() >= deadline) {
        return joined;
      }
      if (!waited) {
        spdlog::warn(
            "cluster {}: {} is registered already (a run of this gateway that crashed, or "
            "another gateway of that name): waiting for that registration to expire",
            config_.name, config_.node);
        waited = true;
      }
      std::this_thread::sleep_for(config_.lease_ttl / 4);
      // Start is once per membership: a fresh one for the next try, made and dropped on
      // the cluster's thread, which its client's sockets belong to.
      asio::co_spawn(
          io_,
          [this]() -> asio::awaitable<void> {
            membership_.reset();
            membership_ = std::move(
                MakeEtcdMembership(io_.get_executor(), config_, clock_, capacity_).value());
            co_return;
          },
          asio::use_future)
          .get();
    }
  }

  // One Probe's pings, shared by them and ProbeAll, which may stop waiting (a timeout)
  // before they end. The cluster's thread only.
  struct ProbeRound {
    explicit ProbeRound(asio::io_context& io) : timer(io) {}
    std::vector<PeerProbe> results;
    std::vector<bool> done;
    std::size_t remaining = 0;
    asio::steady_timer timer;  // ProbeAll's wait: cancelled when the last ping ends
  };

  void Route(const std::shared_ptr<const MembershipView>& view) {
    auto routing = std::make_shared<const Routing>(
        Routing{.ownership = Ownership(view, static_cast<std::size_t>(config_.replicas))});
    routing_.store(std::move(routing), std::memory_order_release);
  }

  std::shared_ptr<PeerHandler> HandlerOf(std::uint32_t op) {
    std::lock_guard lock(handlers_mu_);
    auto it = handlers_.find(op);
    return it == handlers_.end() ? nullptr : it->second;
  }

  PeerTask<void> Serve(PeerIncomingCall& call) {
    if (call.request().op != kPeerOpPing) {
      auto handler = HandlerOf(call.request().op);
      if (handler == nullptr) {
        co_return Error(ErrorCode::kUnavailable,
                        "peer op " + std::to_string(call.request().op) + " is not served now",
                        /*retryable=*/true);
      }
      co_return co_await (*handler)(call);
    }
    // Named, not a braced temporary in the co_await: GCC 12 destroys such a temporary
    // twice (ASan: double free).
    PeerResponse pong;
    pong.payload = config_.node + " " + std::to_string(membership_->View()->epoch);
    co_return co_await call.Respond(std::move(pong));
  }

  // On the cluster's thread.
  asio::awaitable<std::vector<PeerProbe>> ProbeAll(std::chrono::milliseconds timeout) {
    const auto view = membership_->View();
    auto round = std::make_shared<ProbeRound>(io_);
    round->results.resize(view->members.size());
    round->done.resize(view->members.size(), false);
    round->remaining = view->members.size();
    round->timer.expires_after(timeout);
    for (std::size_t i = 0; i < view->members.size(); ++i) {
      round->results[i].node = view->members[i].node;
      probes_.Spawn(io_.get_executor(), Ping(view->members[i].peer, round, i));
    }
    if (round->remaining > 0) {
      boost::system::error_code ec;  // operation_aborted: every ping ended in time
      co_await round->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    std::vector<PeerProbe> probes = round->results;
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (!round->done[i]) {
        probes[i].error = "no answer within " + std::to_string(timeout.count()) + " ms";
      }
    }
    co_return probes;
  }

  // The round trip is timed on the real clock, as request latencies are: it describes the
  // network, not a worker's schedule.
  asio::awaitable<void> Ping(std::string peer, std::shared_ptr<ProbeRound> round,
                             std::size_t index) {
    const auto started = std::chrono::steady_clock::now();
    auto answer = co_await PingOnce(std::move(peer));
    PeerProbe& result = round->results[index];
    result.rtt_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    if (answer.ok()) {
      result.reachable = true;
      result.epoch = *answer;
    } else {
      result.error = answer.error().message;
    }
    round->done[index] = true;
    if (--round->remaining == 0) {
      round->timer.cancel();
    }
  }

  PeerTask<std::int64_t> PingOnce(std::string peer) {
    PeerRequest ping;  // named: see Serve
    ping.op = kPeerOpPing;
    auto call = co_await transport_->Call(std::move(peer), ping);
    if (!call.ok()) {
      co_return std::move(call).error();
    }
    auto response = co_await (*call)->Response();
    if (!response.ok()) {
      co_return std::move(response).error();
    }
    // "<node> <epoch>"
    const std::string& payload = response->payload;
    const auto space = payload.rfind(' ');
    std::int64_t epoch = 0;
    if (space == std::string::npos ||
        std::from_chars(payload.data() + space + 1, payload.data() + payload.size(), epoch).ec !=
            std::errc()) {
      co_return Error(ErrorCode::kCorruption, "a ping answer that is not \"node epoch\"");
    }
    co_return epoch;
  }

  // The transport and the cores' clients stamp the epoch this gateway knows on their calls
  // and refuse callers that know an older one.
  void StampEpoch(std::int64_t epoch) {
    transport_->SetEpoch(static_cast<std::uint64_t>(epoch));
    if (core_clients_) {
      core_clients_->SetEpoch(static_cast<std::uint64_t>(epoch));
    }
  }

  const ClusterConfig config_;
  const Clock& clock_;
  const std::uint64_t capacity_;  // this gateway's share of the warm pool, announced
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::unique_ptr<Membership> membership_;
  std::unique_ptr<PeerTransport> transport_;
  std::function<PeerTransportCounters()> transport_counters_;
  std::optional<peer::CoreClients> core_clients_;  // with TCP only
  std::unique_ptr<cluster::EtcdCatalog> catalog_;  // after StartCatalog
  std::unique_ptr<cluster::EtcdUsers> users_;      // after StartUsers
  std::thread thread_;
  std::uint64_t subscription_ = 0;
  std::atomic<std::shared_ptr<const Routing>> routing_;
  std::mutex handlers_mu_;  // guards handlers_
  std::map<std::uint32_t, std::shared_ptr<PeerHandler>> handlers_;
  bool joined_ = false;
  bool stopped_ = false;
  TaskGroup probes_;  // last: joined before what the probes use goes
};

}  // namespace

Result<std::unique_ptr<Cluster>> Cluster::Open(const Config& config, const Clock& clock) {
  if (!config.cluster) {
    return Error(ErrorCode::kInvalidArgument, "no [cluster] section");
  }
  auto node = std::make_unique<ClusterNode>(config, clock);
  STRATA_RETURN_IF_ERROR(node->Init());
  return std::unique_ptr<Cluster>(std::move(node));
}

}  // namespace strata::storage
