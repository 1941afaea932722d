// The peer transport's connection state machines, without sockets (private to storage/):
// TcpTransport (storage/peer/tcp_transport.h) moves bytes between them and the network,
// and tests and the peer_session fuzz harness drive them directly.
//
// ServerSession is the acceptor's side of one connection. It takes the bytes the caller
// sent, in any pieces, and yields one event at a time:
//
//   kHello     kSend: the kHelloAck to send (with this side's proof)
//   kProof     kAuthenticated: the caller's proof held
//   kIdle      kRequest: a request (only once authenticated)
//   kStream    kData: a chunk of the request's stream; kEnd: its last frame, its length
//              and CRC64NVME checked
//
// Anything else fails the session for good (an error; the connection is to be closed):
// a bad frame (FrameDecoder), a frame of a type or request id the state does not expect, a
// hello that does not parse, a wrong proof (kAccessDenied), a caller's epoch below the
// session's (in the hello or a request: kPreconditionFailed, IsStaleEpoch). For a stale
// epoch, Farewell() holds a kError frame telling the caller the epoch to refresh to, to be
// sent before closing; nothing else is ever answered to an unauthenticated caller.
//
// Epochs: the caller's epoch is compared with the session's epoch at the time of its hello
// and of each request (Next's `epoch`), never with an earlier one: a membership change
// during a connection's life fences the requests made after it.
//
// ClientHandshake is the connector's side of the handshake. Neither class is thread-safe;
// each belongs to one connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "storage/peer/wire.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

class ServerSession {
 public:
  enum class Kind { kSend, kAuthenticated, kRequest, kData, kEnd };
  struct Event {
    Kind kind = Kind::kSend;
    std::string bytes = {};        // kSend: what to write; kData: the chunk
    std::uint64_t request_id = 0;  // kRequest
    PeerRequest request = {};      // kRequest
  };

  // `nonce`: NewNonce(), given so that tests and the fuzz harness are deterministic.
  ServerSession(std::string node, std::string secret, std::string nonce);

  // Takes bytes from the front of `in` (advancing it) until one event, and returns it;
  // nullopt when `in` ran out first. An error is final (see above).
  Result<std::optional<Event>> Next(std::string_view& in, std::uint64_t epoch);

  // A kError frame to send before closing, after a failure that tells the caller why.
  const std::string& farewell() const { return farewell_; }
  bool authenticated() const { return state_ == State::kIdle || state_ == State::kStream; }
  // Between calls: no request's stream is being read.
  bool idle() const { return state_ == State::kIdle; }
  // The caller's node name, once it said it.
  const std::string& peer() const { return peer_.node; }
  std::uint64_t request_id() const { return request_id_; }
  // Bytes held for the frame being read: at most a frame header and kMaxFramePayload.
  std::size_t buffered() const { return decoder_.buffered(); }

 private:
  enum class State { kHello, kProof, kIdle, kStream, kFailed };
  Result<std::optional<Event>> OnFrame(Frame frame, std::uint64_t epoch);
  Error Fail(Error error);

  std::string secret_;
  Hello self_;  // without a proof: what the proofs cover
  Hello peer_;
  State state_ = State::kHello;
  FrameDecoder decoder_;
  std::uint64_t request_id_ = 0;  // the last request's
  StreamCheck stream_;
  std::string farewell_;
  std::optional<Error> failed_;
};

class ClientHandshake {
 public:
  ClientHandshake(std::string node, std::string secret, std::uint64_t epoch, std::string nonce);

  // The kHello frame to send first.
  Result<std::string> HelloFrame() const;
  // The acceptor's answer: the kHelloAck frame to send back. kAccessDenied for a proof
  // that does not hold (the acceptor holds another secret), the acceptor's error for a
  // kError (a stale epoch), kCorruption for anything else.
  Result<std::string> OnAnswer(const Frame& frame);
  // The acceptor's node name and epoch, once OnAnswer succeeded.
  const Hello& peer() const { return peer_; }

 private:
  std::string secret_;
  Hello self_;
  Hello peer_;
};

}  // namespace strata::storage::peer
