#include "storage/peer/make_transport.h"

#include <infiniband/verbs.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "storage/peer/rdma_transport.h"
#include "storage/peer/tcp_transport.h"

namespace strata::storage::peer {

int CountRdmaDevices() {
  int count = 0;
  // Without kernel support (no /sys/class/infiniband) the list is empty or null.
  ibv_device** devices = ibv_get_device_list(&count);
  if (devices == nullptr) {
    return 0;
  }
  ibv_free_device_list(devices);
  return count;
}

namespace {

MadeTransport MakeTcp(boost::asio::any_io_executor executor, const ClusterConfig& cluster) {
  TcpTransportOptions options;
  options.node = cluster.node;
  options.secret = cluster.secret;
  options.listen = cluster.peer_listen;
  auto tcp = std::make_unique<TcpTransport>(std::move(executor), std::move(options));
  TcpTransport* raw = tcp.get();
  MadeTransport made;
  made.transport = std::move(tcp);
  made.mechanism = "tcp";
  made.tcp = raw;
  made.counters = [raw] {
    const auto stats = raw->stats();
    return PeerTransportCounters{.accepted = stats.accepted,
                                 .refused = stats.refused,
                                 .sessions_failed = stats.sessions_failed,
                                 .calls_served = stats.handler_calls,
                                 .connects = stats.connects};
  };
  return made;
}

}  // namespace

Result<MadeTransport> MakePeerTransport(boost::asio::any_io_executor executor,
                                        const ClusterConfig& cluster,
                                        const RdmaDeviceProbe& probe) {
  if (cluster.transport == ClusterTransport::kTcp) {
    return MakeTcp(std::move(executor), cluster);
  }
  const int devices = probe();
  if (devices <= 0) {
    if (cluster.transport == ClusterTransport::kRdma) {
      return Error(ErrorCode::kUnavailable,
                   "[cluster] transport = \"rdma\", but this machine has no RDMA device "
                   "(ibv_get_device_list found none): use \"auto\" or \"tcp\"");
    }
    spdlog::info("cluster {}: RDMA is not available (no RDMA device); the peer transport is TCP",
                 cluster.name);
    return MakeTcp(std::move(executor), cluster);
  }
  RdmaTransportOptions options;
  options.node = cluster.node;
  options.secret = cluster.secret;
  options.listen = cluster.peer_listen;
  auto rdma = RdmaTransport::Make(std::move(executor), std::move(options));
  if (!rdma.ok()) {
    return Error(rdma.error().code, "the RDMA peer transport: " + rdma.error().message);
  }
  spdlog::info("cluster {}: the peer transport is RDMA ({} device(s))", cluster.name, devices);
  MadeTransport made;
  made.transport = std::move(rdma).value();
  made.mechanism = "rdma";
  made.counters = [] { return PeerTransportCounters{}; };
  return made;
}

}  // namespace strata::storage::peer
