#include "storage/peer/core_clients.h"

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "storage/peer/tcp_transport.h"

namespace strata::storage::peer {

struct CoreClients::Shared {
  TcpTransportOptions options;
  std::mutex mu;  // guards what follows
  std::uint64_t epoch = 0;
  std::set<TcpTransport*> live;
  std::uint64_t gone_connects = 0;  // of the clients destroyed already
};

namespace {

// A TcpTransport that stays in the registry while it lives.
class CoreClient final : public PeerTransport {
 public:
  CoreClient(std::shared_ptr<CoreClients::Shared> shared, boost::asio::any_io_executor core)
      : shared_(std::move(shared)), transport_(std::move(core), shared_->options) {
    std::lock_guard lock(shared_->mu);
    transport_.SetEpoch(shared_->epoch);
    shared_->live.insert(&transport_);
  }
  ~CoreClient() override {
    std::lock_guard lock(shared_->mu);
    shared_->live.erase(&transport_);
    shared_->gone_connects += transport_.stats().connects;
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

std::unique_ptr<PeerTransport> CoreClients::Make(boost::asio::any_io_executor core) {
  return std::make_unique<CoreClient>(shared_, std::move(core));
}

void CoreClients::SetEpoch(std::uint64_t epoch) {
  std::lock_guard lock(shared_->mu);
  shared_->epoch = epoch;
  for (TcpTransport* client : shared_->live) {
    client->SetEpoch(epoch);
  }
}

std::uint64_t CoreClients::connects() const {
  std::lock_guard lock(shared_->mu);
  std::uint64_t total = shared_->gone_connects;
  for (const TcpTransport* client : shared_->live) {
    total += client->stats().connects;
  }
  return total;
}

}  // namespace strata::storage::peer
