#include "gateway/server.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/task_group.h"
#include "gateway/cluster_listing.h"
#include "gateway/connection_limit.h"
#include "gateway/forward.h"
#include "gateway/remote_copy_source.h"
#include "gateway/session.h"
#include "storage/data_path.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

// How long cancelled connections get to unwind, and then an idle core to end its thread.
constexpr auto kCancelledGrace = std::chrono::seconds(2);

Result<tcp::endpoint> ParseEndpoint(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find("]:");
    if (close == std::string::npos) {
      return Error(ErrorCode::kInvalidArgument, "bad listen address " + text);
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) {
      return Error(ErrorCode::kInvalidArgument, "bad listen address " + text);
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument, "bad listen address " + text);
  }
  int p = std::atoi(port.c_str());
  if (p < 0 || p > 65535) {
    return Error(ErrorCode::kInvalidArgument, "bad port in " + text);
  }
  return tcp::endpoint(address, static_cast<unsigned short>(p));
}

// A descriptor held in reserve: out of descriptors (EMFILE), the acceptor closes it to
// accept one waiting client and answer it, instead of leaving every client in the
// kernel's backlog with no reply until a descriptor frees up.
class SpareDescriptor {
 public:
  SpareDescriptor() { Reopen(); }
  ~SpareDescriptor() { Release(); }
  SpareDescriptor(const SpareDescriptor&) = delete;
  SpareDescriptor& operator=(const SpareDescriptor&) = delete;

  bool held() const { return fd_ >= 0; }
  void Release() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  void Reopen() {
    if (fd_ < 0) {
      fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
  }

 private:
  int fd_ = -1;
};

struct Core {
  // The core's accept loops and sessions. Before the io_context: a frame the io_context
  // destroys unfinished still uncounts itself.
  TaskGroup tasks;
  asio::io_context ioc{1};
  std::vector<tcp::acceptor> acceptors;
  CoreState state;
  SpareDescriptor spare;
  std::chrono::steady_clock::time_point last_accept_warning{};
  std::thread thread;
  std::atomic<bool> done{false};
  // In a cluster: the core's own peer client (state.peer_client), made by Run and stopped
  // by it before the core ends; the guard keeps the core running until then (an idle
  // pooled connection is no work of the io_context's, and the client's Stop is carried
  // out on the core's thread). After ioc: destroyed before it.
  std::unique_ptr<storage::PeerTransport> peer_client;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> peer_client_guard;
};

// UBSan (in the ASan test build) checks an object's dynamic type the first time code
// reaches it through a base class, probing its vtable's memory through a pipe(); out of
// descriptors the probe fails and is reported, fatally, as a bad vptr. Touching once at
// start the error categories that the accept and session paths use caches those checks,
// so an EMFILE episode is survivable under the sanitizers too. Costs nothing elsewhere.
void TouchErrorCategories() {
  const boost::system::error_code codes[] = {
      asio::error::no_descriptors, asio::error::operation_aborted, asio::error::eof,
      boost::beast::error::timeout, boost::beast::http::error::end_of_stream};
  for (const auto& ec : codes) {
    (void)ec.message();
    (void)ec.failed();
    (void)(ec == asio::error::no_descriptors);
    (void)(ec == boost::beast::error::timeout);
  }
}

bool OutOfDescriptors(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec.value() == ENFILE;
}

// Answers a connection strata will not serve, and closes it. Plain HTTP gets a
// 503 SlowDown (SDKs back off and retry); TLS is closed before its handshake. The
// socket is fresh, so its send buffer takes the short reply in one non-blocking write;
// what the client has already sent is read first so that the close is a FIN, not a reset
// that could discard the reply before the client reads it.
void Refuse(tcp::socket& socket, bool plain) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  if (plain) {
    char scratch[4096];
    for (int i = 0; i < 16 && !ec; ++i) {
      socket.read_some(asio::buffer(scratch), ec);
    }
    ec = {};
    socket.write_some(asio::buffer(RefusalResponse()), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
  }
  socket.close(ec);
}

}  // namespace

struct Server::Impl {
  explicit Impl(Services& s) : services(s) {}

