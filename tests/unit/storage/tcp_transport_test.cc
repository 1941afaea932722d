// TcpTransport (storage/peer/tcp_transport.*) over real sockets on 127.0.0.1, ephemeral
// ports, a server and a client transport each on an io_context and thread of its own:
// calls with payloads and handler errors; 64 MiB streams both ways, byte-exact, with the
// bytes a connection holds bounded; concurrent calls over a small pool; connection reuse
// (one accept for many calls); a wrong secret refused; raw sockets that break the protocol
// (garbage, truncated hello or frame, a flipped CRC bit, an unknown type, a request before
// the handshake, a replayed answer, a stale epoch, silence) closed, logged once, the
// handler never run, the server serving a good client after; a peer that is down or mute
// gives kUnavailable in time; Stop with calls in flight; the cores' clients (CoreClients)
// stamped with the registry's epoch, made before or after it moved, and counted; sessions
// handed off to a host on another thread at their first call (buffered bytes and all),
// served there from then on (other ops through a HoppingCall on a third thread), closed
// when the host stopped. Every wait is on an event, bounded.
#include "storage/peer/tcp_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/run_on.h"
#include "storage/peer/core_clients.h"
#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "storage/peer/hopping_call.h"
#include "storage/peer/session.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr auto kWait = 20s;  // the bound of every wait for an event
constexpr const char* kSecret = "a-long-random-string";

// An io_context run by a thread of its own, as a core runs one.
class IoThread {
 public:
  IoThread() : guard_(asio::make_work_guard(ioc_)), thread_([this] { ioc_.run(); }) {}
  ~IoThread() {
    guard_.reset();
    ioc_.stop();
    thread_.join();
  }
  asio::any_io_executor executor() { return ioc_.get_executor(); }

  // Runs `task` on this thread and waits (bounded) for its value.
  template <typename T>
  T Run(asio::awaitable<T> task) {
    auto promise = std::make_shared<std::promise<T>>();
    auto future = promise->get_future();
    asio::co_spawn(
        ioc_,
        [promise, task = std::move(task)]() mutable -> asio::awaitable<void> {
          promise->set_value(co_await std::move(task));
        },
        [promise](std::exception_ptr e) {
          if (e) {
            promise->set_exception(e);
          }
        });
    if (future.wait_for(kWait) != std::future_status::ready) {
      throw std::runtime_error("a task on the io thread did not finish in time");
    }
    return future.get();
  }

 private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// Until `done()` or kWait passed; whether done.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::yield();
  }
  return true;
}

// The stream bytes of `seed` at [offset, offset + n): cheap to make on both sides, so
// 64 MiB are checked byte by byte without keeping them.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
std::string Pattern(std::uint64_t seed, std::uint64_t offset, std::size_t n) {
  std::string out(n, '\0');
  std::size_t i = 0;
  // Byte by byte to a word boundary, then whole words (little-endian, as the bytes are
  // defined), then the tail.
  const auto byte_at = [seed](std::uint64_t at) {
    return static_cast<char>(Mix(seed ^ (at / 8)) >> (8 * (at % 8)));
  };
  for (; i < n && (offset + i) % 8 != 0; ++i) {
    out[i] = byte_at(offset + i);
  }
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t word = Mix(seed ^ ((offset + i) / 8));
    for (int b = 0; b < 8; ++b) {
      out[i + static_cast<std::size_t>(b)] = static_cast<char>(word >> (8 * b));
    }
  }
  for (; i < n; ++i) {
    out[i] = byte_at(offset + i);
  }
  return out;
}

enum Op : std::uint32_t {
  kEcho = 1,
  kSink = 2,
  kSource = 3,
  kFail = 4,
  kHang = 5,
  kFailMidStream = 6,
  kNoResponse = 7,
  kEchoStream = 8
};

struct Served {
  std::atomic<int> calls{0};
  std::atomic<int> hanging{0};
};

// The test server's handler:
//   kEcho    status 7, payload "echo:" + the request's
//   kSink    reads the stream and checks it against Pattern(seed = the payload); status 0
//            when every byte matched, payload the byte count
//   kSource  "seed:size": a response stream of `size` bytes of Pattern(seed), 1 MiB chunks
//   kFail    kNoSuchKey
//   kHang    waits until cancelled
//   kFailMidStream  a response with a stream, one chunk, then kUnavailable
//   kNoResponse     returns without responding
//   kEchoStream     reads the request's stream whole (at most 4 MiB) and answers with a
//                   stream of the same bytes
PeerTask<void> Handle(Served& served, PeerIncomingCall& call) {
  served.calls.fetch_add(1);
  const PeerRequest& request = call.request();
  switch (request.op) {
    case kEcho: {
      // Named, not a braced temporary in the co_await: GCC 12 destroys such a temporary
      // twice (ASan: double free).
      PeerResponse response{7, "echo:" + request.payload};
      co_return co_await call.Respond(std::move(response));
    }
    case kSink: {
      const std::uint64_t seed = std::stoull(request.payload);
      std::uint64_t offset = 0;
      bool matches = true;
      for (;;) {
        auto chunk = co_await call.Read();
        if (!chunk.ok()) {
          co_return std::move(chunk).error();
        }
        if (!*chunk) {
          break;
        }
        matches = matches && **chunk == Pattern(seed, offset, (*chunk)->size());
        offset += (*chunk)->size();
      }
      PeerResponse response{matches ? 0u : 1u, std::to_string(offset)};
      co_return co_await call.Respond(std::move(response));
    }
    case kSource: {
      const auto colon = request.payload.find(':');
      const std::uint64_t seed = std::stoull(request.payload.substr(0, colon));
      const std::uint64_t size = std::stoull(request.payload.substr(colon + 1));
      PeerResponse response{0, "", true};
      if (auto sent = co_await call.Respond(std::move(response)); !sent.ok()) {
        co_return sent;
      }
      for (std::uint64_t offset = 0; offset < size;) {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(kMaxPeerChunk, size - offset));
        if (auto sent = co_await call.Write(Pattern(seed, offset, n)); !sent.ok()) {
          co_return sent;
        }
        offset += n;
      }
      co_return co_await call.CloseResponse();
    }
    case kFail:
      co_return Error(ErrorCode::kNoSuchKey, "no such key here");
    case kHang: {
      served.hanging.fetch_add(1);
      asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::hours(1));
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      co_return Error(ErrorCode::kInternal, "woke up");
    }
    case kFailMidStream: {
      PeerResponse response{0, "", true};
      if (auto sent = co_await call.Respond(std::move(response)); !sent.ok()) {
        co_return sent;
      }
      if (auto sent = co_await call.Write(std::string(1000, 'a')); !sent.ok()) {
        co_return sent;
      }
      co_return Error(ErrorCode::kUnavailable, "the disk went away", true);
    }
    case kNoResponse:
      co_return Ok();
    case kEchoStream: {
      std::string all;
      for (;;) {
        auto chunk = co_await call.Read();
        if (!chunk.ok()) {
          co_return std::move(chunk).error();
        }
        if (!*chunk) {
          break;
        }
        all += **chunk;
      }
      PeerResponse response{0, std::to_string(all.size()), true};
      if (auto sent = co_await call.Respond(std::move(response)); !sent.ok()) {
        co_return sent;
      }
      for (std::size_t at = 0; at < all.size(); at += 300'007) {
        if (auto sent = co_await call.Write(all.substr(at, 300'007)); !sent.ok()) {
          co_return sent;
        }
      }
      co_return co_await call.CloseResponse();
    }
    default:
      co_return Error(ErrorCode::kNotImplemented, "op " + std::to_string(request.op));
  }
}

