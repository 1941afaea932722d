#include "gateway/forward.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
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
#include "gateway/handlers/object_io.h"
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
  head.secure = ctx.exchange.secure();
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
// Errors as the transport or the owner gave them (ClientError makes them the client's).
asio::awaitable<Result<OwnerAnswer>> ReadAnswer(std::unique_ptr<PeerCall>& call) {
  auto response = co_await call->Response();
  if (!response.ok()) {
    co_return std::move(response).error();
  }
  auto head = DecodeResponseHead(response->payload);
  if (!head.ok()) {
    co_return std::move(head).error();
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

// Sends the request's body to the owner in kForwardChunk pieces and ends it: first
// `read_so_far`, the bytes of it this gateway has already read, then the rest. False when
// the owner stopped taking it (it answered early, e.g. an error before reading); the
// caller then reads that answer. An error when the client's body broke: the call is
// dropped with it, so the owner stores nothing.
asio::awaitable<Result<bool>> SendBody(RequestContext& ctx, const PeerLane& lane,
                                       HeldPeerCall& call, std::string_view read_so_far) {
  while (!read_so_far.empty()) {
    const std::size_t size = std::min(read_so_far.size(), kForwardChunk);
    std::string piece(read_so_far.substr(0, size));
    auto wrote = co_await lane.Run(call->Write(std::move(piece)));
    if (!wrote.ok()) {
      co_return false;
    }
    read_so_far.remove_prefix(size);
  }
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
// With `fill`, the bytes also go to the read cache, which keeps them once all arrived.
HandlerResult RelayStream(RequestContext& ctx, const PeerLane& lane, HeldPeerCall& call,
                          OwnerAnswer& answer, ResponseHeader header, std::uint64_t length,
                          std::unique_ptr<storage::ReadCacheFill> fill) {
  std::uint64_t relayed = 0;
  bool head_sent = false;
  while (true) {
    auto chunk = co_await NextChunk(lane, call, answer);
    if (!chunk.ok() || !chunk->has_value()) {
      if (chunk.ok() && relayed == length && head_sent) {
        if (fill) {
          fill->Commit(answer.head.cache_crc);
        }
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
    if (fill) {
      auto appended = co_await fill->Append(bytes);
      if (!appended.ok()) {
        fill.reset();  // the client's read goes on without the copy
      }
    }
  }
}

// Sends the body of the owner's answer from the read cache's copy (`hit`): the bytes
// [head.cache_first, + head.content_length) of the version the owner confirmed.
HandlerResult ServeFromCache(RequestContext& ctx, storage::ReadCacheHit& hit,
                             const ForwardedResponseHead& head, ResponseHeader header) {
  if (head.cache_first > hit.reader->size() ||
      head.content_length > hit.reader->size() - head.cache_first) {
    co_return Error(ErrorCode::kInternal, "the owner named bytes past the cached copy's end");
  }
  co_return co_await SendObject(ctx, std::move(header), *hit.reader, head.cache_first,
                                head.content_length);
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
    case S3Operation::kGetObjectAcl:
    case S3Operation::kPutObjectAcl:
    case S3Operation::kGetObjectRetention:
    case S3Operation::kPutObjectRetention:
    case S3Operation::kGetObjectLegalHold:
    case S3Operation::kPutObjectLegalHold:
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

namespace {

std::atomic<std::uint64_t> gets_from_owner{0};
std::atomic<std::uint64_t> gets_from_replica{0};
std::atomic<std::uint64_t> gets_from_cache{0};

// What one forwarding attempt came to.
enum class Forwarded { kAnswered, kServeHere, kAgainWithoutCache };

// Whether this gateway is one of the key's owners (a replica, since the primary is
// another): it holds the key's versions itself.
bool IsReplica(const storage::Cluster& cluster, std::string_view bucket, std::string_view key) {
  for (const auto& owner : cluster.OwnersOf(bucket, key)) {
    if (owner.self) {
      return true;
    }
  }
  return false;
}

// A replica's own copy of the version a GET addresses, open, named as the read cache
// names its copies; nullopt when it has none on a local tier.
asio::awaitable<std::optional<storage::ReadCacheHit>> ReplicaCopy(RequestContext& ctx) {
  auto record = co_await AddressedVersion(ctx);
  if (!record.ok()) {
    co_return std::nullopt;
  }
  auto version = storage::ReadCacheVersionOf(*record);
  if (!version || !ctx.services.store.HasLocalCopy(*record)) {
    co_return std::nullopt;
  }
  auto reader = ctx.services.store.OpenObject(*record);
  if (!reader.ok()) {
    co_return std::nullopt;
  }
  co_return storage::ReadCacheHit{std::move(version->tag), std::move(reader).value()};
}

// Forwards the request of `ctx` to its key's primary owner once. With `local_copies` (a
// GET), it names the version this gateway holds of the key, as a replica or in its read
// cache (`cache`, may be null), and a non-owner with a cache takes the owner's offer.
asio::awaitable<Result<Forwarded>> ForwardOnce(RequestContext& ctx, storage::Cluster& cluster,
                                               bool local_copies, storage::ReadCache* cache,
                                               std::string_view read_so_far = {}) {
  auto owner = cluster.PrimaryOf(ctx.target.bucket, ctx.target.key);
  if (!owner || owner->self) {
    co_return Forwarded::kServeHere;
  }
  const BucketName bucket(ctx.target.bucket);
  const ObjectKey key(ctx.target.key);
  const PeerLane lane = LaneOf(ctx, cluster);
  ForwardedRequestHead forwarded_head = RequestHeadOf(ctx);
  std::optional<storage::ReadCacheHit> hit;
  const bool replica = local_copies && IsReplica(cluster, ctx.target.bucket, ctx.target.key);
  if (replica) {
    cache = nullptr;  // a replica keeps no second copy
    hit = co_await ReplicaCopy(ctx);
  } else if (local_copies && cache != nullptr) {
    forwarded_head.takes_cache = true;
    hit = cache->Find(bucket, key);
  }
  if (hit) {
    forwarded_head.cached_tag = hit->tag;
  }
  storage::PeerRequest request;
  request.op = storage::kPeerOpS3Request;
  request.payload = EncodeRequestHead(forwarded_head);
  request.has_stream = !ctx.exchange.body_complete() || !read_so_far.empty();
  if (request.payload.size() > storage::kMaxPeerPayload) {
    co_return Error(ErrorCode::kInvalidArgument, "the request's headers are too large");
  }

  std::optional<OpenedCall> opened_call;
  for (int attempt = 1;; ++attempt) {
    auto opened =
        co_await lane.Run(OpenCall(cluster, ctx.exchange.peer_client(), owner->peer, request));
    if (opened.ok()) {
      opened_call.emplace(std::move(opened).value());
      break;
    }
    if (!opened.error().retryable || attempt == kOpenAttempts) {
      co_return ClientError(opened.error());
    }
    co_await Pause(kRetryWait);
    owner = cluster.PrimaryOf(ctx.target.bucket, ctx.target.key);
    if (!owner || owner->self) {
      co_return Forwarded::kServeHere;  // this gateway owns the key now
    }
  }
  HeldPeerCall call(lane, std::move(opened_call->call));
  std::optional<Result<OwnerAnswer>>& answered = opened_call->answer;  // set unless a body goes

  bool body_whole = true;
  if (request.has_stream) {
    STRATA_CO_TRY(body_whole, co_await SendBody(ctx, lane, call, read_so_far));
    auto read = co_await lane.Run(ReadAnswer(call.owned()));
    answered.emplace(std::move(read));
  }
  if (!answered->ok()) {
    // An owner of an earlier build refuses the read cache's head (format 2) as malformed:
    // a GET (no body) goes again without it.
    if (local_copies && answered->error().code == ErrorCode::kCorruption) {
      co_return Forwarded::kAgainWithoutCache;
    }
    co_return ClientError(answered->error());
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
  if (head->from_cache) {
    if (!hit || response->has_stream) {
      co_return Error(ErrorCode::kInternal, "the owner named a copy this gateway does not hold");
    }
    auto served = co_await ServeFromCache(ctx, *hit, *head, std::move(header));
    // The client going away is no fault of the copy's.
    const bool copy_failed = !served.ok() && served.error().code != ErrorCode::kIncompleteBody;
    if (cache != nullptr) {
      cache->Served(bucket, key, !copy_failed);
    }
    if (served.ok()) {
      (replica ? gets_from_replica : gets_from_cache).fetch_add(1, std::memory_order_relaxed);
      co_return Forwarded::kAnswered;
    }
    if (copy_failed && !ctx.exchange.response_started()) {
      co_return Forwarded::kAgainWithoutCache;  // a damaged copy: the owner sends the bytes
    }
    ctx.exchange.CloseAfterResponse();  // the body is cut short: the client must see it
    co_return std::move(served).error();
  }
  if (response->has_stream) {
    std::unique_ptr<storage::ReadCacheFill> fill;
    if (cache != nullptr && head->status == 200 && !head->cache_tag.empty()) {
      fill = cache->BeginFill(bucket, key, head->cache_tag, head->content_length);
    }
    STRATA_CO_RETURN_IF_ERROR(co_await RelayStream(ctx, lane, call, answer, std::move(header),
                                                   head->content_length, std::move(fill)));
    if (local_copies) {
      gets_from_owner.fetch_add(1, std::memory_order_relaxed);
    }
    co_return Forwarded::kAnswered;
  }
  if (head->content_length > 0 && !ctx.is_head()) {
    co_return Error(ErrorCode::kInternal, "the owner announced a body it did not send");
  }
  STRATA_CO_RETURN_IF_ERROR(
      co_await ctx.exchange.SendHeader(std::move(header), head->content_length, {}));
  co_return Forwarded::kAnswered;
}

}  // namespace

ForwardedGetCounts ForwardedGets() {
  return ForwardedGetCounts{gets_from_owner.load(std::memory_order_relaxed),
                            gets_from_replica.load(std::memory_order_relaxed),
                            gets_from_cache.load(std::memory_order_relaxed)};
}

asio::awaitable<Result<bool>> ForwardToOwner(RequestContext& ctx, S3Operation op) {
  storage::Cluster* cluster = ctx.services.cluster;
  if (cluster == nullptr || ctx.exchange.forwarded() || !IsForwardedOperation(op)) {
    co_return false;
  }
  // Only a GET's bytes are served from a local copy, and it has no body to send twice.
  const bool local_copies = op == S3Operation::kGetObject && ctx.exchange.body_complete();
  STRATA_CO_TRY(auto forwarded,
                co_await ForwardOnce(ctx, *cluster, local_copies, ctx.services.read_cache));
  if (forwarded == Forwarded::kAgainWithoutCache) {
    STRATA_CO_TRY(forwarded, co_await ForwardOnce(ctx, *cluster, false, nullptr));
  }
  co_return forwarded == Forwarded::kAnswered;
}

asio::awaitable<Result<bool>> ForwardFormToOwner(RequestContext& ctx, std::string read_so_far) {
  storage::Cluster* cluster = ctx.services.cluster;
  if (cluster == nullptr || ctx.exchange.forwarded()) {
    co_return false;
  }
  STRATA_CO_TRY(auto forwarded, co_await ForwardOnce(ctx, *cluster, false, nullptr, read_so_far));
  co_return forwarded == Forwarded::kAnswered;
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
  auto owner_answer = co_await lane.Run(ReadAnswer(call.owned()));
  if (!owner_answer.ok()) {
    co_return ClientError(owner_answer.error());
  }
  OwnerAnswer& owner = owner_answer.value();
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
