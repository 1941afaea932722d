#include "gateway/forward.h"

#include <spdlog/spdlog.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <memory>
#include <optional>

#include "common/co_try.h"
#include "gateway/dispatch.h"
#include "gateway/forward_wire.h"
#include "gateway/forwarded_exchange.h"
#include "gateway/handlers/context.h"
#include "storage/cluster.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;
using storage::PeerCall;

// Request body bytes gathered before each write to the owner: a client's reads arrive in
// pieces of a few KiB, and each write is a hop to the cluster's thread and one frame.
constexpr std::size_t kForwardChunk = 256 * 1024;
// Opening a call to an owner that cannot be reached is tried again this often, this many
// times, recomputing the owner each time (the membership drops a dead one within its
// lease, and a stale view is refreshed by its watch).
constexpr auto kRetryWait = std::chrono::milliseconds(50);
constexpr int kOpenAttempts = 20;

// Head fields the gateway that answers the client sets itself (gateway/session.cc).
bool IsOwnField(std::string_view name) {
  static constexpr std::string_view kOwn[] = {
      "content-length", "connection",        "date",       "server",
      "keep-alive",     "transfer-encoding", "x-amz-id-2", "x-amz-request-id"};
  for (auto own : kOwn) {
    if (boost::beast::iequals(name, own)) {
      return true;
    }
  }
  return false;
}

// A peer call's failure as the client sees it: retryable ones (the owner unreachable or
// stopping, the membership changing) as 503 SlowDown, which SDKs retry; the rest (a
// corrupt frame, a refused handshake) as an internal error. The transport's stale-epoch
// detail never reaches the client.
Error ClientError(const Error& error) {
  if (error.retryable) {
    return Error(ErrorCode::kUnavailable, "the key's owner cannot be reached now, retry",
                 /*retryable=*/true);
  }
  spdlog::warn("forwarding to the key's owner failed: {}", error.message);
  return Error(ErrorCode::kInternal, "the key's owner could not serve the request");
}

ForwardedRequestHead RequestHeadOf(const RequestContext& ctx) {
  const auto& req = ctx.request();
  ForwardedRequestHead head;
  head.method = std::string(req.method_string());
  head.target = std::string(req.target());
  head.remote = std::string(ctx.exchange.remote_address());
  head.request_id = ctx.exchange.request_id();
  for (const auto& field : req) {
    head.fields.emplace_back(field.name_string(), field.value());
  }
  return head;
}

// The owner's answer to a call whose request (and body) went: the peer response, the
// forwarded response head in its payload, and the reads of the response's stream made in
// the same step (the first chunk, then the stream's end when that chunk was the whole
// body), which the relay takes before reading more.
struct OwnerAnswer {
  storage::PeerResponse response;
  ForwardedResponseHead head;
  // At most two (the first chunk, then the stream's end), in place: no allocation per call.
  std::optional<Result<std::optional<std::string>>> read_ahead[2];
  std::size_t read_ahead_taken = 0;
};

// In the call's lane: the answer and its read-ahead. A call that is over then (the
// stream's end read, or no stream) is reset there: its connection went back to the pool.
asio::awaitable<Result<OwnerAnswer>> ReadAnswer(std::unique_ptr<PeerCall>& call) {
  auto response = co_await call->Response();
  if (!response.ok()) {
    co_return ClientError(response.error());
  }
  auto head = DecodeResponseHead(response->payload);
  if (!head.ok()) {
    co_return ClientError(head.error());
  }
  OwnerAnswer answer;
  answer.response = std::move(response).value();
  answer.head = std::move(head).value();
  if (!answer.response.has_stream) {
    call.reset();
    co_return answer;
  }
  auto first = co_await call->Read();
  const bool whole =
      first.ok() && first->has_value() && (*first)->size() >= answer.head.content_length;
  answer.read_ahead[0].emplace(std::move(first));
  if (whole) {
    auto end = co_await call->Read();
    if (end.ok() && !end->has_value()) {
      call.reset();
    }
    answer.read_ahead[1].emplace(std::move(end));
  }
  co_return answer;
}

// A call through the core's own peer client when there is one, else the cluster's.
storage::PeerTask<std::unique_ptr<PeerCall>> CallThrough(storage::Cluster& cluster,
                                                         storage::PeerTransport* client,
                                                         const std::string& peer,
                                                         const storage::PeerRequest& request) {
  return client != nullptr ? client->Call(peer, request) : cluster.Call(peer, request);
}