// A call with nothing streamed: its response.
PeerTask<PeerResponse> Simple(PeerTransport& transport, std::string peer, PeerRequest request) {
  auto call = co_await transport.Call(std::move(peer), std::move(request));
  if (!call.ok()) {
    co_return std::move(call).error();
  }
  co_return co_await (*call)->Response();
}

// kSink: streams `size` bytes of Pattern(seed) in chunks of `chunk` bytes.
PeerTask<PeerResponse> Upload(PeerTransport& transport, std::string peer, std::uint64_t seed,
                              std::uint64_t size, std::size_t chunk) {
  PeerRequest request{kSink, std::to_string(seed), true};
  auto call = co_await transport.Call(std::move(peer), std::move(request));
  if (!call.ok()) {
    co_return std::move(call).error();
  }
  for (std::uint64_t offset = 0; offset < size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size - offset));
    if (auto sent = co_await (*call)->Write(Pattern(seed, offset, n)); !sent.ok()) {
      co_return std::move(sent).error();
    }
    offset += n;
  }
  if (auto closed = co_await (*call)->CloseRequest(); !closed.ok()) {
    co_return std::move(closed).error();
  }
  co_return co_await (*call)->Response();
}

// kSource: the bytes received, and whether each matched Pattern(seed).
struct Downloaded {
  std::uint64_t bytes = 0;
  bool matches = true;
};
PeerTask<Downloaded> Download(PeerTransport& transport, std::string peer, std::uint64_t seed,
                              std::uint64_t size) {
  PeerRequest request{kSource, std::to_string(seed) + ":" + std::to_string(size)};
  auto call = co_await transport.Call(std::move(peer), std::move(request));
  if (!call.ok()) {
    co_return std::move(call).error();
  }
  auto response = co_await (*call)->Response();
  if (!response.ok()) {
    co_return std::move(response).error();
  }
  Downloaded out;
  for (;;) {
    auto chunk = co_await (*call)->Read();
    if (!chunk.ok()) {
      co_return std::move(chunk).error();
    }
    if (!*chunk) {
      co_return out;
    }
    out.matches = out.matches && **chunk == Pattern(seed, out.bytes, (*chunk)->size());
    out.bytes += (*chunk)->size();
  }
}

