// TcpTransport: the PeerTransport over TCP (private to storage/; main makes it, the
// cluster's code sees only storage/peer_transport.h). Asio and C++20 coroutines on the
// executor it is given, which must be one io_context run by one thread (a core's).
//
// Server (Serve): an accept loop on `listen`; each connection a session in the transport's
// task group: the handshake (storage/peer/session.h) within `handshake_timeout`, then
// calls one after the other, each given to the handler. A connection that fails the
// handshake or sends anything the protocol does not expect (garbage, a bad CRC, a request
// before the handshake, a stale epoch) is logged once and closed at once; the handler
// never sees it. At most `max_connections` connections at once: one over is closed as soon
// as it is accepted. Memory per connection: one read buffer (kReadBufferBytes) and one
// frame being decoded (at most a header and kMaxFramePayload).
//
// Client (Call): per peer, a pool of at most `max_idle_per_peer` idle authenticated
// connections; a call takes one (or connects and runs the handshake, within
// `connect_timeout` and `handshake_timeout`), has it to itself, and hands it back when it
// ended cleanly. A connection that broke, timed out or saw a bad frame is closed, never
// reused; an idle one the peer closed meanwhile is noticed before reuse and dropped.
//
// Hand-off (SetHandOff, Host, Adopt): a transport that serves the peer port on the
// cluster's thread can hand the sessions of some ops to transports on the server's I/O
// threads (one per core, each hosting), so that those calls (forwarded S3 requests) are
// served on an I/O thread without a hop to the cluster's thread and back for each step.
// Only authenticated sessions move; once moved they no longer count toward the port's
// max_connections (the callers' pools bound them: max_idle_per_peer per caller's core).
//
// Threads: construct, Serve, SetEpoch, port, stats and Stop from any thread (Stop as
// PeerTransport says); Call and everything of a PeerCall only in coroutines on the
// executor. Owns its sockets and its task group; the handler and the io_context are the
// caller's and outlive Stop. The destructor stops the transport if Stop was not called
// (so the io_context must then still run).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "storage/peer_transport.h"

namespace strata::storage::peer {

inline constexpr std::size_t kReadBufferBytes = 64 * 1024;

struct TcpTransportOptions {
  std::string node;                    // [cluster] node: this gateway's name in handshakes
  std::string secret;                  // [cluster] secret
  std::string listen = "127.0.0.1:0";  // [cluster] peer_listen; port 0 picks a free one
  std::size_t max_connections = 256;   // accepted connections open at once
  // Idle client connections kept per peer: as many as a gateway has calls in flight to one
  // peer under load (64 clients' GETs through a non-owner), or most calls pay a connect
  // and a handshake (8 here cut the warm 4 KiB GET's rate by a third).
  std::size_t max_idle_per_peer = 64;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds handshake_timeout{5'000};
  // In a call, the longest wait for the peer to take or send a byte: kTimedOut after.
  // (An idle server connection waits for its next request without a limit.)
  std::chrono::milliseconds io_timeout{30'000};
};

// Counters, for tests and metrics. Any thread.
struct TcpTransportStats {
  std::uint64_t accepted = 0;         // connections accepted and served
  std::uint64_t refused = 0;          // over max_connections, closed at once
  std::uint64_t authenticated = 0;    // server sessions whose handshake succeeded
  std::uint64_t sessions_failed = 0;  // server sessions closed for a bad frame or handshake
  std::uint64_t handler_calls = 0;    // calls handed to the handler
  std::uint64_t connects = 0;         // client connections made (handshake done)
  std::uint64_t reused = 0;           // client calls that took a pooled connection
  std::size_t peak_buffered = 0;      // most bytes one connection held undelivered
};

// A server session on its way from the transport that accepted it to a core's transport
// (SetHandOff, Adopt): its connection, authenticated, and the call it stopped at.
struct HandedSession;

struct SessionHandOff {
  // Whether a call of `op` moves its session: that call and every later one of the
  // connection are served by the transport that adopts it.
  std::function<bool(std::uint32_t op)> takes;
  // Gives the session to a core's transport (Adopt); false, with the session untouched,
  // when none takes it now: the session then stays, and its call is served here.
  std::function<bool(std::unique_ptr<HandedSession>& session)> adopt;
};

class TcpTransport final : public PeerTransport {
 public:
  TcpTransport(boost::asio::any_io_executor executor, TcpTransportOptions options);
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  Result<void> Serve(PeerHandler handler) override;
  PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer, const PeerRequest& request) override;
  void SetEpoch(std::uint64_t epoch) override;
  void Stop() override;

  // Before Serve: a session whose call is of an op `hand_off` takes moves to a core's
  // transport, which serves that call and every later one of the connection on its own
  // thread (with its own handler, which gets every op). Callers keep such ops on
  // connections of their own, as the cores' clients do.
  void SetHandOff(SessionHandOff hand_off);
  // Serves the sessions other transports hand off (Adopt) with `handler`, on this
  // transport's executor, without listening. Once, instead of Serve.
  Result<void> Host(PeerHandler handler);
  // Serves a handed-off session from its call on. False, with the session untouched, when
  // this transport does not host. Any thread. (Once it is stopping, the session is
  // closed: its caller sees the connection break, a retryable failure.)
  bool Adopt(std::unique_ptr<HandedSession>& session);

  // The port Serve listens on (the one picked for port 0); 0 before.
  std::uint16_t port() const;
  TcpTransportStats stats() const;

  struct State;  // shared with the calls in flight

 private:
  std::shared_ptr<State> state_;
};

}  // namespace strata::storage::peer
