// NOT RUN ON HARDWARE: see the header. Compiled and linked only.
#include "storage/peer/rdma_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/co_try.h"
#include "common/task_group.h"
#include "storage/peer/handshake.h"
#include "storage/peer/rdma_connection.h"

namespace strata::storage::peer {
namespace {

namespace asio = boost::asio;

constexpr std::size_t kPoolChunks = 64;  // 64 MiB registered once

Error CmError(const char* call) {
  return Error(ErrorCode::kUnavailable,
               std::string("rdma_cm: ") + call + ": " + std::strerror(errno), true);
}

class IbvRegistrar final : public MemoryRegistrar {
 public:
  explicit IbvRegistrar(ibv_pd* pd) : pd_(pd) {}
  Result<Registration> Register(void* addr, std::size_t length) override {
    ibv_mr* mr = ibv_reg_mr(pd_, addr, length, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    if (mr == nullptr) {
      return Error(ErrorCode::kUnavailable, std::string("ibv_reg_mr: ") + std::strerror(errno));
    }
    return Registration{.lkey = mr->lkey, .rkey = mr->rkey, .handle = mr};
  }
  void Deregister(const Registration& registration) override {
    ibv_dereg_mr(static_cast<ibv_mr*>(registration.handle));
  }

 private:
  ibv_pd* pd_;
};

// An rdma_cm event channel whose fd Asio watches.
struct CmChannel {
  CmChannel(const asio::any_io_executor& executor, rdma_event_channel* channel)
      : channel(channel), fd(executor, channel->fd) {
    const int flags = fcntl(channel->fd, F_GETFL);
    fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK);
  }
  ~CmChannel() {
    fd.release();
    rdma_destroy_event_channel(channel);
  }
  // The next event's type, id and private data (the peer's region), acknowledged.
  struct Event {
    rdma_cm_event_type type;
    rdma_cm_id* id;
    std::string private_data;
  };
  asio::awaitable<Result<Event>> Next() {
    while (true) {
      rdma_cm_event* event = nullptr;
      if (rdma_get_cm_event(channel, &event) == 0) {
        Event out{event->event, event->id,
                  std::string(static_cast<const char*>(event->param.conn.private_data),
                              event->param.conn.private_data != nullptr
                                  ? event->param.conn.private_data_len
                                  : 0)};
        rdma_ack_cm_event(event);
        co_return out;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        co_return CmError("rdma_get_cm_event");
      }
      boost::system::error_code ec;
      co_await fd.async_wait(asio::posix::stream_descriptor::wait_read,
                             asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        co_return Error(ErrorCode::kUnavailable, "rdma: stopping", true);
      }
    }
  }
  rdma_event_channel* channel;
  asio::posix::stream_descriptor fd;
};

Result<addrinfo*> Resolve(const std::string& address, bool passive) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, "rdma peer address without a port: " + address);
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), address.c_str() + colon + 1, &hints, &result) != 0) {
    return Error(ErrorCode::kUnavailable, "rdma: cannot resolve " + address, true);
  }
  return result;
}

}  // namespace

struct RdmaTransport::State {
  asio::any_io_executor executor;
  RdmaTransportOptions options;
  ibv_context* context = nullptr;  // rdma_get_devices()'s, owned by librdmacm
  ibv_context** devices = nullptr;
  ibv_pd* pd = nullptr;
  std::unique_ptr<IbvRegistrar> registrar;
  std::unique_ptr<RdmaBufferPool> pool;
  std::atomic<std::uint64_t> epoch{0};
  PeerHandler handler;
  std::unique_ptr<CmChannel> listener;
  rdma_cm_id* listen_id = nullptr;
  std::size_t connections = 0;
  TaskGroup tasks;

  ~State() {
    pool.reset();
    if (pd != nullptr) {
      ibv_dealloc_pd(pd);
    }
    if (devices != nullptr) {
      rdma_free_devices(devices);
    }
  }

  RdmaSession::Options SessionOptions(RdmaSession::Role role, const RdmaRegion& peer) const {
    return RdmaSession::Options{.role = role,
                                .node = options.node,
                                .secret = options.secret,
                                .nonce = NewNonce(),
                                .credits = options.credits,
                                .peer = peer};
  }
  std::string PrivateData() const { return EncodeRegion(pool->Region()); }
};