// kEchoStream: streams `sent` one way and returns what came back the other way.
PeerTask<std::string> EchoStream(PeerTransport& transport, std::string peer, std::string sent) {
  PeerRequest request{kEchoStream, "", true};
  auto call = co_await transport.Call(std::move(peer), request);
  if (!call.ok()) {
    co_return std::move(call).error();
  }
  for (std::size_t at = 0; at < sent.size(); at += 65'536) {
    if (auto wrote = co_await (*call)->Write(sent.substr(at, 65'536)); !wrote.ok()) {
      co_return std::move(wrote).error();
    }
  }
  if (auto closed = co_await (*call)->CloseRequest(); !closed.ok()) {
    co_return std::move(closed).error();
  }
  auto response = co_await (*call)->Response();
  if (!response.ok()) {
    co_return std::move(response).error();
  }
  std::string back;
  for (;;) {
    auto chunk = co_await (*call)->Read();
    if (!chunk.ok()) {
      co_return std::move(chunk).error();
    }
    if (!*chunk) {
      co_return back;
    }
    back += **chunk;
  }
}

// A blocking socket speaking (or breaking) the protocol by hand.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval tv{static_cast<time_t>(std::chrono::seconds(kWait).count()), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  // How the server's log names this connection.
  std::string Name() const {
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    return "from 127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + " (";
  }
  void Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        return;  // the server closed already: what is left does not matter
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void EndWrites() { ::shutdown(fd_, SHUT_WR); }

  // The next frame the server sends; nullopt when it closed (or kWait passed).
  std::optional<Frame> ReadFrame() {
    for (;;) {
      std::string_view in = pending_;
      auto frame = decoder_.Next(in);
      pending_ = std::string(in);
      if (!frame.ok()) {
        return std::nullopt;
      }
      if (*frame) {
        return std::move(**frame);
      }
      if (!Fill()) {
        return std::nullopt;
      }
    }
  }
  // Reads until the server closes the connection: true, with what it sent in `got`;
  // false when kWait passed first.
  bool ReadUntilClosed(std::string* got = nullptr) {
    while (Fill()) {
    }
    if (got != nullptr) {
      *got = pending_;
    }
    return closed_;
  }

 private:
  bool Fill() {
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (n > 0) {
      pending_.append(buffer, static_cast<std::size_t>(n));
      return true;
    }
    closed_ = n == 0 || errno == ECONNRESET;
    return false;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string pending_;
  FrameDecoder decoder_;
};

std::string FrameBytes(FrameType type, std::uint16_t flags, std::uint64_t id, std::string payload) {
  auto bytes = EncodeFrame(type, flags, id, std::move(payload));
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? *bytes : std::string();
}

std::string RequestFrame(std::uint64_t id, std::uint64_t epoch, PeerRequest request) {
  auto payload = EncodeRequest(epoch, request);
  EXPECT_TRUE(payload.ok());
  return FrameBytes(FrameType::kRequest, 0, id, payload.ok() ? *payload : "");
}

class TcpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The transports' log lines, to count them; swapped while no transport runs.
    log_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(512);
    saved_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("peer-test", log_));
    StartServer(Options("gw-a"));
    client_ = std::make_unique<TcpTransport>(client_io_.executor(), Options("gw-b"));
  }
  void TearDown() override {
    client_->Stop();
    server_->Stop();
    spdlog::set_default_logger(saved_logger_);
  }

  static TcpTransportOptions Options(std::string node, std::string secret = kSecret) {
    TcpTransportOptions options;
    options.node = std::move(node);
    options.secret = std::move(secret);
    options.listen = "127.0.0.1:0";
    options.connect_timeout = 2s;
    options.handshake_timeout = 1s;
    options.io_timeout = 10s;
    return options;
  }
  void StartServer(TcpTransportOptions options) {
    if (server_) {
      server_->Stop();
    }
    server_ = std::make_unique<TcpTransport>(server_io_.executor(), std::move(options));
    ASSERT_TRUE(
        server_->Serve([this](PeerIncomingCall& call) { return Handle(served_, call); }).ok());
  }
  std::string Address() const { return AddressOf(*server_); }
  static std::string AddressOf(const TcpTransport& transport) {
    return "127.0.0.1:" + std::to_string(transport.port());
  }
  // A transport serving the port on the server's thread with Handle(`served`), which hands
  // the sessions of the ops `takes` accepts to `adopt` (TcpTransport::SetHandOff).
  std::unique_ptr<TcpTransport> StartOrigin(
      Served& served, std::function<bool(std::uint32_t)> takes,
      std::function<bool(std::unique_ptr<HandedSession>&)> adopt) {
    auto origin = std::make_unique<TcpTransport>(server_io_.executor(), Options("gw-a"));
    origin->SetHandOff(SessionHandOff{.takes = std::move(takes), .adopt = std::move(adopt)});
    EXPECT_TRUE(
        origin->Serve([&served](PeerIncomingCall& call) { return Handle(served, call); }).ok());
    return origin;
  }

  int LogLines(std::string_view needle) const {
    int n = 0;
    for (const auto& line : log_->last_formatted()) {
      n += line.find(needle) != std::string::npos ? 1 : 0;
    }
    return n;
  }

  // The server still serves a well-behaved client.
  void ExpectServesAGoodClient() {
    auto response = client_io_.Run(Simple(*client_, Address(), {kEcho, "still there?"}));
    ASSERT_TRUE(response.ok()) << response.error().message;
    EXPECT_EQ(response->payload, "echo:still there?");
  }

  // A raw connection that the server must close, having logged it once and served
  // nothing; `setup` sends what breaks the protocol.
  void ExpectRefused(const std::function<void(RawClient&)>& setup, std::string_view why) {
    const auto failed_before = server_->stats().sessions_failed;
    const int calls_before = served_.calls.load();
    std::string name;
    {
      RawClient raw(server_->port());
      ASSERT_TRUE(raw.connected());
      name = raw.Name();
      setup(raw);
      std::string got;
      EXPECT_TRUE(raw.ReadUntilClosed(&got)) << why << ": the server kept the connection open";
    }
    ASSERT_TRUE(WaitUntil([&] { return server_->stats().sessions_failed == failed_before + 1; }))
        << why;
    EXPECT_EQ(served_.calls.load(), calls_before) << why << ": the handler ran";
    EXPECT_EQ(LogLines(name), 1) << why << ": logged other than once";
    ExpectServesAGoodClient();
  }

  IoThread server_io_;
  IoThread client_io_;
  Served served_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_;
  std::shared_ptr<spdlog::logger> saved_logger_;
  std::unique_ptr<TcpTransport> server_;
  std::unique_ptr<TcpTransport> client_;
};

TEST_F(TcpTransportTest, ACallRoundTripsPayloadsAndHandlerErrors) {
  auto response = client_io_.Run(Simple(*client_, Address(), {kEcho, "change record"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 7u);
  EXPECT_EQ(response->payload, "echo:change record");
  EXPECT_FALSE(response->has_stream);

  // The largest payload, and one byte more (refused before anything is sent).
  const std::string big = Pattern(1, 0, kMaxPeerPayload - 5);
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, big}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_TRUE(response->payload == "echo:" + big);
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, big + "123456"}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument);

  // A handler's error comes back as it was, and the connection serves the next call.
  response = client_io_.Run(Simple(*client_, Address(), {kFail, ""}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(response.error().message, "no such key here");
  EXPECT_FALSE(IsStaleEpoch(response.error()));
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, ""}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(server_->stats().handler_calls, 4u);
}