// The lane of a request's peer calls: in place with the core's own client.
PeerLane LaneOf(const RequestContext& ctx, storage::Cluster& cluster) {
  if (ctx.exchange.peer_client() != nullptr) {
    return PeerLane{};
  }
  return PeerLane{cluster.executor()};
}

// In the call's lane: opens the call and, for a request without a body, reads the answer
// in the same step (`answer`).
struct OpenedCall {
  std::unique_ptr<PeerCall> call;
  std::optional<Result<OwnerAnswer>> answer;
};
asio::awaitable<Result<OpenedCall>> OpenCall(storage::Cluster& cluster,
                                             storage::PeerTransport* client,
                                             const std::string& peer,
                                             const storage::PeerRequest& request) {
  auto opened = co_await CallThrough(cluster, client, peer, request);
  if (!opened.ok()) {
    co_return std::move(opened).error();
  }
  OpenedCall result;
  result.call = std::move(opened).value();
  if (!request.has_stream) {
    auto answer = co_await ReadAnswer(result.call);
    result.answer.emplace(std::move(answer));
  }
  co_return result;
}

// The next chunk of the owner's response stream: the read-ahead first.
asio::awaitable<Result<std::optional<std::string>>> NextChunk(const PeerLane& lane,
                                                              HeldPeerCall& call,
                                                              OwnerAnswer& answer) {
  if (answer.read_ahead_taken < 2 && answer.read_ahead[answer.read_ahead_taken]) {
    auto chunk = std::move(*answer.read_ahead[answer.read_ahead_taken++]);
    co_return chunk;
  }
  co_return co_await lane.Run(call->Read());
}

