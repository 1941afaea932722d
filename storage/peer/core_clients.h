// CoreClients: the peer transport's ends on the server's I/O threads (private to storage/;
// Cluster::MakeCoreClient hands them out). Each is a TcpTransport bound to one core's
// executor that never listens, so a call made through it (a request forwarded to its
// key's owner) runs on that core from its first byte to its last: no hop to the cluster's
// thread and back per step. Each also hosts the sessions the peer port hands off (Adopt:
// those whose calls are forwarded requests), which then run on that core with the handler
// it was made with. The registry stamps the membership's epoch on every one it made and
// sums their counters for the cluster's status.
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
#include "storage/peer/tcp_transport.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

class CoreClients {
 public:
  explicit CoreClients(const ClusterConfig& cluster);
  ~CoreClients();
  CoreClients(const CoreClients&) = delete;
  CoreClients& operator=(const CoreClients&) = delete;

  // A client bound to `core` (an io_context run by one thread), stamped with the latest
  // epoch SetEpoch was given, that hosts handed-off sessions with `handler` (when set).
  std::unique_ptr<PeerTransport> Make(boost::asio::any_io_executor core, PeerHandler handler);
  // Hands `session` to the next client that hosts, in turn (TcpTransport::Adopt); false,
  // with the session untouched, when none does.
  bool Adopt(std::unique_ptr<HandedSession>& session);
  // Stamps `epoch` on every client, now and made later.
  void SetEpoch(std::uint64_t epoch);
  // Over all the clients, alive or gone: the connections they opened (handshake done), the
  // calls their hosted sessions served, and the hosted sessions closed for a bad frame.
  struct Counters {
    std::uint64_t connects = 0;
    std::uint64_t calls_served = 0;
    std::uint64_t sessions_failed = 0;
  };
  Counters counters() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace strata::storage::peer
