#include "storage/peer/tcp_transport.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/co_try.h"
#include "common/task_group.h"
#include "storage/crc64nvme.h"
#include "storage/peer/session.h"
#include "storage/peer/tcp_io.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// Refusals over max_connections and accept errors are logged at most this often: a flood
// must not become a flood of log lines.
constexpr auto kAcceptLogInterval = std::chrono::seconds(10);

std::string Describe(const tcp::socket& socket) {
  error_code ec;
  auto remote = socket.remote_endpoint(ec);
  if (ec) {
    return "an unknown address";
  }
  return remote.address().to_string() + ":" + std::to_string(remote.port());
}

void Bump(std::atomic<std::uint64_t>& counter) { counter.fetch_add(1, std::memory_order_relaxed); }

// A stream chunk's own CRC64NVME when it is large enough to be worth computing once for
// both its frame and its stream's check (kOwnCrcFrom).
std::optional<std::uint64_t> OwnCrc(std::string_view chunk) {
  if (chunk.size() < kOwnCrcFrom) {
    return std::nullopt;
  }
  return Crc64Nvme(0, chunk);
}

// Writes one frame: with `payload_crc`, its header and then the payload as it is (not
// copied into the frame); else the frame encoded whole. An encoding error (a payload or
// flags the frame cannot carry), or the write's outcome.
asio::awaitable<Result<error_code>> WriteFrame(tcp::socket& socket, FrameType type,
                                               std::uint16_t flags, std::uint64_t id,
                                               std::string payload,
                                               std::optional<std::uint64_t> payload_crc,
                                               Deadline deadline) {
  if (payload_crc) {
    auto head = FrameHeader(type, flags, id, payload.size(), *payload_crc);
    if (!head.ok()) {
      co_return std::move(head).error();
    }
    co_return co_await WriteAll(socket, *head, payload, deadline);
  }
  auto bytes = EncodeFrame(type, flags, id, std::move(payload));
  if (!bytes.ok()) {
    co_return std::move(bytes).error();
  }
  co_return co_await WriteAll(socket, *bytes, deadline);
}

}  // namespace

struct ClientConnection;

struct TcpTransport::State {
  State(asio::any_io_executor ex, TcpTransportOptions o)
      : executor(std::move(ex)), options(std::move(o)) {}

  void NoteBuffered(std::size_t bytes) {
    std::size_t peak = peak_buffered.load(std::memory_order_relaxed);
    while (bytes > peak && !peak_buffered.compare_exchange_weak(peak, bytes)) {
    }
  }

  const asio::any_io_executor executor;
  const TcpTransportOptions options;
  std::atomic<std::uint64_t> epoch{0};
  std::atomic<std::uint16_t> port{0};
  std::atomic<bool> stopped{false};
  // Set by Serve (or Host) before the accept loop starts, then only read; so is hand_off.
  PeerHandler handler;
  SessionHandOff hand_off;
  std::atomic<bool> hosting{false};  // Host was called
  std::optional<tcp::acceptor> acceptor;
  // The accept loop and the server sessions (which use this state by reference: Stop
  // waits for them before anything here goes).
  TaskGroup tasks;

  // On the executor only.
  bool stopping = false;
  std::size_t open_connections = 0;
  std::chrono::steady_clock::time_point last_accept_log{};
  // Every client connection, idle or in a call (Stop closes them); before `idle`, which
  // holds some of them and so goes first.
  std::set<ClientConnection*> clients;
  std::map<std::string, std::vector<std::unique_ptr<ClientConnection>>> idle;

  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> authenticated{0};
  std::atomic<std::uint64_t> sessions_failed{0};
  std::atomic<std::uint64_t> handler_calls{0};
  std::atomic<std::uint64_t> connects{0};
  std::atomic<std::uint64_t> reused{0};
  std::atomic<std::size_t> peak_buffered{0};
};

using State = TcpTransport::State;

namespace {

// ---------------------------------------------------------------------------------------
// Server side.

struct ServerConnection {
  ServerConnection(tcp::socket s, const State& state)
      : socket(std::move(s)),
        remote(Describe(socket)),
        session(state.options.node, state.options.secret, NewNonce()) {}
  // `from`'s connection on `s`, a socket of another executor holding its descriptor.
  ServerConnection(tcp::socket s, ServerConnection&& from)
      : socket(std::move(s)),
        remote(std::move(from.remote)),
        session(std::move(from.session)),
        buffer(std::move(from.buffer)),
        begin(from.begin),
        end(from.end),
        peer_closed(from.peer_closed) {}

