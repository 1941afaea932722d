// Forwarding: in a cluster (storage/cluster.h) any gateway answers any request, and a
// request on a key goes to the key's primary owner (placement over the current membership
// view), which orders the key's changes. The gateway the client reached authenticates the
// request, then hands it on whole over the peer transport (method, target, every header,
// and the body as it arrives, in bounded chunks) and relays the owner's answer (its head,
// then its body, also in bounded chunks). The owner authenticates and serves it exactly as
// if the client had sent it there (ForwardedExchange), so read-after-write, conditional
// writes and every error are the same through any gateway.
//
// Local copies: a GET names the version this gateway holds of the key, as one of its
// replicas or in its read cache (storage/read_cache.h), in the forwarded head; the owner
// answers it as ever and, when the version it would serve is that one, sends no bytes,
// and this gateway sends them from its copy. A non-owner keeps a copy of what the owner
// streamed whole when it offers it. Only the bytes stay local: the answer is the owner's.
//
// What is forwarded: operations on a key (objects, their tags and attributes, restore,
// multipart uploads). Bucket and service operations are answered where they arrive (the
// bucket catalog is the cluster's). Without [cluster], nothing is.
//
// Threads: with the TCP transport both sides run on I/O threads only. The receiving side
// calls the owner through its core's own peer client (Cluster::MakeCoreClient); the
// owner's peer port hands the call's connection to one of its cores, which runs the
// request in that core's task group with the call's steps in place. With RDMA each peer
// call step hops to the cluster's executor and back (RunOn), on both sides. A hop is a
// round trip between threads, so steps that follow each other go in one: opening a
// bodiless request's call with reading its answer, the answer with the first chunk of
// its body (and the body's end when that chunk was all of it), and on the owner's side a
// response with a body that comes whole with its head.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/run_on.h"
#include "common/task_group.h"
#include "gateway/operation.h"
#include "gateway/services.h"
#include "storage/peer_transport.h"

namespace strata::gateway {

struct RequestContext;

// Where a request's peer-call steps run: in place, on the I/O thread the request runs on
// (its core's own peer client, Exchange::peer_client), or on the cluster's executor, one
// hop there and back per step (RunOn), when the gateway has no client per core (RDMA).
struct PeerLane {
  std::optional<boost::asio::any_io_executor> hop;  // empty: in place

  template <typename T>
  boost::asio::awaitable<T> Run(boost::asio::awaitable<T> task) const {
    if (!hop) {
      co_return co_await std::move(task);
    }
    co_return co_await RunOn(*hop, std::move(task));
  }
};

// Owns a peer call made in a lane: it is used and destroyed there only (a call destroyed
// mid-way drops its connection, a socket of that lane's thread).
class HeldPeerCall {
 public:
  HeldPeerCall(boost::asio::any_io_executor cluster, std::unique_ptr<storage::PeerCall> call)
      : hop_(std::move(cluster)), call_(std::move(call)) {}
  HeldPeerCall(const PeerLane& lane, std::unique_ptr<storage::PeerCall> call)
      : hop_(lane.hop), call_(std::move(call)) {}
  ~HeldPeerCall() {
    if (call_ && hop_) {
      boost::asio::post(*hop_, [call = std::move(call_)]() mutable { call.reset(); });
    }
  }
  HeldPeerCall(const HeldPeerCall&) = delete;
  HeldPeerCall& operator=(const HeldPeerCall&) = delete;
  storage::PeerCall* operator->() { return call_.get(); }
  // The call itself, for a step in the lane that may end it there (reset).
  std::unique_ptr<storage::PeerCall>& owned() { return call_; }

 private:
  std::optional<boost::asio::any_io_executor> hop_;
  std::unique_ptr<storage::PeerCall> call_;
};

// Whether `op` on this request is served by the key's primary owner rather than here.
bool IsForwardedOperation(S3Operation op);

// Forwards the request of `ctx` to the primary owner of its key when that is another
// gateway: returns true once it has answered the client (or failed, with the error),
// false when this gateway is the owner (or there is no cluster) and serves it itself.
// An owner that cannot be reached is tried again for up to about a second while the
// membership may still name a new one; then 503 SlowDown.
boost::asio::awaitable<Result<bool>> ForwardToOwner(RequestContext& ctx, S3Operation op);

// ForwardToOwner for a request whose key is known only from its body, POST Object's (its
// form names it): `read_so_far`, the body bytes this gateway has read, as the client sent
// them, go to the owner first, then the rest. ctx.target.key is set.
boost::asio::awaitable<Result<bool>> ForwardFormToOwner(RequestContext& ctx,
                                                        std::string read_so_far);

// GETs this gateway forwarded to their key's primary, by where their bytes came from: the
// owner (streamed over the peer port), this gateway's replica of the key, or its read
// cache (the owner confirmed the version either held). Process-wide, for /metrics.
struct ForwardedGetCounts {
  std::uint64_t from_owner = 0;
  std::uint64_t from_replica = 0;
  std::uint64_t from_cache = 0;
};
ForwardedGetCounts ForwardedGets();

// A member's answer to a fan-out (FanOut).
struct FanOutAnswer {
  unsigned status = 0;
  std::string body;  // at most kMaxFanOutAnswer bytes
};
inline constexpr std::size_t kMaxFanOutAnswer = 8 * 1024 * 1024;

// Sends the request of `ctx` with `body` (its body, read whole already: a request of a few
// MiB at most, such as DeleteObjects) to the member at `peer` as a fan-out: the member
// authenticates it as a forwarded request and answers for the keys it owns only
// (Exchange::fan_out). Its answer, read whole.
boost::asio::awaitable<Result<FanOutAnswer>> FanOut(RequestContext& ctx, const std::string& peer,
                                                    std::string_view body);

// The owner's side: serves one forwarded request (a kPeerOpS3Request call) by running it
// through HandleRequest on `io` in `tasks`. A call that cannot be started there (the
// server is stopping) is refused with a retryable kUnavailable.
// `fan_out`: a kPeerOpS3FanOut call, served for the keys this gateway owns only.
// `on_io`: the call itself is served on `io` (its session was handed to that core), so
// the call's steps run in place; else they hop to the executor the call is served on.
storage::PeerTask<void> ServeForwarded(storage::PeerIncomingCall& call, Services& services,
                                       boost::asio::any_io_executor io, TaskGroup& tasks,
                                       bool fan_out = false, bool on_io = false);

}  // namespace strata::gateway
