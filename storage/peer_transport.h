// PeerTransport: how one gateway of a cluster calls another (DESIGN.md "Cluster"): the peer
// tier's reads and writes and the forwarding of metadata changes to a key's owners go
// through it. TcpTransport (storage/peer/tcp_transport.h) is the implementation over TCP;
// RdmaTransport (storage/peer/rdma_transport.h, built but never run on RDMA hardware) the
// one over RDMA; storage/peer/make_transport.h chooses at start. Decorators (metrics,
// fault injection) wrap them.
//
// The model is a call: the caller opens a call to a peer ("host:port") with one request
// (an op code of the caller's own numbering and an opaque payload of at most
// kMaxPeerPayload bytes, e.g. an encoded metadata change), optionally followed by a stream
// of bytes it writes chunk by chunk; it then reads one response (a status word and a
// payload), optionally followed by a stream it reads chunk by chunk. Chunks are at most
// kMaxPeerChunk bytes, and each side holds at most one chunk per direction of a call, so a
// call's memory is bounded whatever the stream's size. Every chunk is checked by its
// frame's CRC64NVME and each whole stream by a CRC64NVME of all its bytes, so a stream
// that arrives is the stream that was sent.
//
// Before any request, both sides prove that they hold the cluster's secret (an HMAC
// handshake, storage/peer/handshake.h), and the callee refuses a caller whose membership
// epoch is older than its own (the caller must refresh its membership, then retry).
//
// Errors (common/error.h):
//   kUnavailable (retryable)  the peer cannot be reached, the connection broke, or the
//                             transport is stopping;
//   kTimedOut (retryable)     the peer stopped answering in the middle of a call;
//   kAccessDenied             the handshake was refused (the peers hold different secrets);
//   kCorruption               a frame or a stream failed its CRC, or broke the protocol;
//   kPreconditionFailed (retryable, IsStaleEpoch)  the callee's membership epoch is newer;
//   anything else             what the callee's handler returned, code, message and
//                             retryable flag as it set them.
// After any error but a handler's own, the call is over: its connection is dropped.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/error.h"

namespace strata::storage {

template <typename T>
using PeerTask = boost::asio::awaitable<Result<T>>;

// A request's or response's payload, and a stream's chunk, each travel in one frame of at
// most 1 MiB; the payload shares its frame with a small header.
inline constexpr std::size_t kMaxPeerChunk = std::size_t{1} << 20;
inline constexpr std::size_t kMaxPeerPayload = kMaxPeerChunk - 64;

struct PeerRequest {
  std::uint32_t op = 0;      // what the callee is asked to do; the callers' own numbering
  std::string payload = {};  // at most kMaxPeerPayload bytes
  bool has_stream = false;   // the caller writes a stream of bytes after the request
};

struct PeerResponse {
  std::uint32_t status = 0;  // the handler's own status word (its callers give it meaning)
  std::string payload = {};  // at most kMaxPeerPayload bytes
  bool has_stream = false;   // the handler writes a stream of bytes after the response
};

// The caller's side of one call, made by PeerTransport::Call. In order: Write each chunk
// of the request's stream then CloseRequest (only when the request has a stream), then
// Response, then Read until it returns nullopt (only when the response has a stream).
// A call whose steps all succeeded hands its connection back for another call; a call
// destroyed before that drops it. One coroutine at a time, on the transport's executor.
class PeerCall {
 public:
  virtual ~PeerCall() = default;

  // Sends one chunk (1 to kMaxPeerChunk bytes) of the request's stream; returns once the
  // chunk is on its way (written to the socket), not when the callee has read it.
  virtual PeerTask<void> Write(std::string chunk) = 0;
  // Ends the request's stream: sends its length and CRC64NVME.
  virtual PeerTask<void> CloseRequest() = 0;
  // The callee's response, or its handler's error (see the list above).
  virtual PeerTask<PeerResponse> Response() = 0;
  // The next chunk of the response's stream; nullopt once the stream ended and its
  // length and CRC64NVME matched.
  virtual PeerTask<std::optional<std::string>> Read() = 0;
};

// The callee's side of one call, given to the handler. In order: Read the request's
// stream (or not: Respond drops what the handler did not read), Respond, then Write the
// response's stream and CloseResponse (only when the response has one). Valid during the
// handler's run only, on the transport's executor.
class PeerIncomingCall {
 public:
  virtual ~PeerIncomingCall() = default;

  // The caller's node name, as it proved it in the handshake.
  virtual const std::string& peer() const = 0;
  virtual const PeerRequest& request() const = 0;
  // The next chunk of the request's stream; nullopt at its end (verified), and always
  // nullopt for a request without a stream.
  virtual PeerTask<std::optional<std::string>> Read() = 0;
  virtual PeerTask<void> Respond(PeerResponse response) = 0;
  virtual PeerTask<void> Write(std::string chunk) = 0;
  virtual PeerTask<void> CloseResponse() = 0;
};

// Serves one call. An error returned before Respond goes to the caller as its response
// (its code, message and retryable flag); one returned during the response's stream ends
// that stream with the error. A handler that returns without responding answers
// kInternal. A handler must not throw (strata's rule): TcpTransport would log the
// exception and close the connection, and the caller would see kUnavailable.
using PeerHandler = std::function<PeerTask<void>(PeerIncomingCall&)>;

class PeerTransport {
 public:
  virtual ~PeerTransport() = default;

  // Starts serving calls with `handler` on the implementation's listen address.
  // kInvalidArgument / kUnavailable when it cannot listen. Once only.
  virtual Result<void> Serve(PeerHandler handler) = 0;
  // Opens a call to `peer` ("host:port") and sends `request` (a pooled connection when
  // one is idle, else a new one, authenticated first). `request` is read before the call
  // first suspends, so a caller's object that lives through the co_await suffices. (By
  // reference: GCC 12 destroys a by-value aggregate parameter of a coroutine twice, and
  // PeerRequest is an aggregate.)
  virtual PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer,
                                                   const PeerRequest& request) = 0;
  // The membership epoch this gateway knows: stamped on its hellos and requests, and the
  // least a caller's must be. Any thread; the membership watcher calls it.
  virtual void SetEpoch(std::uint64_t epoch) = 0;
  // Stops accepting, ends every call in flight (they fail with kUnavailable) and waits
  // until nothing of the transport runs. Blocks: call it from a thread other than the
  // one running the transport's executor, while that executor's io_context still runs.
  virtual void Stop() = 0;
};

// Whether `error` is a callee's refusal of a stale membership epoch; `epoch` gets the
// callee's epoch then. The epoch travels as the Error's detail "StrataPeerEpoch": a caller
// that turns such an error into an S3 answer drops it (or maps the error) first.
bool IsStaleEpoch(const Error& error, std::uint64_t* epoch = nullptr);

}  // namespace strata::storage