  Services& services;
  GatewayMetrics metrics;
  std::size_t max_connections = 0;
  std::atomic<std::size_t> open_connections{0};
  std::vector<std::unique_ptr<Core>> cores;
  std::atomic<std::size_t> next_core{0};
  std::optional<asio::ssl::context> tls;
  std::vector<tcp::endpoint> endpoints;
  // SIGINT/SIGTERM are caught from Start on, before any socket listens: a signal sent as
  // soon as a connection to the server succeeds must still shut it down cleanly.
  asio::io_context signals_ioc;
  std::optional<asio::signal_set> signals;

  asio::awaitable<void> AcceptLoop(Core& core, tcp::acceptor& acceptor) {
    auto tuple = asio::as_tuple(asio::use_awaitable);
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(tuple);
      if (core.state.stopping || ec == asio::error::operation_aborted) {
        co_return;
      }
      if (ec) {
        if (OutOfDescriptors(ec) && RefuseOneWaiting(core, acceptor)) {
          continue;  // the next waiting client, if any, gets the same
        }
        // No spare descriptor either (or another error): wait for descriptors to free up
        // instead of spinning on a listener that stays readable.
        auto now = std::chrono::steady_clock::now();
        if (now - core.last_accept_warning > std::chrono::seconds(10)) {
          core.last_accept_warning = now;
          spdlog::warn("accept failed: {} ({} connections open, server.max_connections {})",
                       ec.message(), open_connections.load(std::memory_order_relaxed),
                       max_connections);
        }
        asio::steady_timer timer(core.ioc, std::chrono::milliseconds(50));
        co_await timer.async_wait(tuple);
        core.spare.Reopen();
        continue;
      }
      if (open_connections.load(std::memory_order_relaxed) >= max_connections) {
        if (core.state.idle_sessions.empty()) {
          Refuse(socket, !tls);
          core.state.metrics->ConnectionRefused();
          continue;
        }
        // The oldest idle keep-alive connection makes room: its client reconnects when it
        // needs to, as it must for any idle close, while this one is waiting to be served.
        auto evict = std::move(core.state.idle_sessions.front());
        core.state.idle_sessions.pop_front();
        evict();
      }
      open_connections.fetch_add(1, std::memory_order_relaxed);
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      // The session counts itself out of open_connections when it ends; a refused one
      // (the core is stopping) never began.
      const bool spawned =
          tls ? core.tasks.Spawn(core.ioc.get_executor(),
                                 ServeTls(std::move(socket), *tls, core.state, services))
              : core.tasks.Spawn(core.ioc.get_executor(),
                                 ServePlain(std::move(socket), core.state, services));
      if (!spawned) {
        open_connections.fetch_sub(1, std::memory_order_relaxed);
      }
    }
  }

  // Out of descriptors: frees the spare one to accept a waiting client and refuse it.
  // False when there was no spare or nobody waiting.
  bool RefuseOneWaiting(Core& core, tcp::acceptor& acceptor) {
    if (!core.spare.held()) {
      return false;
    }
    core.spare.Release();
    boost::system::error_code ec;
    acceptor.non_blocking(true, ec);
    tcp::socket socket(core.ioc);
    acceptor.accept(socket, ec);
    bool refused = false;
    if (!ec) {
      Refuse(socket, !tls);
      core.state.metrics->ConnectionRefused();
      refused = true;
    }
    core.spare.Reopen();
    return refused && core.spare.held();
  }

  // The cores in turn, for requests forwarded here by other gateways.
  Core& NextCore() {
    return *cores[next_core.fetch_add(1, std::memory_order_relaxed) % cores.size()];
  }

  void BeginShutdown() {
    // Other gateways' forwarded requests are refused (retryably) from now on.
    if (services.cluster != nullptr) {
      services.cluster->SetHandler(storage::kPeerOpS3Request, {});
      services.cluster->SetHandler(storage::kPeerOpListing, {});
      services.cluster->SetHandler(storage::kPeerOpS3FanOut, {});
      services.cluster->SetHandler(storage::kPeerOpReadVersion, {});
    }
    for (auto& core : cores) {
      asio::post(core->ioc, [c = core.get()] {
        c->state.stopping = true;
        for (auto& acceptor : c->acceptors) {
          boost::system::error_code ignored;
          acceptor.close(ignored);
        }
        c->tasks.Close();
        for (auto& cancel : c->state.idle_cancellers) {
          cancel();
        }
      });
    }
  }

  // Until `deadline`: every core's accept loops and sessions, then the work they left in
  // the background (read-through fills), which no new task joins from then on. False when
  // some task was still running at the deadline.
  bool JoinAll(std::chrono::steady_clock::time_point deadline) {
    bool drained = true;
    for (auto& core : cores) {
      drained = core->tasks.JoinUntil(deadline) && drained;
    }
    if (services.background != nullptr) {
      services.background->Close();
      drained = services.background->JoinUntil(deadline) && drained;
    }
    return drained;
  }

  void CancelAll() {
    for (auto& core : cores) {
      core->tasks.Cancel();
    }
    if (services.background != nullptr) {
      services.background->Cancel();
    }
  }
};