  tcp::socket socket;
  std::string remote;
  ServerSession session;
  std::string buffer = std::string(kReadBufferBytes, '\0');
  std::size_t begin = 0;  // buffer[begin, end) read, not yet given to the session
  std::size_t end = 0;
  bool peer_closed = false;  // the last read found the end of the stream
};

// The session's next event, reading from the socket as it needs.
asio::awaitable<Result<ServerSession::Event>> NextEvent(State& s, ServerConnection& c,
                                                        Deadline deadline) {
  for (;;) {
    if (c.begin < c.end) {
      std::string_view in(c.buffer.data() + c.begin, c.end - c.begin);
      auto event = c.session.Next(in, s.epoch.load(std::memory_order_acquire));
      c.begin = c.end - in.size();
      s.NoteBuffered(c.session.buffered() + in.size());
      if (!event.ok()) {
        co_return std::move(event).error();
      }
      if (*event) {
        co_return std::move(**event);
      }
    }
    c.begin = c.end = 0;
    auto [ec, n] = co_await ReadSome(c.socket, asio::buffer(c.buffer), deadline);
    if (ec) {
      c.peer_closed = ec == asio::error::eof;
      co_return NetworkError(c.remote, "read", ec);
    }
    c.end = n;
  }
}

// One call as the handler sees it; Finish completes what the handler left undone.
class IncomingCall final : public PeerIncomingCall {
 public:
  IncomingCall(State& s, ServerConnection& c, std::uint64_t id, PeerRequest request)
      : s_(s), c_(c), id_(id), request_(std::move(request)), request_done_(!request_.has_stream) {}

  const std::string& peer() const override { return c_.session.peer(); }
  const PeerRequest& request() const override { return request_; }

  PeerTask<std::optional<std::string>> Read() override {
    if (request_done_) {
      co_return std::optional<std::string>();
    }
    if (broken_) {
      co_return Error(ErrorCode::kUnavailable, "peer call: the connection broke", true);
    }
    auto event = co_await NextEvent(s_, c_, After(s_.options.io_timeout));
    if (!event.ok()) {
      broken_ = std::move(event).error();
      co_return *broken_;
    }
    if (event->kind == ServerSession::Kind::kEnd) {
      request_done_ = true;
      co_return std::optional<std::string>();
    }
    // In a request's stream the session yields only chunks and the end.
    co_return std::optional<std::string>(std::move(event->bytes));
  }

  PeerTask<void> Respond(PeerResponse response) override {
    if (phase_ != Phase::kRequest) {
      co_return Error(ErrorCode::kInvalidRequest, "peer call: responded twice");
    }
    auto payload = EncodeResponse(response);
    if (!payload.ok()) {
      co_return std::move(payload).error();
    }
    // The caller sends its whole stream before it reads: what the handler left unread is
    // read (and checked) and dropped, or neither side would read again.
    STRATA_CO_RETURN_IF_ERROR(co_await Drain());
    phase_ = response.has_stream ? Phase::kStream : Phase::kDone;
    co_return co_await Send(FrameType::kResponse, 0, std::move(payload).value());
  }

  PeerTask<void> Write(std::string chunk) override {
    if (phase_ != Phase::kStream) {
      co_return Error(ErrorCode::kInvalidRequest, "peer call: no response stream open");
    }
    if (chunk.empty() || chunk.size() > kMaxPeerChunk) {
      co_return Error(ErrorCode::kInvalidArgument,
                      "peer call: a chunk of " + std::to_string(chunk.size()) + " bytes");
    }
    const auto crc = OwnCrc(chunk);
    stream_.Add(chunk, crc);
    co_return co_await Send(FrameType::kData, 0, std::move(chunk), crc);
  }

  PeerTask<void> CloseResponse() override {
    if (phase_ != Phase::kStream) {
      co_return Error(ErrorCode::kInvalidRequest, "peer call: no response stream open");
    }
    phase_ = Phase::kDone;
    co_return co_await Send(FrameType::kData, kFlagLast, stream_.Trailer());
  }

