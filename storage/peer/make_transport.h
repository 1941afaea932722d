// MakePeerTransport: which PeerTransport a gateway of a cluster uses, chosen once at start
// by what the machine has (private to storage/; storage/cluster.cc calls it). [cluster]
// transport: "auto" (the default) takes RDMA when ibv_get_device_list finds a device and
// TCP otherwise, logging one line that says RDMA is not available and TCP is used; "tcp"
// takes TCP; "rdma" takes RDMA or fails to start (kUnavailable) without a device.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/config.h"
#include "common/error.h"
#include "storage/cluster.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

class TcpTransport;

struct MadeTransport {
  std::unique_ptr<PeerTransport> transport;
  std::string mechanism;                            // "tcp" or "rdma"
  std::function<PeerTransportCounters()> counters;  // for Cluster::Status; any thread
  TcpTransport* tcp = nullptr;                      // `transport` when it is TCP (for its hand-off)
};

// How many RDMA devices the machine has (ibv_get_device_list); 0 without kernel support.
using RdmaDeviceProbe = std::function<int()>;
int CountRdmaDevices();

Result<MadeTransport> MakePeerTransport(boost::asio::any_io_executor executor,
                                        const ClusterConfig& cluster,
                                        const RdmaDeviceProbe& probe = CountRdmaDevices);

}  // namespace strata::storage::peer