Server::Server(Services& services) : impl_(std::make_unique<Impl>(services)) {}
Server::~Server() = default;

Result<void> Server::Start() {
  const auto& server = impl_->services.config.server;
  // Before the first listen(): a client's connect succeeds from then on (the kernel
  // queues it), and a SIGTERM sent as soon as it did must find the handler.
  impl_->signals.emplace(impl_->signals_ioc, SIGINT, SIGTERM);
  if (server.tls_enabled()) {
    impl_->tls.emplace(asio::ssl::context::tls_server);
    boost::system::error_code ec;
    impl_->tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                            asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                            asio::ssl::context::no_tlsv1_1);
    impl_->tls->use_certificate_chain_file(server.tls_cert, ec);
    if (ec) {
      return Error(ErrorCode::kInvalidArgument, "server.tls_cert: " + ec.message());
    }
    impl_->tls->use_private_key_file(server.tls_key, asio::ssl::context::pem, ec);
    if (ec) {
      return Error(ErrorCode::kInvalidArgument, "server.tls_key: " + ec.message());
    }
  }
  for (const auto& text : server.listen) {
    auto ep = ParseEndpoint(text);
    if (!ep.ok()) {
      return ep.error();
    }
    // SO_REUSEPORT would let this process share a port another strata already serves;
    // a plain bind first makes "address in use" an error, as a user expects.
    asio::io_context probe_ioc;
    tcp::acceptor probe(probe_ioc);
    boost::system::error_code ec;
    probe.open(ep->protocol(), ec);
    if (!ec) {
      probe.set_option(tcp::acceptor::reuse_address(true), ec);
    }
    if (!ec) {
      probe.bind(*ep, ec);
    }
    if (ec) {
      return Error(ErrorCode::kUnavailable, "cannot listen on " + text + ": " + ec.message());
    }
    impl_->endpoints.push_back(*ep);
  }
  TouchErrorCategories();
  const std::uint64_t nofile = OpenFileLimit();
  impl_->max_connections =
      server.max_connections > 0 ? server.max_connections : DefaultMaxConnections(nofile);
  spdlog::info("max_connections {} (RLIMIT_NOFILE {}{})", impl_->max_connections,
               nofile == 0 ? std::string("unlimited") : std::to_string(nofile),
               server.max_connections > 0 ? ", from server.max_connections" : "");
  unsigned threads = server.threads > 0 ? static_cast<unsigned>(server.threads)
                                        : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) {
    auto core = std::make_unique<Core>();
    core->state.metrics = &impl_->metrics.AddShard();
    core->state.all_metrics = &impl_->metrics;
    core->state.open_connections = &impl_->open_connections;
    for (auto& ep : impl_->endpoints) {
      tcp::acceptor acceptor(core->ioc);
      boost::system::error_code ec;
      acceptor.open(ep.protocol(), ec);
      if (!ec) {
        acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
      }
      if (!ec) {
        acceptor.set_option(ReusePort(true), ec);
      }
      if (!ec) {
        acceptor.bind(ep, ec);
      }
      if (!ec) {
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
      }
      if (ec) {
        return Error(ErrorCode::kUnavailable, "cannot listen on " + ep.address().to_string() + ":" +
                                                  std::to_string(ep.port()) + ": " + ec.message());
      }
      core->acceptors.push_back(std::move(acceptor));
    }
    // Each core's own ring, made now so that a kernel refusing it shows at start (the
    // process then falls back to pread/pwrite, logged) rather than on a request.
    storage::PrepareDataPath(core->ioc);
    impl_->cores.push_back(std::move(core));
  }
  for (auto& ep : impl_->endpoints) {
    spdlog::info("listening on {}://{}:{} with {} threads", impl_->tls ? "https" : "http",
                 ep.address().to_string(), ep.port(), threads);
  }
  return Ok();
}