  // After the handler returned `handled`: ok when the connection can serve the next call.
  PeerTask<void> Finish(Result<void> handled) {
    if (broken_) {
      co_return *broken_;
    }
    if (phase_ == Phase::kDone) {
      if (!handled.ok()) {
        spdlog::warn("peer: call {} from {} (op {}): the handler failed after its response: {}",
                     id_, c_.remote, request_.op, handled.error().message);
      }
      co_return Ok();
    }
    Error error = handled.ok() ? Error(ErrorCode::kInternal,
                                       phase_ == Phase::kRequest
                                           ? "peer call: the handler gave no response"
                                           : "peer call: the handler left its stream open")
                               : std::move(handled).error();
    if (phase_ == Phase::kRequest) {
      STRATA_CO_RETURN_IF_ERROR(co_await Drain());
    }
    phase_ = Phase::kDone;
    co_return co_await Send(FrameType::kError, 0,
                            EncodeError(error, false, s_.epoch.load(std::memory_order_acquire)));
  }

 private:
  enum class Phase { kRequest, kStream, kDone };

  PeerTask<void> Drain() {
    while (!request_done_) {
      auto chunk = co_await Read();
      if (!chunk.ok()) {
        co_return std::move(chunk).error();
      }
    }
    co_return Ok();
  }

  PeerTask<void> Send(FrameType type, std::uint16_t flags, std::string payload,
                      std::optional<std::uint64_t> payload_crc = {}) {
    if (broken_) {
      co_return *broken_;
    }
    auto ec = co_await WriteFrame(c_.socket, type, flags, id_, std::move(payload), payload_crc,
                                  After(s_.options.io_timeout));
    if (!ec.ok()) {
      co_return std::move(ec).error();
    }
    if (*ec) {
      broken_ = NetworkError(c_.remote, "write", *ec);
      co_return *broken_;
    }
    co_return Ok();
  }

  State& s_;
  ServerConnection& c_;
  const std::uint64_t id_;
  const PeerRequest request_;
  bool request_done_;
  Phase phase_ = Phase::kRequest;
  StreamCheck stream_;
  std::optional<Error> broken_;  // the connection failed: it closes after the handler
};

// Logs why a session ends, once, and sends its farewell (a stale epoch's kError) if any.
asio::awaitable<void> Refuse(State& s, ServerConnection& c, Error error, std::string stage) {
  if (s.stopping) {
    co_return;  // Stop cancelled the session: nothing went wrong with the peer
  }
  spdlog::warn("peer: closing the connection from {} ({}{}): {}", c.remote, stage,
               c.session.peer().empty() ? "" : ", node " + c.session.peer(), error.message);
  // Counted once logged: whoever sees the count sees the line.
  Bump(s.sessions_failed);
  if (!c.session.farewell().empty()) {
    (void)co_await WriteAll(c.socket, c.session.farewell(), After(s.options.handshake_timeout));
  }
}

}  // namespace

struct HandedSession {
  HandedSession(int descriptor, tcp protocol_of, std::unique_ptr<ServerConnection> connection,
                ServerSession::Event call)
      : fd(descriptor),
        protocol(protocol_of),
        from(std::move(connection)),
        first(std::move(call)) {}
  ~HandedSession() {
    if (fd >= 0) {
      ::close(fd);  // never adopted: the connection closes, and its caller retries
    }
  }
  HandedSession(const HandedSession&) = delete;
  HandedSession& operator=(const HandedSession&) = delete;

  int fd;  // the connection's descriptor, released by its old socket; -1 once taken
  tcp protocol;
  std::unique_ptr<ServerConnection> from;  // its state; its socket holds nothing
  ServerSession::Event first;              // the call it stopped at (a kRequest)
};