namespace {

// Pumps `c` until `done()` or the connection ends.
template <typename Done>
asio::awaitable<Result<void>> PumpUntil(RdmaConnection& c, Done done) {
  while (!done()) {
    if (c.closed) {
      co_return *c.closed;
    }
    auto pumped = co_await c.Pump();
    if (!pumped.ok()) {
      co_return pumped;
    }
  }
  co_return Ok();
}

// Copies `bytes` into a leased slot and hands it to the session as the next chunk (or, with
// sequence 0, as a remote payload).
Result<ReadDescriptor> Lend(RdmaConnection& c, RdmaBufferPool& pool, std::string_view bytes,
                            std::uint64_t sequence) {
  auto lease = pool.Lease();
  if (!lease.ok()) {
    return std::move(lease).error();
  }
  std::memcpy(lease->data(), bytes.data(), bytes.size());
  lease->set_size(bytes.size());
  const ReadDescriptor d = lease->Describe(sequence);
  c.lent.emplace_back(sequence, std::move(lease).value());
  return d;
}

// The chunk at the front of `c.chunks`, consumed; nullopt at the stream's end.
asio::awaitable<Result<std::optional<std::string>>> ReadChunk(RdmaConnection& c) {
  auto ready = co_await PumpUntil(c, [&] { return !c.chunks.empty() || c.stream_ended; });
  if (!ready.ok()) {
    co_return std::move(ready).error();
  }
  if (c.chunks.empty()) {
    co_return std::optional<std::string>();
  }
  auto [sequence, lease] = std::move(c.chunks.front());
  c.chunks.pop_front();
  std::string chunk(lease.bytes());
  lease.Reset();
  auto consumed = c.session().Consume(sequence);
  if (!consumed.ok()) {
    co_return std::move(consumed).error();
  }
  c.Execute(std::move(consumed).value());
  co_return std::optional<std::string>(std::move(chunk));
}

asio::awaitable<Result<void>> WriteChunk(RdmaConnection& c, RdmaBufferPool& pool,
                                         std::string chunk) {
  if (chunk.empty() || chunk.size() > pool.chunk_bytes()) {
    co_return Error(ErrorCode::kInvalidArgument,
                    "rdma peer chunk of " + std::to_string(chunk.size()) + " bytes");
  }
  auto credit = co_await PumpUntil(c, [&] { return c.session().can_write(); });
  if (!credit.ok()) {
    co_return credit;
  }
  auto d = Lend(c, pool, chunk, c.session().next_sequence());
  if (!d.ok()) {
    co_return std::move(d).error();
  }
  auto actions = c.session().Write(*d, chunk);
  if (!actions.ok()) {
    co_return std::move(actions).error();
  }
  c.Execute(std::move(actions).value());
  co_return Ok();
}

asio::awaitable<Result<void>> Close(RdmaConnection& c) {
  auto actions = c.session().CloseStream();
  if (!actions.ok()) {
    co_return std::move(actions).error();
  }
  c.Execute(std::move(actions).value());
  co_return Ok();
}

// A payload over the inline limit goes in a slot for the peer to READ.
Result<std::optional<ReadDescriptor>> RemotePayload(RdmaConnection& c, RdmaBufferPool& pool,
                                                    std::string& payload) {
  if (payload.size() <= kRdmaMaxInline) {
    return std::optional<ReadDescriptor>();
  }
  auto d = Lend(c, pool, payload, 0);
  if (!d.ok()) {
    return std::move(d).error();
  }
  payload.clear();
  return std::optional<ReadDescriptor>(*d);
}

class RdmaCall final : public PeerCall {
 public:
  RdmaCall(std::shared_ptr<RdmaTransport::State> state, std::unique_ptr<CmChannel> channel,
           std::unique_ptr<RdmaConnection> connection)
      : state_(std::move(state)), channel_(std::move(channel)), c_(std::move(connection)) {}
  ~RdmaCall() override {
    rdma_disconnect(c_->id());
    c_.reset();  // before the channel its id belongs to
  }