void Server::Run() {
  for (auto& core : impl_->cores) {
    if (auto* cluster = impl_->services.cluster; cluster != nullptr) {
      // Forwarded requests whose calls the peer port hands to this core run on it in place.
      // (The closure lives in the core's transport, for as long as its calls.)
      auto forwarded = [impl = impl_.get(), c = core.get()](storage::PeerIncomingCall& call) {
        return ServeForwarded(call, impl->services, c->ioc.get_executor(), c->tasks,
                              /*fan_out=*/call.request().op == storage::kPeerOpS3FanOut,
                              /*on_io=*/true);
      };
      core->peer_client = cluster->MakeCoreClient(core->ioc.get_executor(), forwarded);
      core->state.peer_client = core->peer_client.get();
      if (core->peer_client) {
        core->peer_client_guard.emplace(asio::make_work_guard(core->ioc));
      }
    }
    for (auto& acceptor : core->acceptors) {
      // Ended by closing its acceptor (BeginShutdown), not by cancellation.
      (void)core->tasks.Spawn(core->ioc.get_executor(), impl_->AcceptLoop(*core, acceptor),
                              /*cancellable=*/false);
    }
    core->thread = std::thread([c = core.get()] {
      c->ioc.run();
      c->done = true;
    });
  }

  // In a cluster, requests other gateways forward here (their keys' owner) run on the
  // cores in turn, each in its core's task group, so shutdown waits for them too.
  if (auto* cluster = impl_->services.cluster; cluster != nullptr) {
    cluster->SetHandler(
        storage::kPeerOpS3Request, [impl = impl_.get()](storage::PeerIncomingCall& call) {
          Core& core = impl->NextCore();
          return ServeForwarded(call, impl->services, core.ioc.get_executor(), core.tasks);
        });
    cluster->SetHandler(
        storage::kPeerOpS3FanOut, [impl = impl_.get()](storage::PeerIncomingCall& call) {
          Core& core = impl->NextCore();
          return ServeForwarded(call, impl->services, core.ioc.get_executor(), core.tasks,
                                /*fan_out=*/true);
        });
    cluster->SetHandler(storage::kPeerOpListing,
                        [impl = impl_.get()](storage::PeerIncomingCall& call) {
                          return ServeListing(call, impl->services);
                        });
    cluster->SetHandler(storage::kPeerOpReadVersion,
                        [impl = impl_.get()](storage::PeerIncomingCall& call) {
                          return ServeReadVersion(call, impl->services);
                        });
  }

  impl_->signals->async_wait([](const boost::system::error_code&, int signo) {
    spdlog::info("signal {} received: finishing in-flight requests", signo);
  });
  impl_->signals_ioc.run();

  // Stop accepting (idle connections close at once), wait for the requests in flight
  // for the grace period, then cancel what is left and wait for it to unwind.
  impl_->BeginShutdown();
  const auto grace = impl_->services.config.server.shutdown_grace;
  if (!impl_->JoinAll(std::chrono::steady_clock::now() + grace)) {
    spdlog::warn("shutdown grace period over: cancelling the remaining connections");
    impl_->CancelAll();
    if (!impl_->JoinAll(std::chrono::steady_clock::now() + kCancelledGrace)) {
      spdlog::warn("connections still open after their cancellation: closing them");
    }
  }
  // The cores' peer clients close their pooled connections (and any call still in flight
  // fails), then let their cores end.
  for (auto& core : impl_->cores) {
    if (core->peer_client) {
      core->peer_client->Stop();
      core->peer_client_guard.reset();
    }
  }
  // With no task left each core's io_context runs out of work and its thread ends.
  auto deadline = std::chrono::steady_clock::now() + kCancelledGrace;
  for (;;) {
    bool all_done = true;
    for (auto& core : impl_->cores) {
      all_done = all_done && core->done;
    }
    if (all_done) {
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      spdlog::warn("shutdown: a core still has work: stopping it");
      for (auto& core : impl_->cores) {
        core->ioc.stop();
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& core : impl_->cores) {
    core->thread.join();
  }
  spdlog::info("server stopped");
}

}  // namespace strata::gateway