namespace {

// Hands `c` with the call `event` to a core's transport when the hand-off takes the op;
// true when it went (c is null then). Otherwise `c` and `event` are as they were.
bool HandOver(State& s, std::unique_ptr<ServerConnection>& c, ServerSession::Event& event) {
  if (!s.hand_off.takes || !s.hand_off.takes(event.request.op)) {
    return false;
  }
  error_code ec;
  const tcp protocol = c->socket.local_endpoint(ec).protocol();
  if (ec) {
    return false;
  }
  const int fd = c->socket.release(ec);
  if (ec) {
    return false;
  }
  auto handed = std::make_unique<HandedSession>(fd, protocol, std::move(c), std::move(event));
  if (s.hand_off.adopt(handed)) {
    return true;
  }
  // No core took it: it stays here, on its descriptor again.
  c = std::move(handed->from);
  event = std::move(handed->first);
  c->socket.assign(protocol, fd, ec);
  handed->fd = -1;
  if (ec) {
    // Cannot be: the descriptor is open and was this socket's. Serving on would write to
    // a closed socket; the caller sees the connection break.
    spdlog::warn("peer: keeping the connection from {}: {}", c->remote, ec.message());
    ::close(fd);
  }
  return false;
}

// The calls of an authenticated connection, from `first` (the call it was handed over
// with) on, until the connection ends or moves to a core's transport (c is null then).
asio::awaitable<void> ServeCalls(State& s, std::unique_ptr<ServerConnection>& c,
                                 std::optional<ServerSession::Event> first) {
  for (;;) {
    ServerSession::Event event;
    if (first) {
      event = std::move(*first);
      first.reset();
    } else {
      // Between calls an idle connection waits for as long as the caller keeps it.
      auto next = co_await NextEvent(s, *c, kNoDeadline);
      if (!next.ok()) {
        if (c->peer_closed && c->session.idle() && c->session.buffered() == 0) {
          spdlog::debug("peer: {} (node {}) closed its connection", c->remote, c->session.peer());
        } else {
          co_await Refuse(s, *c, next.error(), "between calls");
        }
        co_return;
      }
      // Once authenticated and idle, the session yields requests only.
      event = std::move(next).value();
      if (HandOver(s, c, event)) {
        co_return;
      }
    }
    Bump(s.handler_calls);
    IncomingCall call(s, *c, event.request_id, std::move(event.request));
    Result<void> handled = co_await s.handler(call);
    if (auto finished = co_await call.Finish(std::move(handled)); !finished.ok()) {
      co_await Refuse(s, *c, finished.error(), "in a call");
      co_return;
    }
  }
}

asio::awaitable<void> ServeConnection(State& s, tcp::socket socket) {
  struct Count {
    State& s;
    ~Count() { --s.open_connections; }
  } count{s};
  auto c = std::make_unique<ServerConnection>(std::move(socket), s);

  // Nothing but the handshake until it is done, and only for so long.
  const Deadline deadline = After(s.options.handshake_timeout);
  for (;;) {
    auto event = co_await NextEvent(s, *c, deadline);
    if (!event.ok()) {
      co_await Refuse(s, *c, event.error(), "handshake");
      co_return;
    }
    if (event->kind == ServerSession::Kind::kAuthenticated) {
      break;
    }
    if (auto ec = co_await WriteAll(c->socket, event->bytes, deadline); ec) {
      co_await Refuse(s, *c, NetworkError(c->remote, "write", ec), "handshake");
      co_return;
    }
  }
  Bump(s.authenticated);
  co_await ServeCalls(s, c, std::nullopt);
}

// A session handed over by another transport, on this one's executor.
asio::awaitable<void> ServeHanded(State& s, std::unique_ptr<HandedSession> handed) {
  tcp::socket socket(s.executor);
  error_code ec;
  socket.assign(handed->protocol, handed->fd, ec);
  if (ec) {
    spdlog::warn("peer: cannot take over the connection from {}: {}", handed->from->remote,
                 ec.message());
    co_return;
  }
  handed->fd = -1;
  auto c = std::make_unique<ServerConnection>(std::move(socket), std::move(*handed->from));
  co_await ServeCalls(s, c, std::move(handed->first));
}

bool ShouldLogAccept(State& s) {
  const auto now = std::chrono::steady_clock::now();
  if (now - s.last_accept_log < kAcceptLogInterval) {
    return false;
  }
  s.last_accept_log = now;
  return true;
}

asio::awaitable<void> AcceptLoop(State& s) {
  auto tuple = asio::as_tuple(asio::use_awaitable);
  for (;;) {
    auto [ec, socket] = co_await s.acceptor->async_accept(tuple);
    if (s.stopping || ec == asio::error::operation_aborted) {
      co_return;
    }
    if (ec) {
      if (ShouldLogAccept(s)) {
        spdlog::warn("peer: accept failed: {}", ec.message());
      }
      // Out of descriptors, most likely: wait for some to free up rather than spin.
      asio::steady_timer timer(s.executor, std::chrono::milliseconds(50));
      co_await timer.async_wait(tuple);
      continue;
    }
    if (s.open_connections >= s.options.max_connections) {
      Bump(s.refused);
      if (ShouldLogAccept(s)) {
        spdlog::warn("peer: refusing the connection from {}: {} connections open (the limit)",
                     Describe(socket), s.open_connections);
      }
      continue;  // the socket closes as it goes
    }
    ++s.open_connections;
    Bump(s.accepted);
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    if (!s.tasks.Spawn(s.executor, ServeConnection(s, std::move(socket)))) {
      --s.open_connections;  // stopping: the unstarted session never counted itself out
    }
  }
}

// ---------------------------------------------------------------------------------------
// Client side.

}  // namespace