asio::awaitable<void> Pause(std::chrono::milliseconds wait) {
  asio::steady_timer timer(co_await asio::this_coro::executor, wait);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// Sends the request's body to the owner in kForwardChunk pieces and ends it. False when
// the owner stopped taking it (it answered early, e.g. an error before reading); the
// caller then reads that answer. An error when the client's body broke: the call is
// dropped with it, so the owner stores nothing.
asio::awaitable<Result<bool>> SendBody(RequestContext& ctx, const PeerLane& lane,
                                       HeldPeerCall& call) {
  std::string chunk(kForwardChunk, '\0');
  std::size_t filled = 0;
  while (true) {
    auto got = co_await ctx.exchange.ReadBody(
        std::span<char>(chunk.data() + filled, chunk.size() - filled));
    if (!got.ok()) {
      co_return std::move(got).error();
    }
    filled += *got;
    const bool end = *got == 0;
    if (!end && filled < chunk.size()) {
      continue;
    }
    if (filled > 0) {
      chunk.resize(filled);
      auto wrote = co_await lane.Run(call->Write(std::move(chunk)));
      if (!wrote.ok()) {
        co_return false;
      }
      chunk.assign(kForwardChunk, '\0');
      filled = 0;
    }
    if (end) {
      break;
    }
  }
  auto closed = co_await lane.Run(call->CloseRequest());
  co_return closed.ok();
}

// Relays the owner's response body to the client: the first chunk goes with the head.
HandlerResult RelayStream(RequestContext& ctx, const PeerLane& lane, HeldPeerCall& call,
                          OwnerAnswer& answer, ResponseHeader header, std::uint64_t length) {
  std::uint64_t relayed = 0;
  bool head_sent = false;
  while (true) {
    auto chunk = co_await NextChunk(lane, call, answer);
    if (!chunk.ok() || !chunk->has_value()) {
      if (chunk.ok() && relayed == length && head_sent) {
        co_return Ok();
      }
      ctx.exchange.CloseAfterResponse();
      co_return chunk.ok() ? Error(ErrorCode::kInternal, "the owner's answer was cut short")
                           : ClientError(chunk.error());
    }
    const std::string& bytes = **chunk;
    relayed += bytes.size();
    if (relayed > length) {
      ctx.exchange.CloseAfterResponse();
      co_return Error(ErrorCode::kInternal, "the owner's answer was longer than announced");
    }
    if (!head_sent) {
      head_sent = true;
      STRATA_CO_RETURN_IF_ERROR(co_await ctx.exchange.SendHeader(std::move(header), length, bytes));
    } else {
      STRATA_CO_RETURN_IF_ERROR(co_await ctx.exchange.SendBody(bytes));
    }
  }
}

// One forwarded request's run on an I/O thread, and its end, which the waiting peer
// handler learns on the cluster's executor.
struct ForwardedRun {
  explicit ForwardedRun(const asio::any_io_executor& cluster)
      : timer(cluster, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;  // cancelled when the run ends
  bool done = false;         // on the cluster's executor
  Result<void> result = Error(ErrorCode::kUnavailable, "the forwarded request was cancelled",
                              /*retryable=*/true);
};

asio::awaitable<void> RunForwarded(std::shared_ptr<ForwardedRun> run, ForwardedExchange& exchange,
                                   Services& services) {
  // Also when the run is cancelled (its core stopping) or throws: the handler waits for it.
  struct Notify {
    std::shared_ptr<ForwardedRun> run;
    ~Notify() {
      asio::post(run->timer.get_executor(), [run = run] {
        run->done = true;
        run->timer.cancel();
      });
    }
  };
  Notify notify{run};
  co_await HandleRequest(exchange, services);
  auto finished = co_await exchange.Finish();
  run->result = std::move(finished);
}

// Until the run's end is known on the cluster's executor; not cancellable.
asio::awaitable<void> AwaitRunEnd(std::shared_ptr<ForwardedRun> run) {
  co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
  while (!run->done) {
    boost::system::error_code ec;
    co_await run->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace

bool IsForwardedOperation(S3Operation op) {
  switch (op) {
    case S3Operation::kPutObject:
    case S3Operation::kCopyObject:
    case S3Operation::kGetObject:
    case S3Operation::kHeadObject:
    case S3Operation::kDeleteObject:
    case S3Operation::kGetObjectAttributes:
    case S3Operation::kRestoreObject:
    case S3Operation::kGetObjectTagging:
    case S3Operation::kPutObjectTagging:
    case S3Operation::kDeleteObjectTagging:
    case S3Operation::kCreateMultipartUpload:
    case S3Operation::kUploadPart:
    case S3Operation::kUploadPartCopy:
    case S3Operation::kCompleteMultipartUpload:
    case S3Operation::kAbortMultipartUpload:
    case S3Operation::kListParts:
      return true;
    default:
      return false;
  }
}

asio::awaitable<Result<bool>> ForwardToOwner(RequestContext& ctx, S3Operation op) {
  storage::Cluster* cluster = ctx.services.cluster;
  if (cluster == nullptr || ctx.exchange.forwarded() || !IsForwardedOperation(op)) {
    co_return false;
  }
  auto owner = cluster->PrimaryOf(ctx.target.bucket, ctx.target.key);
  if (!owner) {
    co_return false;
  }
  if (owner->self) {
    co_return false;
  }
  const PeerLane lane = LaneOf(ctx, *cluster);
  storage::PeerRequest request;
  request.op = storage::kPeerOpS3Request;
  request.payload = EncodeRequestHead(RequestHeadOf(ctx));
  request.has_stream = !ctx.exchange.body_complete();
  if (request.payload.size() > storage::kMaxPeerPayload) {
    co_return Error(ErrorCode::kInvalidArgument, "the request's headers are too large");
  }

  std::optional<OpenedCall> opened_call;
  for (int attempt = 1;; ++attempt) {
    auto opened =
        co_await lane.Run(OpenCall(*cluster, ctx.exchange.peer_client(), owner->peer, request));
    if (opened.ok()) {
      opened_call.emplace(std::move(opened).value());
      break;
    }
    if (!opened.error().retryable || attempt == kOpenAttempts) {
      co_return ClientError(opened.error());
    }
    co_await Pause(kRetryWait);
    owner = cluster->PrimaryOf(ctx.target.bucket, ctx.target.key);
    if (!owner || owner->self) {
      co_return false;  // this gateway owns the key now
    }
  }
  HeldPeerCall call(lane, std::move(opened_call->call));
  std::optional<Result<OwnerAnswer>>& answered = opened_call->answer;  // set unless a body goes

  bool body_whole = true;
  if (request.has_stream) {
    STRATA_CO_TRY(body_whole, co_await SendBody(ctx, lane, call));
    auto read = co_await lane.Run(ReadAnswer(call.owned()));
    answered.emplace(std::move(read));
  }
  if (!answered->ok()) {
    co_return std::move(*answered).error();
  }
  OwnerAnswer& answer = answered->value();
  const storage::PeerResponse* response = &answer.response;
  const ForwardedResponseHead* head = &answer.head;
  ResponseHeader header;
  header.result(head->status);
  for (const auto& [name, value] : head->fields) {
    if (!IsOwnField(name)) {
      header.insert(name, value);
    }
  }
  if (head->close || !body_whole) {
    ctx.exchange.CloseAfterResponse();
  }
  if (response->has_stream) {
    STRATA_CO_RETURN_IF_ERROR(
        co_await RelayStream(ctx, lane, call, answer, std::move(header), head->content_length));
    co_return true;
  }
  if (head->content_length > 0 && !ctx.is_head()) {
    co_return Error(ErrorCode::kInternal, "the owner announced a body it did not send");
  }
  STRATA_CO_RETURN_IF_ERROR(
      co_await ctx.exchange.SendHeader(std::move(header), head->content_length, {}));
  co_return true;
}

asio::awaitable<Result<FanOutAnswer>> FanOut(RequestContext& ctx, const std::string& peer,
                                             std::string_view body) {
  storage::Cluster& cluster = *ctx.services.cluster;
  const PeerLane lane = LaneOf(ctx, cluster);
  storage::PeerRequest request;
  request.op = storage::kPeerOpS3FanOut;
  request.payload = EncodeRequestHead(RequestHeadOf(ctx));
  request.has_stream = !body.empty();
  if (request.payload.size() > storage::kMaxPeerPayload) {
    co_return Error(ErrorCode::kInvalidArgument, "the request's headers are too large");
  }
  auto opened = co_await lane.Run(CallThrough(cluster, ctx.exchange.peer_client(), peer, request));
  if (!opened.ok()) {
    co_return ClientError(opened.error());
  }
  HeldPeerCall call(lane, std::move(opened).value());
  while (!body.empty()) {
    const std::size_t n = std::min(body.size(), storage::kMaxPeerChunk);
    auto wrote = co_await lane.Run(call->Write(std::string(body.substr(0, n))));
    if (!wrote.ok()) {
      break;  // the member answered early: its answer says why
    }
    body.remove_prefix(n);
  }
  if (request.has_stream && body.empty()) {
    (void)co_await lane.Run(call->CloseRequest());
  }
  STRATA_CO_TRY(OwnerAnswer owner, co_await lane.Run(ReadAnswer(call.owned())));
  FanOutAnswer answer;
  answer.status = owner.head.status;
  while (owner.response.has_stream) {
    auto chunk = co_await NextChunk(lane, call, owner);
    if (!chunk.ok()) {
      co_return ClientError(chunk.error());
    }
    if (!chunk->has_value()) {
      break;
    }
    if ((*chunk)->size() > kMaxFanOutAnswer - answer.body.size()) {
      co_return Error(ErrorCode::kInternal, "a member's answer was too long");
    }
    answer.body += **chunk;
  }
  co_return answer;
}

storage::PeerTask<void> ServeForwarded(storage::PeerIncomingCall& call, Services& services,
                                       asio::any_io_executor io, TaskGroup& tasks, bool fan_out,
                                       bool on_io) {
  auto head = DecodeRequestHead(call.request().payload);
  if (!head.ok()) {
    spdlog::warn("peer {}: a forwarded request refused: {}", call.peer(), head.error().message);
    co_return std::move(head).error();
  }
  // The executor the call is served on: the cluster's, or `io` itself.
  const auto cluster = co_await asio::this_coro::executor;
  ForwardedExchange exchange(*head, call, on_io ? PeerLane{} : PeerLane{cluster}, fan_out);
  auto run = std::make_shared<ForwardedRun>(cluster);
  if (!tasks.Spawn(io, RunForwarded(run, exchange, services))) {
    co_return Error(ErrorCode::kUnavailable, "this gateway is stopping", /*retryable=*/true);
  }
  // `exchange` and `call` must outlive the run, so this waits for its end whatever
  // happens here: the run ends by itself (its peer-call steps fail once the transport
  // stops) or by its core's cancellation. The wait is a coroutine of its own, out of
  // reach of this one's cancellation: turning cancellation off here would turn it off
  // for the transport's whole connection coroutine (Asio keeps the state at its entry).
  co_await asio::co_spawn(
      cluster, AwaitRunEnd(run),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
  co_return run->result;
}

}  // namespace strata::gateway
