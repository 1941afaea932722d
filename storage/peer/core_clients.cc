#include "storage/peer/core_clients.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace strata::storage::peer {

struct CoreClients::Shared {
  TcpTransportOptions options;
  std::mutex mu;  // guards what follows
  std::uint64_t epoch = 0;
  std::vector<TcpTransport*> live;  // in the order they were made
  std::size_t next_host = 0;        // the one Adopt tries first
  CoreClients::Counters gone;       // of the clients destroyed already
};

namespace {

// A TcpTransport that stays in the registry while it lives.
class CoreClient final : public PeerTransport {
 public:
  CoreClient(std::shared_ptr<CoreClients::Shared> shared, boost::asio::any_io_executor core,
             PeerHandler handler)
      : shared_(std::move(shared)), transport_(std::move(core), shared_->options) {
    if (handler) {
      (void)transport_.Host(std::move(handler));  // cannot fail: a fresh transport
    }
    std::lock_guard lock(shared_->mu);
    transport_.SetEpoch(shared_->epoch);
    shared_->live.push_back(&transport_);
  }
  ~CoreClient() override {
    std::lock_guard lock(shared_->mu);
    std::erase(shared_->live, &transport_);
    const auto stats = transport_.stats();
    shared_->gone.connects += stats.connects;
    shared_->gone.calls_served += stats.handler_calls;
    shared_->gone.sessions_failed += stats.sessions_failed;
  }

  Result<void> Serve(PeerHandler) override {
    return Error(ErrorCode::kInvalidArgument, "a core's peer client does not serve");
  }
  PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer, const PeerRequest& request) override {
    return transport_.Call(std::move(peer), request);
  }
  void SetEpoch(std::uint64_t epoch) override { transport_.SetEpoch(epoch); }
  void Stop() override { transport_.Stop(); }

 private:
  std::shared_ptr<CoreClients::Shared> shared_;
  TcpTransport transport_;
};

}  // namespace

CoreClients::CoreClients(const ClusterConfig& cluster) : shared_(std::make_shared<Shared>()) {
  shared_->options.node = cluster.node;
  shared_->options.secret = cluster.secret;
}

CoreClients::~CoreClients() = default;

std::unique_ptr<PeerTransport> CoreClients::Make(boost::asio::any_io_executor core,
                                                 PeerHandler handler) {
  return std::make_unique<CoreClient>(shared_, std::move(core), std::move(handler));
}

bool CoreClients::Adopt(std::unique_ptr<HandedSession>& session) {
  // Under the lock: a client leaves the registry only once destroyed, after its Stop.
  std::lock_guard lock(shared_->mu);
  const std::size_t n = shared_->live.size();
  for (std::size_t i = 0; i < n; ++i) {
    TcpTransport* host = shared_->live[(shared_->next_host + i) % n];
    if (host->Adopt(session)) {
      shared_->next_host = (shared_->next_host + i + 1) % n;
      return true;
    }
  }
  return false;
}

void CoreClients::SetEpoch(std::uint64_t epoch) {
  std::lock_guard lock(shared_->mu);
  shared_->epoch = epoch;
  for (TcpTransport* client : shared_->live) {
    client->SetEpoch(epoch);
  }
}

CoreClients::Counters CoreClients::counters() const {
  std::lock_guard lock(shared_->mu);
  Counters total = shared_->gone;
  for (const TcpTransport* client : shared_->live) {
    const auto stats = client->stats();
    total.connects += stats.connects;
    total.calls_served += stats.handler_calls;
    total.sessions_failed += stats.sessions_failed;
  }
  return total;
}

}  // namespace strata::storage::peer
