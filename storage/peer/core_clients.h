// CoreClients: the peer transport's clients on the server's I/O threads (private to
// storage/; Cluster::MakeCoreClient hands them out). Each is a TcpTransport that never
// serves, bound to one core's executor, so a call made through it (a request forwarded to
// its key's owner) runs on that core from its first byte to its last: no hop to the
// cluster's thread and back per step. The registry stamps the membership's epoch on every
// client it made and sums their counters for the cluster's status.
//
// Threads: any. A client is used as TcpTransport says, on its core's executor; its Stop
// (from another thread, while the core still runs) closes its pooled connections there.
// The registry outlives its clients' use through a shared state, so a client may be
// destroyed after the cluster stopped.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>

#include "common/config.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

class CoreClients {
 public:
  explicit CoreClients(const ClusterConfig& cluster);
  ~CoreClients();
  CoreClients(const CoreClients&) = delete;
  CoreClients& operator=(const CoreClients&) = delete;

  // A client bound to `core` (an io_context run by one thread), stamped with the latest
  // epoch SetEpoch was given.
  std::unique_ptr<PeerTransport> Make(boost::asio::any_io_executor core);
  // Stamps `epoch` on every client, now and made later.
  void SetEpoch(std::uint64_t epoch);
  // Connections the clients opened (handshake done), over all of them, alive or gone.
  std::uint64_t connects() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace strata::storage::peer
