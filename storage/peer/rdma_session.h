// RdmaSession: one RDMA connection's state machine, without verbs (private to storage/).
// RdmaTransport (storage/peer/rdma_transport.h) feeds it events (a message received, a
// READ completed or failed, a SEND completed) and the local side's steps (call, write,
// respond, consume) and carries out the actions it returns, in order: post a SEND, post an
// RDMA READ, deliver a request, a response, a chunk or a stream's end, release a slot the
// peer read, end the call, close the connection. Tests drive two sessions against each
// other directly (tests/unit/storage/rdma_session_test.cc).
//
// The connection, after rdma_cm exchanged both sides' RdmaRegion (storage/peer/rdma_wire.h):
//
//   connector (kConnect)                         acceptor (kAccept)
//   kHello {node, epoch, nonce}             ->
//                                           <-   kHelloAck {..., proof(accept)}
//   kHelloAck {..., proof(connect)}         ->   (authenticated)
//   kRequest id {op, epoch, flags, payload or descriptor}
//   kData id {descriptor 1} ...             ->   READs, kCredit id {1} ... once consumed
//   kData|kFlagLast id {length, CRC64NVME}  ->
//                                           <-   kResponse id {...} or kError id
//   (READs, kCredit back)                   <-   kData id {descriptors}, kData|kFlagLast
//
// One call at a time; it ends (kCallDone) once the response and both streams are through
// and every chunk was credited back; the connection then takes the next call (request ids
// increase). A kError as the response ends the call cleanly; any other failure (a bad
// message, a message the state does not expect, a descriptor outside the peer's region or
// beyond its credits, a CRC mismatch, a READ or SEND that failed, a stale epoch, a wrong
// proof) closes the connection (kClose, the error says why; a stale epoch's kError is sent
// first, as TCP does). Once closed, every event returns nothing and every step an error.
//
// Memory: at most `credits` chunks per stream direction plus one remote payload are held
// by either side of a call (storage/peer/rdma_stream.h), and at most max_sends_in_flight()
// SENDs (both sides' credits + 4) are in flight: the transport posts that many RECVs and
// send slots per connection, and the protocol never needs more.
//
// Not thread-safe; one per connection, on the transport's executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "storage/peer/handshake.h"
#include "storage/peer/rdma_stream.h"
#include "storage/peer/rdma_wire.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

class RdmaSession {
 public:
  enum class Role { kConnect, kAccept };

  struct Options {
    Role role = Role::kConnect;
    std::string node;
    std::string secret;
    std::string nonce;          // NewNonce(); given so that tests are deterministic
    std::uint32_t credits = 4;  // what this side announced in its RdmaRegion
    RdmaRegion peer = {};       // what the peer announced
  };

  enum class Act {
    kSend,           // post a SEND of `message`
    kRead,           // post an RDMA READ of `read` into a leased slot of this side
    kAuthenticated,  // the handshake is done
    kRequest,        // (acceptor) serve `request`
    kResponse,       // (connector) the call's `response`
    kChunk,          // chunk `sequence` of the peer's stream is in its slot, verified
    kStreamEnd,      // the peer's stream ended, its length and CRC64NVME verified
    kRelease,        // the peer read (and consumed) this side's slot of `sequence`
    kCallDone,       // the call is over; the connection takes another
    kCallError,      // the call failed with the peer's `error`; the connection stays
    kClose,          // close the connection (after any kSend before it): `error` says why
  };
  struct Action {
    Act act = Act::kSend;
    std::string message = {};         // kSend
    ReadDescriptor read = {};         // kRead
    std::uint64_t sequence = 0;       // kChunk, kRelease (0: a remote payload)
    PeerRequest request = {};         // kRequest
    PeerResponse response = {};       // kResponse
    std::optional<Error> error = {};  // kCallError, kClose
  };
  using Actions = std::vector<Action>;

  explicit RdmaSession(Options options);

  // Connector: the hello to send first. Acceptor: nothing.
  Actions Start(std::uint64_t epoch);

