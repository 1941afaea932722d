// Session: one client connection, on one core. Reads request headers with a deadline
// (slow clients cannot hold a slot), hands each request to Dispatch as an Exchange,
// streams bodies through fixed buffers, and keeps the connection alive when it safely
// can. Implemented for plain TCP and TLS streams.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <cstddef>
#include <functional>
#include <list>

#include "gateway/metrics.h"
#include "gateway/services.h"

namespace strata::gateway {

// Per-core state shared by the sessions of that core; touched only on its thread.
struct CoreState {
  bool stopping = false;
  // Called on shutdown for each open session: closes it if idle between requests.
  std::list<std::function<void()>> idle_cancellers;
  // The sessions idle between requests (or before their first), oldest first. At
  // server.max_connections the acceptor pops the first and calls it: that session closes.
  std::list<std::function<void()>> idle_sessions;
  // Client connections open over every core (the acceptor adds, a session's end
  // subtracts); compared with server.max_connections at accept.
  std::atomic<std::size_t>* open_connections = nullptr;
  // This core's counters (written only on this thread) and the registry that sums every
  // core's for a scrape; set by Server before the core serves.
  MetricsShard* metrics = nullptr;
  const GatewayMetrics* all_metrics = nullptr;
  // In a cluster with a TCP peer transport: this core's own client of it
  // (Cluster::MakeCoreClient), which forwarding calls the key's owner through; else null.
  storage::PeerTransport* peer_client = nullptr;
};

boost::asio::awaitable<void> ServePlain(boost::asio::ip::tcp::socket socket, CoreState& core,
                                        Services& services);
boost::asio::awaitable<void> ServeTls(boost::asio::ip::tcp::socket socket,
                                      boost::asio::ssl::context& tls, CoreState& core,
                                      Services& services);

}  // namespace strata::gateway