  PeerTask<void> Write(std::string chunk) override {
    co_return co_await WriteChunk(*c_, *state_->pool, std::move(chunk));
  }
  PeerTask<void> CloseRequest() override { co_return co_await Close(*c_); }
  PeerTask<PeerResponse> Response() override {
    auto answered =
        co_await PumpUntil(*c_, [&] { return c_->response.has_value() || c_->call_error; });
    if (!answered.ok()) {
      co_return std::move(answered).error();
    }
    if (c_->call_error) {
      co_return *c_->call_error;
    }
    co_return *c_->response;
  }
  PeerTask<std::optional<std::string>> Read() override { co_return co_await ReadChunk(*c_); }

 private:
  std::shared_ptr<RdmaTransport::State> state_;
  std::unique_ptr<CmChannel> channel_;
  std::unique_ptr<RdmaConnection> c_;
};

class RdmaIncomingCall final : public PeerIncomingCall {
 public:
  RdmaIncomingCall(RdmaTransport::State& state, RdmaConnection& c, PeerRequest request)
      : state_(state), c_(c), request_(std::move(request)) {}

  const std::string& peer() const override { return c_.session().peer(); }
  const PeerRequest& request() const override { return request_; }
  PeerTask<std::optional<std::string>> Read() override {
    if (!request_.has_stream) {
      co_return std::optional<std::string>();
    }
    co_return co_await ReadChunk(c_);
  }
  PeerTask<void> Respond(PeerResponse response) override {
    // What the handler did not read is read and dropped first: the session answers only
    // once the request's stream is through.
    while (request_.has_stream) {
      auto chunk = co_await ReadChunk(c_);
      if (!chunk.ok()) {
        co_return std::move(chunk).error();
      }
      if (!*chunk) {
        break;
      }
    }
    auto remote = RemotePayload(c_, *state_.pool, response.payload);
    if (!remote.ok()) {
      co_return std::move(remote).error();
    }
    auto actions = c_.session().Respond(response, *remote);
    if (!actions.ok()) {
      co_return std::move(actions).error();
    }
    c_.Execute(std::move(actions).value());
    responded_ = true;
    co_return Ok();
  }
  PeerTask<void> Write(std::string chunk) override {
    co_return co_await WriteChunk(c_, *state_.pool, std::move(chunk));
  }
  PeerTask<void> CloseResponse() override { co_return co_await Close(c_); }
  bool responded() const { return responded_; }

 private:
  RdmaTransport::State& state_;
  RdmaConnection& c_;
  PeerRequest request_;
  bool responded_ = false;
};

// One accepted connection: the handshake, then calls until it ends.
asio::awaitable<void> ServeConnection(std::shared_ptr<RdmaTransport::State> state,
                                      std::unique_ptr<RdmaConnection> c) {
  c->epoch = state->epoch.load();
  auto shaken = co_await PumpUntil(*c, [&] { return c->session().authenticated(); });
  while (shaken.ok() && !c->closed) {
    c->epoch = state->epoch.load();
    auto got = co_await PumpUntil(*c, [&] { return !c->requests.empty(); });
    if (!got.ok()) {
      break;
    }
    PeerRequest request = std::move(c->requests.front());
    c->requests.pop_front();
    c->call_done = false;
    RdmaIncomingCall call(*state, *c, std::move(request));
    auto handled = co_await state->handler(call);
    if (!call.responded() && !c->closed) {
      const Error error = handled.ok() ? Error(ErrorCode::kInternal, "the handler did not respond")
                                       : handled.error();
      auto actions = c->session().RespondError(error);
      if (!actions.ok()) {
        break;
      }
      c->Execute(std::move(actions).value());
    }
    if (!(co_await PumpUntil(*c, [&] { return c->call_done; })).ok()) {
      break;
    }
  }
  spdlog::info("rdma peer connection from {} closed: {}", c->session().peer(),
               c->closed ? c->closed->message : std::string("ok"));
  rdma_disconnect(c->id());
  --state->connections;
}

asio::awaitable<void> AcceptLoop(std::shared_ptr<RdmaTransport::State> state) {
  while (true) {
    auto event = co_await state->listener->Next();
    if (!event.ok()) {
      co_return;
    }
    if (event->type != RDMA_CM_EVENT_CONNECT_REQUEST) {
      continue;  // ESTABLISHED / DISCONNECTED of accepted ids: their QPs tell the sessions
    }
    auto region = DecodeRegion(event->private_data);
    const std::size_t limit = kPoolChunks / (2 * (std::size_t{state->options.credits} + 1));
    if (!region.ok() || region->credits > state->options.credits || state->connections >= limit ||
        event->id->verbs != state->context) {
      rdma_reject(event->id, nullptr, 0);
      rdma_destroy_id(event->id);
      continue;
    }
    auto c = std::make_unique<RdmaConnection>(
        state->executor, event->id, state->pd, *state->pool,
        state->SessionOptions(RdmaSession::Role::kAccept, *region));
    if (!c->Setup().ok()) {
      rdma_reject(event->id, nullptr, 0);
      continue;
    }
    const std::string mine = state->PrivateData();
    rdma_conn_param param{};
    param.private_data = mine.data();
    param.private_data_len = static_cast<std::uint8_t>(mine.size());
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.rnr_retry_count = 7;
    if (rdma_accept(c->id(), &param) != 0) {
      continue;
    }
    ++state->connections;
    state->tasks.Spawn(state->executor, ServeConnection(state, std::move(c)));
  }
}

// Waits for the next event on `channel`, which must be `want`.
asio::awaitable<Result<CmChannel::Event>> Expect(CmChannel& channel, rdma_cm_event_type want) {
  auto event = co_await channel.Next();
  if (!event.ok()) {
    co_return std::move(event).error();
  }
  if (event->type != want) {
    co_return Error(ErrorCode::kUnavailable,
                    std::string("rdma_cm: ") + rdma_event_str(event->type) + " where " +
                        rdma_event_str(want) + " was due",
                    true);
  }
  co_return event;
}

}  // namespace