struct ClientConnection {
  ClientConnection(State& s, std::string p) : state(s), socket(s.executor), peer(std::move(p)) {
    state.clients.insert(this);
  }
  ~ClientConnection() { state.clients.erase(this); }
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  State& state;  // outlives it: whoever holds a connection holds the state
  tcp::socket socket;
  const std::string peer;
  std::string buffer = std::string(kReadBufferBytes, '\0');
  std::size_t begin = 0;
  std::size_t end = 0;
  FrameDecoder decoder;
  std::uint64_t last_id = 0;
};

namespace {

asio::awaitable<Result<Frame>> NextFrame(State& s, ClientConnection& c, Deadline deadline) {
  for (;;) {
    if (c.begin < c.end) {
      std::string_view in(c.buffer.data() + c.begin, c.end - c.begin);
      auto frame = c.decoder.Next(in);
      c.begin = c.end - in.size();
      s.NoteBuffered(c.decoder.buffered() + in.size());
      if (!frame.ok()) {
        co_return Error(ErrorCode::kCorruption,
                        "peer " + c.peer + ": " + std::move(frame).error().message);
      }
      if (*frame) {
        co_return std::move(**frame);
      }
    }
    c.begin = c.end = 0;
    auto [ec, n] = co_await ReadSome(c.socket, asio::buffer(c.buffer), deadline);
    if (ec) {
      co_return NetworkError(c.peer, "read", ec);
    }
    c.end = n;
  }
}

// Whether an idle connection is still usable: the peer has neither closed it nor sent
// anything (between calls it has nothing to say).
bool StillIdle(ClientConnection& c) {
  char byte = 0;
  const ssize_t n = ::recv(c.socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && c.begin == c.end &&
         c.decoder.buffered() == 0;
}

void Release(State& s, std::unique_ptr<ClientConnection> c) {
  if (s.stopping) {
    return;
  }
  auto& pool = s.idle[c->peer];
  if (pool.size() < s.options.max_idle_per_peer) {
    pool.push_back(std::move(c));
  }
}

Error Stopped() { return Error(ErrorCode::kUnavailable, "peer transport stopped", true); }

// A connection to `peer`: an idle one, or a new one, authenticated.
asio::awaitable<Result<std::unique_ptr<ClientConnection>>> Acquire(std::shared_ptr<State> sp,
                                                                   std::string peer) {
  State& s = *sp;
  if (s.stopping) {
    co_return Stopped();
  }
  if (auto it = s.idle.find(peer); it != s.idle.end()) {
    auto& pool = it->second;
    while (!pool.empty()) {
      auto c = std::move(pool.back());
      pool.pop_back();
      if (StillIdle(*c)) {
        Bump(s.reused);
        co_return c;
      }
    }
  }
  auto split = SplitHostPort(peer);
  if (!split.ok()) {
    co_return std::move(split).error();
  }
  const auto& [host, port] = *split;
  tcp::endpoint endpoint;
  error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<std::uint16_t>(std::stoi(port)));
  } else {
    tcp::resolver resolver(s.executor);
    auto [rec, results] =
        co_await resolver.async_resolve(host, port, asio::as_tuple(asio::use_awaitable));
    if (rec || results.empty()) {
      co_return Error(ErrorCode::kUnavailable,
                      "peer " + peer + ": resolve: " + (rec ? rec.message() : "no address"), true);
    }
    endpoint = *results.begin();
  }
  if (s.stopping) {
    co_return Stopped();
  }
  auto c = std::make_unique<ClientConnection>(s, peer);
  if (auto cec = co_await Connect(c->socket, endpoint, After(s.options.connect_timeout)); cec) {
    // A peer that does not answer in time is as unreachable as one that refuses.
    co_return Error(ErrorCode::kUnavailable,
                    "peer " + peer + ": connect: " +
                        (cec == asio::error::timed_out ? std::string("timed out") : cec.message()),
                    true);
  }
  c->socket.set_option(tcp::no_delay(true), ec);