  // Events. `epoch`: this side's membership epoch now (the acceptor refuses older ones).
  Actions OnMessage(std::string_view message, std::uint64_t epoch);
  // The READ of `sequence` (0: the remote payload) completed into this side's slot, which
  // now holds `bytes`. For sequence 0 the slot may go once this returns (the payload was
  // copied); a chunk's slot stays until Consume.
  Actions OnReadCompleted(std::uint64_t sequence, std::string_view bytes);
  Actions OnReadFailed(std::uint64_t sequence, const Error& error);
  Actions OnSendCompleted(bool ok);

  // The local side's steps; kInvalidArgument (the caller's bug) when the state does not
  // allow one, an error of the session when it is closed. Connector: Call, then (when the
  // request has a stream) Write... CloseStream, then Consume each delivered chunk.
  // Acceptor: Consume the request's chunks, then Respond or RespondError, then Write...
  // CloseStream. `remote`: the payload's descriptor (sequence 0) when it is over
  // kRdmaMaxInline (then request.payload / response.payload is empty).
  Result<Actions> Call(const PeerRequest& request, const std::optional<ReadDescriptor>& remote,
                       std::uint64_t epoch);
  Result<Actions> Respond(const PeerResponse& response,
                          const std::optional<ReadDescriptor>& remote);
  Result<Actions> RespondError(const Error& error);
  // A chunk of this side's stream, `bytes` in the slot `d` describes.
  Result<Actions> Write(const ReadDescriptor& d, std::string_view bytes);
  Result<Actions> CloseStream();
  Result<Actions> Consume(std::uint64_t sequence);

  bool authenticated() const { return state_ == State::kIdle || state_ == State::kCall; }
  bool idle() const { return state_ == State::kIdle; }
  bool closed() const { return state_ == State::kClosed; }
  // Whether Write may go now (a credit is free).
  bool can_write() const { return writer_ && writer_->can_write(); }
  std::uint64_t next_sequence() const { return writer_ ? writer_->next_sequence() : 0; }
  std::size_t sends_in_flight() const { return sends_in_flight_; }
  std::size_t max_sends_in_flight() const {
    return std::size_t{options_.credits} + options_.peer.credits + 4;
  }
  // The peer's node name, once it said it.
  const std::string& peer() const { return peer_.node; }

 private:
  enum class State { kHello, kProof, kIdle, kCall, kClosed };

  Actions OnFrame(const Frame& frame, std::uint64_t epoch);
  void OnHello(const Frame& frame, std::uint64_t epoch, Actions& out);
  void OnProof(const Frame& frame, Actions& out);
  void OnAnswer(const Frame& frame, Actions& out);
  void OnRequest(const Frame& frame, std::uint64_t epoch, Actions& out);
  void OnResponse(const Frame& frame, Actions& out);
  void OnError(const Frame& frame, Actions& out);
  void OnData(const Frame& frame, Actions& out);
  void OnCredit(const Frame& frame, Actions& out);
  void AfterRead(Actions& out);
  void MaybeDone(Actions& out);
  bool Send(FrameType type, std::uint16_t flags, std::string payload, Actions& out);
  void Close(Error error, Actions& out);
  Result<void> Usable() const;

  Options options_;
  State state_ = State::kHello;
  Hello self_;
  Hello peer_;
  std::uint64_t request_id_ = 0;
  std::size_t sends_in_flight_ = 0;
  std::optional<Error> closed_error_;

  // The call in progress (state kCall).
  bool answered_ = false;                       // the response (or its kError) went out / came in
  bool incoming_stream_ = false;                // the peer's message announced a stream
  bool outgoing_stream_ = false;                // this side's message announced one
  std::optional<ReadDescriptor> payload_read_;  // a remote payload being READ
  std::optional<PeerRequest> pending_request_;  // its request, delivered once read
  std::optional<PeerResponse> pending_response_;
  bool payload_lent_ = false;   // this side's remote payload, until its credit
  bool end_delivered_ = false;  // kStreamEnd went out for the peer's stream
  std::optional<RdmaStreamWriter> writer_;
  std::optional<RdmaStreamReader> reader_;
};

}  // namespace strata::storage::peer