Result<std::unique_ptr<RdmaTransport>> RdmaTransport::Make(asio::any_io_executor executor,
                                                           RdmaTransportOptions options) {
  auto state = std::make_shared<State>();
  state->executor = std::move(executor);
  state->options = std::move(options);
  int count = 0;
  state->devices = rdma_get_devices(&count);
  if (state->devices == nullptr || count == 0) {
    return Error(ErrorCode::kUnavailable, "no RDMA device");
  }
  state->context = state->devices[0];
  state->pd = ibv_alloc_pd(state->context);
  if (state->pd == nullptr) {
    return Error(ErrorCode::kUnavailable, "ibv_alloc_pd failed");
  }
  state->registrar = std::make_unique<IbvRegistrar>(state->pd);
  auto pool =
      RdmaBufferPool::Make(*state->registrar, kPoolChunks, kMaxPeerChunk, state->options.credits);
  if (!pool.ok()) {
    return std::move(pool).error();
  }
  state->pool = std::move(pool).value();
  return std::unique_ptr<RdmaTransport>(new RdmaTransport(std::move(state)));
}

RdmaTransport::RdmaTransport(std::shared_ptr<State> state) : state_(std::move(state)) {}

RdmaTransport::~RdmaTransport() { Stop(); }

Result<void> RdmaTransport::Serve(PeerHandler handler) {
  state_->handler = std::move(handler);
  rdma_event_channel* channel = rdma_create_event_channel();
  if (channel == nullptr) {
    return CmError("rdma_create_event_channel");
  }
  state_->listener = std::make_unique<CmChannel>(state_->executor, channel);
  if (rdma_create_id(channel, &state_->listen_id, nullptr, RDMA_PS_TCP) != 0) {
    return CmError("rdma_create_id");
  }
  auto address = Resolve(state_->options.listen, true);
  if (!address.ok()) {
    return std::move(address).error();
  }
  const int bound = rdma_bind_addr(state_->listen_id, (*address)->ai_addr);
  freeaddrinfo(*address);
  if (bound != 0 || rdma_listen(state_->listen_id, 16) != 0) {
    return CmError("rdma_bind_addr / rdma_listen");
  }
  state_->tasks.Spawn(state_->executor, AcceptLoop(state_));
  return Ok();
}