  ClientHandshake handshake(s.options.node, s.options.secret,
                            s.epoch.load(std::memory_order_acquire), NewNonce());
  auto hello = handshake.HelloFrame();
  if (!hello.ok()) {
    co_return std::move(hello).error();
  }
  const Deadline deadline = After(s.options.handshake_timeout);
  const auto unavailable = [&](Error e) {
    e.code = ErrorCode::kUnavailable;
    e.retryable = true;
    e.message += " (in the handshake)";
    return e;
  };
  if (auto wec = co_await WriteAll(c->socket, *hello, deadline); wec) {
    co_return unavailable(NetworkError(peer, "write", wec));
  }
  auto answer = co_await NextFrame(s, *c, deadline);
  if (!answer.ok()) {
    co_return answer.error().code == ErrorCode::kCorruption
        ? std::move(answer).error()
        : unavailable(std::move(answer).error());
  }
  auto reply = handshake.OnAnswer(*answer);
  if (!reply.ok()) {
    co_return std::move(reply).error();
  }
  if (auto wec = co_await WriteAll(c->socket, *reply, deadline); wec) {
    co_return unavailable(NetworkError(peer, "write", wec));
  }
  Bump(s.connects);
  co_return c;
}

class OutgoingCall final : public PeerCall {
 public:
  OutgoingCall(std::shared_ptr<State> s, std::unique_ptr<ClientConnection> c, std::uint64_t id,
               bool has_stream)
      : s_(std::move(s)),
        c_(std::move(c)),
        id_(id),
        phase_(has_stream ? Phase::kRequestStream : Phase::kAwaitResponse) {}

  PeerTask<void> Write(std::string chunk) override {
    if (phase_ != Phase::kRequestStream) {
      co_return Misuse("no request stream open");
    }
    if (chunk.empty() || chunk.size() > kMaxPeerChunk) {
      co_return Error(ErrorCode::kInvalidArgument,
                      "peer call: a chunk of " + std::to_string(chunk.size()) + " bytes");
    }
    const auto crc = OwnCrc(chunk);
    stream_.Add(chunk, crc);
    co_return co_await Send(FrameType::kData, 0, std::move(chunk), crc);
  }

  PeerTask<void> CloseRequest() override {
    if (phase_ != Phase::kRequestStream) {
      co_return Misuse("no request stream open");
    }
    phase_ = Phase::kAwaitResponse;
    std::string trailer = stream_.Trailer();
    stream_ = StreamCheck();  // the response's stream is counted afresh
    co_return co_await Send(FrameType::kData, kFlagLast, std::move(trailer));
  }

  PeerTask<PeerResponse> Response() override {
    if (phase_ != Phase::kAwaitResponse) {
      co_return Misuse(phase_ == Phase::kRequestStream ? "the request's stream is still open"
                                                       : "the response was read already");
    }
    auto frame = co_await NextFrame(*s_, *c_, After(s_->options.io_timeout));
    if (!frame.ok()) {
      co_return Fail(std::move(frame).error());
    }
    if (frame->request_id == id_ && frame->type == FrameType::kResponse && frame->flags == 0) {
      auto response = DecodeResponse(frame->payload);
      if (!response.ok()) {
        co_return Fail(std::move(response).error());
      }
      if (response->has_stream) {
        phase_ = Phase::kResponseStream;
      } else {
        Done();
      }
      co_return std::move(response).value();
    }
    if (frame->request_id == id_ && frame->type == FrameType::kError && frame->flags == 0) {
      auto refused = DecodeError(frame->payload);
      if (!refused.ok()) {
        co_return Fail(std::move(refused).error());
      }
      // The handler's error: the connection stays in step unless the callee closes it.
      if (refused->closing) {
        co_return Fail(std::move(refused->error));
      }
      Done();
      co_return std::move(refused->error);
    }
    co_return Fail(Unexpected(*frame, "instead of the response"));
  }