TEST_F(TcpTransportTest, StreamsOf64MiBArriveByteExactWithBoundedBuffers) {
  constexpr std::uint64_t kSize = 64ull << 20;
  // Full chunks one way; an odd chunk size the other, so frames and reads never align.
  auto uploaded = client_io_.Run(Upload(*client_, Address(), 11, kSize, kMaxPeerChunk));
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;
  EXPECT_EQ(uploaded->status, 0u) << "the server saw other bytes than were sent";
  EXPECT_EQ(uploaded->payload, std::to_string(kSize));
  uploaded = client_io_.Run(Upload(*client_, Address(), 12, 3'000'001, 100'003));
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().message;
  EXPECT_EQ(uploaded->status, 0u);
  EXPECT_EQ(uploaded->payload, "3000001");

  auto downloaded = client_io_.Run(Download(*client_, Address(), 13, kSize));
  ASSERT_TRUE(downloaded.ok()) << downloaded.error().message;
  EXPECT_EQ(downloaded->bytes, kSize);
  EXPECT_TRUE(downloaded->matches);

  // One frame being decoded plus one read buffer, never the stream.
  const std::size_t bound = kFrameHeaderBytes + kMaxFramePayload + kReadBufferBytes;
  EXPECT_GT(server_->stats().peak_buffered, 0u);
  EXPECT_LE(server_->stats().peak_buffered, bound);
  EXPECT_GT(client_->stats().peak_buffered, 0u);
  EXPECT_LE(client_->stats().peak_buffered, bound);
  EXPECT_EQ(client_->stats().connects, 1u) << "streamed calls hand their connection back";
}

// A forwarded S3 request streams both ways in one call: the response's stream is counted
// on its own, not on top of the request's (it was, and every such call failed its check).
TEST_F(TcpTransportTest, OneCallStreamsBothWays) {
  for (std::size_t size : {std::size_t{1}, std::size_t{271}, std::size_t{3'000'001}}) {
    const std::string sent = Pattern(21, 0, size);
    auto back = client_io_.Run(EchoStream(*client_, Address(), sent));
    ASSERT_TRUE(back.ok()) << size << ": " << back.error().message;
    EXPECT_TRUE(*back == sent) << size;
  }
  EXPECT_EQ(client_->stats().connects, 1u) << "each call handed its connection back";
}

// A gateway stops while its peers keep pooled connections to it, after calls of every
// kind: its Stop ends those sessions and returns.
TEST_F(TcpTransportTest, StopWithPooledConnectionsFromCallsOfEveryKind) {
  ASSERT_TRUE(client_io_.Run(EchoStream(*client_, Address(), "both ways")).ok());
  ASSERT_TRUE(client_io_.Run(Download(*client_, Address(), 3, 5000)).ok());
  ASSERT_TRUE(client_io_.Run(Upload(*client_, Address(), 4, 5000, 1000)).ok());
  ASSERT_TRUE(client_io_.Run(Simple(*client_, Address(), {kEcho, "x"})).ok());
  ASSERT_FALSE(client_io_.Run(Simple(*client_, Address(), {kFail, ""})).ok());
  const auto started = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST_F(TcpTransportTest, ConcurrentCallsShareASmallPool) {
  TcpTransportOptions options = Options("gw-b");
  options.max_idle_per_peer = 4;
  client_->Stop();
  client_ = std::make_unique<TcpTransport>(client_io_.executor(), options);
  constexpr int kCalls = 32;
  auto round = [&]() -> asio::awaitable<int> {
    // All in flight at once on the client's thread; each takes a connection of its own.
    auto ex = co_await asio::this_coro::executor;
    auto ok = std::make_shared<int>(0);
    auto left = std::make_shared<int>(kCalls);
    auto done = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
    for (int i = 0; i < kCalls; ++i) {
      asio::co_spawn(
          ex,
          [&, i, ok, left, done]() -> asio::awaitable<void> {
            const std::string payload = "call " + std::to_string(i);
            PeerRequest request{kEcho, payload};
            auto response = co_await Simple(*client_, Address(), std::move(request));
            if (response.ok() && response->payload == "echo:" + payload) {
              ++*ok;
            }
            if (--*left == 0) {
              done->cancel();
            }
          },
          asio::detached);
    }
    co_await done->async_wait(asio::as_tuple(asio::use_awaitable));
    co_return *ok;
  };
  EXPECT_EQ(client_io_.Run(round()), kCalls);
  const auto first = client_->stats();
  EXPECT_GE(first.connects, 1u);
  EXPECT_LE(first.connects, static_cast<std::uint64_t>(kCalls));
  EXPECT_EQ(client_io_.Run(round()), kCalls);
  const auto second = client_->stats();
  // The pool kept 4 of the first round's connections: the second round took them again.
  EXPECT_EQ(second.reused - first.reused, 4u);
  EXPECT_EQ(server_->stats().accepted, second.connects);
  EXPECT_EQ(server_->stats().handler_calls, 2u * kCalls);
}

TEST_F(TcpTransportTest, HandlersThatFailOrLeaveCallsHalfDoneAreAnsweredForThem) {
  // Fails in the middle of its stream: the caller's next Read gets the error.
  auto result = client_io_.Run([&]() -> PeerTask<std::uint64_t> {
    PeerRequest request{kFailMidStream, ""};
    auto call = co_await client_->Call(Address(), std::move(request));
    if (!call.ok()) {
      co_return std::move(call).error();
    }
    auto response = co_await (*call)->Response();
    if (!response.ok()) {
      co_return std::move(response).error();
    }
    std::uint64_t bytes = 0;
    for (;;) {
      auto chunk = co_await (*call)->Read();
      if (!chunk.ok()) {
        co_return std::move(chunk).error();
      }
      if (!*chunk) {
        co_return bytes;
      }
      bytes += (*chunk)->size();
    }
  }());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(result.error().message, "the disk went away");

  // No response at all: kInternal.
  auto response = client_io_.Run(Simple(*client_, Address(), {kNoResponse, ""}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kInternal) << response.error().message;

  // An error before reading the request's stream: the stream is read and dropped for it,
  // and the connection serves the next call.
  const auto accepted = server_->stats().accepted;
  auto failed = client_io_.Run([&]() -> PeerTask<PeerResponse> {
    PeerRequest request{kFail, "", true};
    auto call = co_await client_->Call(Address(), std::move(request));
    if (!call.ok()) {
      co_return std::move(call).error();
    }
    for (int i = 0; i < 5; ++i) {
      if (auto sent = co_await (*call)->Write(Pattern(1, 0, kMaxPeerChunk)); !sent.ok()) {
        co_return std::move(sent).error();
      }
    }
    if (auto closed = co_await (*call)->CloseRequest(); !closed.ok()) {
      co_return std::move(closed).error();
    }
    co_return co_await (*call)->Response();
  }());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kNoSuchKey) << failed.error().message;
  ExpectServesAGoodClient();
  EXPECT_EQ(server_->stats().accepted, accepted);

  // A caller that drops its call half way through the response's stream: its connection
  // is closed, never pooled; the server logs it once and serves on.
  auto dropped = client_io_.Run([&]() -> PeerTask<void> {
    PeerRequest request{kSource,
                        "5:" + std::to_string(64ull << 20)};  // more than the socket buffers
    auto call = co_await client_->Call(Address(), std::move(request));
    if (!call.ok()) {
      co_return std::move(call).error();
    }
    if (auto response = co_await (*call)->Response(); !response.ok()) {
      co_return std::move(response).error();
    }
    auto chunk = co_await (*call)->Read();
    if (!chunk.ok()) {
      co_return std::move(chunk).error();
    }
    co_return Ok();  // the call goes with the rest of the stream unread
  }());
  ASSERT_TRUE(dropped.ok()) << dropped.error().message;
  ASSERT_TRUE(WaitUntil([&] { return server_->stats().sessions_failed == 1; }));
  EXPECT_EQ(LogLines("closing the connection"), 1);
  const auto connects = client_->stats().connects;
  ExpectServesAGoodClient();
  EXPECT_EQ(client_->stats().connects, connects + 1) << "a dropped call's connection was reused";
  EXPECT_EQ(server_->stats().sessions_failed, 1u);
}

TEST_F(TcpTransportTest, APooledConnectionServesCallAfterCall) {
  for (int i = 0; i < 10; ++i) {
    auto response = client_io_.Run(Simple(*client_, Address(), {kEcho, std::to_string(i)}));
    ASSERT_TRUE(response.ok()) << response.error().message;
  }
  EXPECT_EQ(server_->stats().accepted, 1u);
  EXPECT_EQ(client_->stats().connects, 1u);
  EXPECT_EQ(client_->stats().reused, 9u);
}

TEST_F(TcpTransportTest, AWrongSecretIsRefusedOnBothSides) {
  TcpTransport stranger(client_io_.executor(), Options("gw-x", "another-secret"));
  auto response = client_io_.Run(Simple(stranger, Address(), {kEcho, "let me in"}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kAccessDenied) << response.error().message;
  stranger.Stop();
  ASSERT_TRUE(WaitUntil([&] { return server_->stats().sessions_failed == 1; }));
  EXPECT_EQ(server_->stats().authenticated, 0u);

  // And a caller that answers the server's proof with one under another secret.
  ExpectRefused(
      [](RawClient& raw) {
        ClientHandshake handshake("raw", "another-secret", 0, NewNonce());
        raw.Send(*handshake.HelloFrame());
        auto answer = raw.ReadFrame();
        ASSERT_TRUE(answer);
        Hello hello{"raw", 0, NewNonce()};
        // Not a proof that holds: the raw side cannot check the server's either.
        hello.proof = std::string(kProofBytes, 'x');
        raw.Send(FrameBytes(FrameType::kHelloAck, 0, 0, *EncodeHello(hello)));
      },
      "a wrong proof");
  EXPECT_EQ(LogLines("proof does not hold"), 1);
  EXPECT_EQ(served_.calls.load(), 1);  // ExpectServesAGoodClient's call only
}

TEST_F(TcpTransportTest, ConnectionsThatBreakTheProtocolAreClosedAndLoggedOnce) {
  const auto handshake = [](RawClient& raw, std::uint64_t epoch = 0) {
    ClientHandshake hs("raw", kSecret, epoch, NewNonce());
    raw.Send(*hs.HelloFrame());
    auto answer = raw.ReadFrame();
    ASSERT_TRUE(answer);
    auto reply = hs.OnAnswer(*answer);
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    raw.Send(*reply);
  };
  const std::string request = RequestFrame(1, 0, {kEcho, "hi"});

  ExpectRefused([](RawClient& raw) { raw.Send(std::string(100, 'G') + "ET / HTTP/1.1\r\n\r\n"); },
                "garbage");
  ExpectRefused(
      [](RawClient& raw) {
        ClientHandshake hs("raw", kSecret, 0, NewNonce());
        const std::string hello = *hs.HelloFrame();
        raw.Send(hello.substr(0, hello.size() - 3));
        raw.EndWrites();
      },
      "a truncated hello");
  ExpectRefused(
      [&](RawClient& raw) {
        handshake(raw);
        raw.Send(request.substr(0, 40));
        raw.EndWrites();
      },
      "a truncated frame after the handshake");
  ExpectRefused(
      [&](RawClient& raw) {
        handshake(raw);
        std::string bad = request;
        bad[24] = static_cast<char>(bad[24] ^ 0x10);  // a bit of the frame's CRC
        raw.Send(bad);
      },
      "a flipped CRC bit");
  ExpectRefused(
      [&](RawClient& raw) {
        handshake(raw);
        std::string bad = request;
        bad[5] = 9;  // no such frame type
        raw.Send(bad);
      },
      "an unknown frame type");
  ExpectRefused([&](RawClient& raw) { raw.Send(request); }, "a request before the handshake");
  ExpectRefused(
      [&](RawClient& raw) {
        handshake(raw);
        raw.Send(FrameBytes(FrameType::kResponse, 0, 1, std::string(5, '\0')));
      },
      "a response from the caller");
  EXPECT_EQ(served_.calls.load(), 7);  // the good client's, one after each case
}

TEST_F(TcpTransportTest, AReplayedAnswerFromAnEarlierConnectionIsRefused) {
  const std::string nonce = NewNonce();
  std::string recorded;  // the caller's answer on its first connection
  {
    RawClient raw(server_->port());
    ClientHandshake hs("raw", kSecret, 0, nonce);
    raw.Send(*hs.HelloFrame());
    auto answer = raw.ReadFrame();
    ASSERT_TRUE(answer);
    auto reply = hs.OnAnswer(*answer);
    ASSERT_TRUE(reply.ok());
    recorded = *reply;
    raw.Send(recorded);
    raw.Send(RequestFrame(1, 0, {kEcho, "first"}));
    auto response = raw.ReadFrame();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->type, FrameType::kResponse);
  }
  // The same hello again (even the same nonce): the server's nonce is new, so the recorded
  // answer no longer holds.
  ExpectRefused(
      [&](RawClient& raw) {
        ClientHandshake hs("raw", kSecret, 0, nonce);
        raw.Send(*hs.HelloFrame());
        ASSERT_TRUE(raw.ReadFrame());
        raw.Send(recorded);
        raw.Send(RequestFrame(1, 0, {kEcho, "replayed"}));
      },
      "a replayed answer");
  EXPECT_EQ(served_.calls.load(), 2);  // "first" and the good client's
}

TEST_F(TcpTransportTest, AHandshakeMustCompleteInTime) {
  const auto start = std::chrono::steady_clock::now();
  ExpectRefused([](RawClient&) {}, "a silent caller");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
}

TEST_F(TcpTransportTest, AStaleEpochIsRefusedInTheHelloAndInRequests) {
  server_->SetEpoch(5);
  client_->SetEpoch(5);  // the good client ExpectRefused calls after each case
  // Raw: a hello at epoch 4 gets one kError naming epoch 5, then the close.
  ExpectRefused(
      [](RawClient& raw) {
        ClientHandshake hs("raw", kSecret, 4, NewNonce());
        raw.Send(*hs.HelloFrame());
        auto refusal = raw.ReadFrame();
        ASSERT_TRUE(refusal);
        ASSERT_EQ(refusal->type, FrameType::kError);
        auto error = DecodeError(refusal->payload);
        ASSERT_TRUE(error.ok());
        std::uint64_t epoch = 0;
        EXPECT_TRUE(IsStaleEpoch(error->error, &epoch));
        EXPECT_EQ(epoch, 5u);
      },
      "a stale hello");
  // Raw: a request stamped 4 on a connection that shook hands at 5.
  ExpectRefused(
      [](RawClient& raw) {
        ClientHandshake hs("raw", kSecret, 5, NewNonce());
        raw.Send(*hs.HelloFrame());
        auto answer = raw.ReadFrame();
        ASSERT_TRUE(answer);
        raw.Send(*hs.OnAnswer(*answer));
        raw.Send(RequestFrame(1, 4, {kEcho, "old news"}));
      },
      "a stale request");

  // Through the transport: the caller learns the epoch to refresh to.
  client_->SetEpoch(3);
  auto response = client_io_.Run(Simple(*client_, Address(), {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  std::uint64_t epoch = 0;
  EXPECT_TRUE(IsStaleEpoch(response.error(), &epoch)) << response.error().message;
  EXPECT_EQ(epoch, 5u);
  EXPECT_TRUE(response.error().retryable);
  client_->SetEpoch(5);
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, "x"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  // The membership moves on while the connection idles in the pool: its next request is
  // stamped 5 and refused.
  const int calls = served_.calls.load();
  server_->SetEpoch(6);
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(IsStaleEpoch(response.error(), &epoch)) << response.error().message;
  EXPECT_EQ(epoch, 6u);
  EXPECT_EQ(served_.calls.load(), calls);
  client_->SetEpoch(6);
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, "x"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
}

TEST_F(TcpTransportTest, CoreClientsCarryTheRegistrysEpochAndCountTheirConnections) {
  server_->SetEpoch(5);
  ClusterConfig cluster;
  cluster.node = "gw-b";
  cluster.secret = kSecret;
  CoreClients registry(cluster);
  IoThread second_core;
  // Made before the registry knew the epoch: refused as stale until the registry moves.
  auto early = registry.Make(client_io_.executor(), {});
  auto response = client_io_.Run(Simple(*early, Address(), {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(IsStaleEpoch(response.error())) << response.error().message;
  registry.SetEpoch(5);
  response = client_io_.Run(Simple(*early, Address(), {kEcho, "x"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->payload, "echo:x");
  // Made after: stamped at once; it runs on its own core.
  auto late = registry.Make(second_core.executor(), {});
  response = second_core.Run(Simple(*late, Address(), {kEcho, "y"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->payload, "echo:y");
  EXPECT_EQ(registry.counters().connects, 2u);
  // A client never serves; a stopped and destroyed one still counts.
  EXPECT_EQ(late->Serve([](PeerIncomingCall&) -> PeerTask<void> { co_return Ok(); }).error().code,
            ErrorCode::kInvalidArgument);
  late->Stop();
  late.reset();
  EXPECT_EQ(registry.counters().connects, 2u);
  response = client_io_.Run(Simple(*early, Address(), {kEcho, "z"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(registry.counters().connects, 2u) << "the early client's pooled connection was reused";
  early->Stop();
}

TEST_F(TcpTransportTest, CoreClientsHostHandedSessionsInTurn) {
  ClusterConfig cluster;
  cluster.node = "gw-a";
  cluster.secret = kSecret;
  CoreClients registry(cluster);
  Served hosted;
  std::mutex threads_mu;
  std::set<std::thread::id> threads;  // where the hosted calls ran
  const auto handler = [&](PeerIncomingCall& call) {
    {
      std::lock_guard lock(threads_mu);
      threads.insert(std::this_thread::get_id());
    }
    return Handle(hosted, call);
  };
  Served served;
  auto origin = StartOrigin(
      served, [](std::uint32_t op) { return op == kEcho; },
      [&](std::unique_ptr<HandedSession>& session) { return registry.Adopt(session); });
  const std::string address = AddressOf(*origin);

  // No host yet: served where it arrived.
  auto response = client_io_.Run(Simple(*client_, address, {kEcho, "a"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(served.calls.load(), 1);
  // Two hosts: two new connections, one on each, in turn.
  IoThread core_a;
  IoThread core_b;
  auto host_a = registry.Make(core_a.executor(), handler);
  auto host_b = registry.Make(core_b.executor(), handler);
  for (const char* payload : {"b", "c"}) {
    auto caller = std::make_unique<TcpTransport>(client_io_.executor(), Options("gw-b"));
    response = client_io_.Run(Simple(*caller, address, {kEcho, payload}));
    ASSERT_TRUE(response.ok()) << response.error().message;
    EXPECT_EQ(response->payload, std::string("echo:") + payload);
    caller->Stop();
  }
  EXPECT_EQ(hosted.calls.load(), 2);
  EXPECT_EQ(served.calls.load(), 1);
  {
    std::lock_guard lock(threads_mu);
    EXPECT_EQ(threads.size(), 2u) << "each host took one connection";
  }
  EXPECT_EQ(registry.counters().calls_served, 2u);
  host_a->Stop();
  host_b->Stop();
  host_a.reset();
  host_b.reset();
  EXPECT_EQ(registry.counters().calls_served, 2u) << "the hosts that are gone still count";
  origin->Stop();
}

TEST_F(TcpTransportTest, SessionsOfTakenOpsMoveToTheirHostWithTheirBufferedBytes) {
  // An origin serving the port hands sessions whose call is kEcho or kEchoStream to a host
  // on another thread, when `accept` lets it.
  IoThread host_io;
  Served host_served;
  TcpTransport host(host_io.executor(), Options("gw-a"));
  ASSERT_TRUE(host.Host([&](PeerIncomingCall& call) { return Handle(host_served, call); }).ok());
  EXPECT_FALSE(host.Host([&](PeerIncomingCall& call) { return Handle(host_served, call); }).ok());
  std::atomic<bool> accept{false};
  Served origin_served;
  auto origin = StartOrigin(
      origin_served, [](std::uint32_t op) { return op == kEcho || op == kEchoStream; },
      [&](std::unique_ptr<HandedSession>& session) {
        return accept.load() && host.Adopt(session);
      });
  const std::string address = AddressOf(*origin);
  const auto fresh_client = [&] {
    return std::make_unique<TcpTransport>(client_io_.executor(), Options("gw-b"));
  };

  // Not adopted: served where it arrived.
  auto first = fresh_client();
  auto response = client_io_.Run(Simple(*first, address, {kEcho, "here"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->payload, "echo:here");
  EXPECT_EQ(origin_served.calls.load(), 1);
  EXPECT_EQ(host_served.calls.load(), 0);
  first->Stop();

  // Adopted at its first call, with the stream bytes that came in the same reads; every
  // later call of the connection, of any op, is the host's.
  accept = true;
  auto moved = fresh_client();
  const std::string sent = Pattern(7, 0, 700'000);
  auto echoed = client_io_.Run(EchoStream(*moved, address, sent));
  ASSERT_TRUE(echoed.ok()) << echoed.error().message;
  EXPECT_EQ(*echoed, sent);
  response = client_io_.Run(Simple(*moved, address, {kEcho, "there"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->payload, "echo:there");
  auto sunk = client_io_.Run(Upload(*moved, address, 9, 3'000'000, 1 << 20));
  ASSERT_TRUE(sunk.ok()) << sunk.error().message;
  EXPECT_EQ(sunk->status, 0u);
  EXPECT_EQ(host_served.calls.load(), 3);
  EXPECT_EQ(origin_served.calls.load(), 1);
  EXPECT_EQ(moved->stats().connects, 1u) << "one connection, moved once";
  EXPECT_EQ(host.stats().handler_calls, 3u);
  moved->Stop();

  // A host that stopped closes what it is handed: the caller sees a retryable failure,
  // and the next connection, not adopted, is served.
  host.Stop();
  auto late = fresh_client();
  response = client_io_.Run(Simple(*late, address, {kEcho, "late"}));
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(response.error().retryable) << response.error().message;
  accept = false;
  response = client_io_.Run(Simple(*late, address, {kEcho, "late"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(origin_served.calls.load(), 2);
  late->Stop();
  origin->Stop();
}

TEST_F(TcpTransportTest, AHostedConnectionsOtherOpsAreServedOnAnotherThreadHopping) {
  // The host serves kEcho itself; any other op it passes, as a HoppingCall, to a handler
  // on a third thread (the cluster's), whose every step hops back to the host's.
  IoThread host_io;
  IoThread cluster_io;
  Served hosted;
  Served hopped;
  std::atomic<bool> hop_ran_off_host{true};
  TcpTransport host(host_io.executor(), Options("gw-a"));
  auto host_executor = host_io.executor();
  auto cluster_executor = cluster_io.executor();
  ASSERT_TRUE(host.Host([&](PeerIncomingCall& call) -> PeerTask<void> {
                    if (call.request().op == kEcho) {
                      co_return co_await Handle(hosted, call);
                    }
                    HoppingCall hopping(call, host_executor);
                    const auto host_thread = std::this_thread::get_id();
                    auto served = [&]() -> PeerTask<void> {
                      if (std::this_thread::get_id() == host_thread) {
                        hop_ran_off_host = false;
                      }
                      co_return co_await Handle(hopped, hopping);
                    };
                    co_return co_await RunOn(cluster_executor, served());
                  })
                  .ok());
  Served served;
  auto origin = StartOrigin(
      served, [](std::uint32_t op) { return op == kEcho; },
      [&](std::unique_ptr<HandedSession>& session) { return host.Adopt(session); });
  const std::string address = AddressOf(*origin);

  auto response = client_io_.Run(Simple(*client_, address, {kEcho, "moves"}));
  ASSERT_TRUE(response.ok()) << response.error().message;
  // The same connection, other ops: a stream both ways, a handler error.
  const std::string sent = Pattern(3, 0, 2'500'000);
  auto echoed = client_io_.Run(EchoStream(*client_, address, sent));
  ASSERT_TRUE(echoed.ok()) << echoed.error().message;
  EXPECT_EQ(*echoed, sent);
  response = client_io_.Run(Simple(*client_, address, {kFail, ""}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(hosted.calls.load(), 1);
  EXPECT_EQ(hopped.calls.load(), 2);
  EXPECT_EQ(served.calls.load(), 0);
  EXPECT_TRUE(hop_ran_off_host.load());
  EXPECT_EQ(client_->stats().connects, 1u);
  host.Stop();
  origin->Stop();
}

TEST_F(TcpTransportTest, ConnectionsOverTheLimitAreClosedAtOnce) {
  TcpTransportOptions options = Options("gw-a");
  options.max_connections = 2;
  StartServer(options);
  RawClient first(server_->port());
  RawClient second(server_->port());
  ASSERT_TRUE(WaitUntil([&] { return server_->stats().accepted == 2; }));
  RawClient third(server_->port());
  EXPECT_TRUE(third.ReadUntilClosed());
  EXPECT_EQ(server_->stats().refused, 1u);
  EXPECT_EQ(server_->stats().accepted, 2u);
}

TEST_F(TcpTransportTest, APeerThatIsDownOrMuteIsUnavailableInTime) {
  // A port nobody listens on: refused at once.
  std::uint16_t free_port = 0;
  {
    // A port the kernel picked for a socket that never listened, then closed.
    sockaddr_in addr{};
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    free_port = ntohs(addr.sin_port);
    ::close(fd);
  }
  auto start = std::chrono::steady_clock::now();
  auto response =
      client_io_.Run(Simple(*client_, "127.0.0.1:" + std::to_string(free_port), {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kUnavailable) << response.error().message;
  EXPECT_TRUE(response.error().retryable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);

  // A listener that never answers: connected (the kernel accepts), then the handshake
  // times out.
  int mute = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(mute, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(mute, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(mute, reinterpret_cast<sockaddr*>(&addr), &len);
  start = std::chrono::steady_clock::now();
  response = client_io_.Run(
      Simple(*client_, "127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), {kEcho, "x"}));
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(mute);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kUnavailable) << response.error().message;
  EXPECT_GE(took, 1s);  // the handshake timeout
  EXPECT_LT(took, 3s);  // the connect timeout plus the handshake's

  response = client_io_.Run(Simple(*client_, "no-port-here", {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(TcpTransportTest, StopEndsCallsInFlight) {
  // Calls whose handler never answers, in flight on both transports.
  constexpr int kCalls = 4;
  std::vector<std::future<Result<PeerResponse>>> results;
  for (int i = 0; i < kCalls; ++i) {
    auto promise = std::make_shared<std::promise<Result<PeerResponse>>>();
    results.push_back(promise->get_future());
    asio::co_spawn(
        client_io_.executor(),
        [this, promise]() -> asio::awaitable<void> {
          PeerRequest request{kHang, ""};
          promise->set_value(co_await Simple(*client_, Address(), std::move(request)));
        },
        asio::detached);
  }
  ASSERT_TRUE(WaitUntil([&] { return served_.hanging.load() == kCalls; }));
  // The server stops: its sessions are cancelled, the callers see their connections close.
  server_->Stop();
  for (auto& result : results) {
    ASSERT_EQ(result.wait_for(kWait), std::future_status::ready);
    auto response = result.get();
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.error().code, ErrorCode::kUnavailable) << response.error().message;
  }
  EXPECT_EQ(LogLines("closing the connection"), 0) << "a stop is not a peer's fault";

  // The client stops with a call in flight to a server that is still up.
  StartServer(Options("gw-a"));
  auto promise = std::make_shared<std::promise<Result<PeerResponse>>>();
  auto result = promise->get_future();
  asio::co_spawn(
      client_io_.executor(),
      [this, promise]() -> asio::awaitable<void> {
        PeerRequest request{kHang, ""};
        promise->set_value(co_await Simple(*client_, Address(), std::move(request)));
      },
      asio::detached);
  ASSERT_TRUE(WaitUntil([&] { return served_.hanging.load() == kCalls + 1; }));
  client_->Stop();
  ASSERT_EQ(result.wait_for(kWait), std::future_status::ready);
  auto response = result.get();
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kUnavailable) << response.error().message;
  // A stopped transport makes no new call.
  response = client_io_.Run(Simple(*client_, Address(), {kEcho, "x"}));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace strata::storage::peer