PeerTask<std::unique_ptr<PeerCall>> RdmaTransport::Call(std::string peer,
                                                        const PeerRequest& request_ref) {
  PeerRequest request = request_ref;  // read before the first suspension
  auto state = state_;
  rdma_event_channel* raw_channel = rdma_create_event_channel();
  if (raw_channel == nullptr) {
    co_return CmError("rdma_create_event_channel");
  }
  auto channel = std::make_unique<CmChannel>(state->executor, raw_channel);
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(raw_channel, &id, nullptr, RDMA_PS_TCP) != 0) {
    co_return CmError("rdma_create_id");
  }
  auto address = Resolve(peer, false);
  if (!address.ok()) {
    rdma_destroy_id(id);
    co_return std::move(address).error();
  }
  const int timeout_ms = static_cast<int>(state->options.connect_timeout.count());
  const int resolving = rdma_resolve_addr(id, nullptr, (*address)->ai_addr, timeout_ms);
  freeaddrinfo(*address);
  if (resolving != 0) {
    rdma_destroy_id(id);
    co_return CmError("rdma_resolve_addr");
  }
  auto resolved = co_await Expect(*channel, RDMA_CM_EVENT_ADDR_RESOLVED);
  if (!resolved.ok() || rdma_resolve_route(id, timeout_ms) != 0) {
    rdma_destroy_id(id);
    co_return resolved.ok() ? CmError("rdma_resolve_route") : resolved.error();
  }
  auto routed = co_await Expect(*channel, RDMA_CM_EVENT_ROUTE_RESOLVED);
  if (!routed.ok() || id->verbs != state->context) {
    rdma_destroy_id(id);
    co_return routed.ok() ? Error(ErrorCode::kUnavailable, "rdma: the route is on another device")
                          : routed.error();
  }
  // The peer's region comes with its accept; the session is made then.
  auto c = std::make_unique<RdmaConnection>(
      state->executor, id, state->pd, *state->pool,
      state->SessionOptions(RdmaSession::Role::kConnect,
                            RdmaRegion{.credits = state->options.credits}));
  STRATA_CO_RETURN_IF_ERROR(c->Setup());
  const std::string mine = state->PrivateData();
  rdma_conn_param param{};
  param.private_data = mine.data();
  param.private_data_len = static_cast<std::uint8_t>(mine.size());
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  if (rdma_connect(id, &param) != 0) {
    co_return CmError("rdma_connect");
  }
  auto established = co_await Expect(*channel, RDMA_CM_EVENT_ESTABLISHED);
  if (!established.ok()) {
    co_return std::move(established).error();
  }
  auto region = DecodeRegion(established->private_data);
  if (!region.ok()) {
    co_return std::move(region).error();
  }
  if (region->credits > state->options.credits) {
    // This side posted RECVs for its own credits' worth of the peer's messages.
    co_return Error(ErrorCode::kUnavailable, "rdma peer announces more credits than this side's");
  }
  c->session() = RdmaSession(state->SessionOptions(RdmaSession::Role::kConnect, *region));
  c->Execute(c->session().Start(state->epoch.load()));
  auto shaken = co_await PumpUntil(*c, [&] { return c->session().authenticated(); });
  if (!shaken.ok()) {
    co_return std::move(shaken).error();
  }
  auto remote = RemotePayload(*c, *state->pool, request.payload);
  if (!remote.ok()) {
    co_return std::move(remote).error();
  }
  auto actions = c->session().Call(request, *remote, state->epoch.load());
  if (!actions.ok()) {
    co_return std::move(actions).error();
  }
  c->Execute(std::move(actions).value());
  co_return std::unique_ptr<PeerCall>(
      std::make_unique<RdmaCall>(state, std::move(channel), std::move(c)));
}

void RdmaTransport::SetEpoch(std::uint64_t epoch) { state_->epoch.store(epoch); }

void RdmaTransport::Stop() {
  if (state_->tasks.closed()) {
    return;
  }
  state_->tasks.Close();
  asio::post(state_->executor, [state = state_] {
    if (state->listener) {
      boost::system::error_code ignored;
      state->listener->fd.cancel(ignored);
    }
  });
  state_->tasks.Cancel();
  state_->tasks.Join();
  if (state_->listen_id != nullptr) {
    rdma_destroy_id(state_->listen_id);
    state_->listen_id = nullptr;
  }
  state_->listener.reset();
}

}  // namespace strata::storage::peer