  PeerTask<std::optional<std::string>> Read() override {
    if (phase_ == Phase::kDone) {
      co_return std::optional<std::string>();
    }
    if (phase_ != Phase::kResponseStream) {
      co_return Misuse("no response stream open");
    }
    auto frame = co_await NextFrame(*s_, *c_, After(s_->options.io_timeout));
    if (!frame.ok()) {
      co_return Fail(std::move(frame).error());
    }
    if (frame->request_id == id_ && frame->type == FrameType::kData) {
      if (frame->flags == kFlagLast) {
        if (auto verified = stream_.Verify(frame->payload); !verified.ok()) {
          co_return Fail(std::move(verified).error());
        }
        Done();
        co_return std::optional<std::string>();
      }
      if (!frame->payload.empty()) {
        stream_.Add(frame->payload, frame->payload_crc);
        co_return std::optional<std::string>(std::move(frame->payload));
      }
    }
    if (frame->request_id == id_ && frame->type == FrameType::kError && frame->flags == 0) {
      // The handler failed in the middle of its stream.
      auto refused = DecodeError(frame->payload);
      co_return Fail(refused.ok() ? std::move(refused->error) : std::move(refused).error());
    }
    co_return Fail(Unexpected(*frame, "in the response's stream"));
  }

 private:
  enum class Phase { kRequestStream, kAwaitResponse, kResponseStream, kDone, kFailed };

  Error Misuse(const char* what) const {
    if (phase_ == Phase::kFailed) {
      return Error(ErrorCode::kUnavailable, "peer call: failed before", true);
    }
    return Error(ErrorCode::kInvalidRequest, std::string("peer call: ") + what);
  }

  Error Unexpected(const Frame& frame, const char* where) const {
    return Error(ErrorCode::kCorruption, "peer " + c_->peer + ": a frame of type " +
                                             std::to_string(static_cast<int>(frame.type)) +
                                             " for request " + std::to_string(frame.request_id) +
                                             " " + where);
  }

  // The call is over and its connection is not to be trusted: closed.
  Error Fail(Error error) {
    phase_ = Phase::kFailed;
    c_.reset();
    return error;
  }

  // The call is over and its connection in step: back to the pool.
  void Done() {
    phase_ = Phase::kDone;
    Release(*s_, std::move(c_));
  }

  PeerTask<void> Send(FrameType type, std::uint16_t flags, std::string payload,
                      std::optional<std::uint64_t> payload_crc = {}) {
    auto ec = co_await WriteFrame(c_->socket, type, flags, id_, std::move(payload), payload_crc,
                                  After(s_->options.io_timeout));
    if (!ec.ok()) {
      co_return Fail(std::move(ec).error());
    }
    if (*ec) {
      co_return Fail(NetworkError(c_->peer, "write", *ec));
    }
    co_return Ok();
  }

  std::shared_ptr<State> s_;  // before c_, which goes first
  std::unique_ptr<ClientConnection> c_;
  const std::uint64_t id_;
  Phase phase_;
  StreamCheck stream_;
};

}  // namespace

// ---------------------------------------------------------------------------------------

TcpTransport::TcpTransport(asio::any_io_executor executor, TcpTransportOptions options)
    : state_(std::make_shared<State>(std::move(executor), std::move(options))) {}

TcpTransport::~TcpTransport() {
  if (!state_->stopped.load()) {
    Stop();
  }
}

Result<void> TcpTransport::Serve(PeerHandler handler) {
  State& s = *state_;
  if (s.acceptor || s.stopped.load() || !handler) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer transport: Serve without a handler, twice or after Stop");
  }
  auto split = SplitHostPort(s.options.listen);
  if (!split.ok()) {
    return std::move(split).error();
  }
  error_code ec;
  const auto address = asio::ip::make_address(split->first, ec);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer_listen \"" + s.options.listen + "\": not an IP address");
  }
  const tcp::endpoint endpoint(address, static_cast<std::uint16_t>(std::stoi(split->second)));
  tcp::acceptor acceptor(s.executor);
  const auto failed = [&](const char* step) {
    return Error(ErrorCode::kUnavailable,
                 "peer_listen " + s.options.listen + ": " + step + ": " + ec.message());
  };
  if (acceptor.open(endpoint.protocol(), ec); ec) {
    return failed("open");
  }
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (acceptor.bind(endpoint, ec); ec) {
    return failed("bind");
  }
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec); ec) {
    return failed("listen");
  }
  s.port = acceptor.local_endpoint(ec).port();
  s.handler = std::move(handler);
  s.acceptor.emplace(std::move(acceptor));
  // Ended by closing the acceptor (Stop), not by cancellation (see TaskGroup::Spawn).
  if (!s.tasks.Spawn(s.executor, AcceptLoop(s), /*cancellable=*/false)) {
    return Stopped();
  }
  spdlog::info("peer transport: node {} listening on {}:{}", s.options.node,
               endpoint.address().to_string(), s.port.load());
  return Ok();
}

PeerTask<std::unique_ptr<PeerCall>> TcpTransport::Call(std::string peer,
                                                       const PeerRequest& request) {
  std::shared_ptr<State> s = state_;
  // All that is needed of `request`, before the first suspension (see peer_transport.h).
  const bool has_stream = request.has_stream;
  auto payload = EncodeRequest(s->epoch.load(std::memory_order_acquire), request);
  if (!payload.ok()) {
    co_return std::move(payload).error();
  }
  auto acquired = co_await Acquire(s, peer);
  if (!acquired.ok()) {
    co_return std::move(acquired).error();
  }
  std::unique_ptr<ClientConnection> c = std::move(acquired).value();
  const std::uint64_t id = ++c->last_id;
  auto bytes = EncodeFrame(FrameType::kRequest, 0, id, std::move(payload).value());
  if (!bytes.ok()) {
    co_return std::move(bytes).error();
  }
  if (auto ec = co_await WriteAll(c->socket, *bytes, After(s->options.io_timeout)); ec) {
    co_return NetworkError(peer, "write", ec);
  }
  co_return std::unique_ptr<PeerCall>(
      std::make_unique<OutgoingCall>(s, std::move(c), id, has_stream));
}

void TcpTransport::SetEpoch(std::uint64_t epoch) {
  state_->epoch.store(epoch, std::memory_order_release);
}

void TcpTransport::Stop() {
  std::shared_ptr<State> s = state_;
  std::promise<void> closed;
  // Blocks until the lambda ran: the reference to `closed` does not outlive it.
  asio::post(s->executor, [s, &closed] {
    s->stopping = true;
    error_code ignored;
    if (s->acceptor) {
      s->acceptor->close(ignored);
    }
    s->idle.clear();
    // The calls in flight: their next step fails with operation_aborted.
    for (ClientConnection* c : s->clients) {
      c->socket.close(ignored);
    }
    s->tasks.Close();
    s->tasks.Cancel();
    closed.set_value();
  });
  closed.get_future().wait();
  s->tasks.Join();
  s->stopped = true;
}

void TcpTransport::SetHandOff(SessionHandOff hand_off) { state_->hand_off = std::move(hand_off); }

Result<void> TcpTransport::Host(PeerHandler handler) {
  State& s = *state_;
  if (s.acceptor || s.hosting.load() || s.stopped.load() || !handler) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer transport: Host without a handler, twice, after Serve or after Stop");
  }
  s.handler = std::move(handler);
  s.hosting = true;
  return Ok();
}

bool TcpTransport::Adopt(std::unique_ptr<HandedSession>& session) {
  State& s = *state_;
  if (!s.hosting.load()) {
    return false;
  }
  // Refused once stopping: the session goes with the unstarted task, and closes.
  (void)s.tasks.Spawn(s.executor, ServeHanded(s, std::move(session)));
  return true;
}

std::uint16_t TcpTransport::port() const { return state_->port.load(); }

TcpTransportStats TcpTransport::stats() const {
  const State& s = *state_;
  TcpTransportStats out;
  out.accepted = s.accepted.load();
  out.refused = s.refused.load();
  out.authenticated = s.authenticated.load();
  out.sessions_failed = s.sessions_failed.load();
  out.handler_calls = s.handler_calls.load();
  out.connects = s.connects.load();
  out.reused = s.reused.load();
  out.peak_buffered = s.peak_buffered.load();
  return out;
}

}  // namespace strata::storage::peer
