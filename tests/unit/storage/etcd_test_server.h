// What the cluster's unit tests run against: a real etcd (Debian's etcd-server, /usr/bin/etcd)
// on free loopback ports with a data directory of its own, a proxy in front of it that a test
// can cut (a gateway partitioned from etcd), and a server that answers junk. Also an
// io_context on a thread of its own, since a membership's background coroutines never end
// by themselves (test_io_context.h runs an io_context until it is out of work).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/storage/test_moto.h"

namespace strata::storage::testing {

// The etcd binary: $STRATA_ETCD, else /usr/bin/etcd; empty when neither is executable.
inline std::string EtcdBinary() {
  if (const char* env = std::getenv("STRATA_ETCD"); env != nullptr && ::access(env, X_OK) == 0) {
    return env;
  }
  return ::access("/usr/bin/etcd", X_OK) == 0 ? "/usr/bin/etcd" : "";
}

// A blocking HTTP/1.0 exchange on loopback, for the readiness probe: the whole answer, or
// empty on any failure.
inline std::string RawHttp(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
      answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

// etcd on free loopback ports while the object lives. ok() is false when there is no etcd
// binary or it did not answer within the deadline (why() says which).
class EtcdServer {
 public:
  EtcdServer() {
    const std::string binary = EtcdBinary();
    if (binary.empty()) {
      why_ = "no etcd binary (apt-get install etcd-server, or set STRATA_ETCD)";
      return;
    }
    char dir_template[] = "/tmp/strata-etcd-XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) {
      why_ = "cannot make a data directory";
      return;
    }
    dir_ = dir_template;
    client_port_ = FreePort();
    int peer_port = FreePort();
    while (peer_port == client_port_) {
      peer_port = FreePort();
    }
    const std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
    const std::string log = dir_ + "/etcd.log";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no etcd outlives a crashed test
      std::freopen(log.c_str(), "w", stdout);
      std::freopen(log.c_str(), "a", stderr);
      ::execl(binary.c_str(), "etcd", "--name", "strata-test", "--data-dir",
              (dir_ + "/data").c_str(), "--listen-client-urls", client.c_str(),
              "--advertise-client-urls", client.c_str(), "--listen-peer-urls", peer.c_str(),
              "--initial-advertise-peer-urls", peer.c_str(), "--initial-cluster",
              ("strata-test=" + peer).c_str(), "--log-level", "error", nullptr);
      ::_exit(127);
    }
    // Waiting for a child process to serve: real time, with a deadline.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        why_ = "etcd exited at start (see its log)";
        return;
      }
      if (RawHttp(client_port_, "GET /health HTTP/1.0\r\n\r\n").find("\"health\":\"true\"") !=
          std::string::npos) {
        ready_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    why_ = "etcd did not answer /health within 15 s";
  }
  ~EtcdServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  bool ok() const { return ready_; }
  const std::string& why() const { return why_; }
  int port() const { return client_port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(client_port_); }

 private:
  pid_t pid_ = -1;
  int client_port_ = 0;
  std::string dir_;
  bool ready_ = false;
  std::string why_;
};

// A loopback listener on a free port, served by `serve(fd)` per connection on one thread,
// until destroyed.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(int fd)> serve) : serve_(std::move(serve)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(listener_, 64);
    thread_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) {
          return;
        }
        serve_(fd);
      }
    });
  }
  virtual ~LoopbackServer() { Shut(); }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 protected:
  void Shut() {
    if (thread_.joinable()) {
      ::shutdown(listener_, SHUT_RDWR);
      ::close(listener_);
      thread_.join();
    }
  }

 private:
  std::function<void(int fd)> serve_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

inline void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Reads one request (head and a Content-Length body); false when the client went away.
inline bool ReadRequest(int fd) {
  std::string head;
  char c;
  while (!head.ends_with("\r\n\r\n")) {
    if (::recv(fd, &c, 1, 0) != 1) {
      return false;
    }
    head += c;
  }
  std::size_t length = 0;
  for (std::string_view name : {"Content-Length: ", "content-length: "}) {
    if (auto at = head.find(name); at != std::string::npos) {
      length = std::strtoull(head.c_str() + at + name.size(), nullptr, 10);
    }
  }
  std::string body(length, '\0');
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::recv(fd, body.data() + got, length - got, 0);
    if (n <= 0) {
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// Answers every request with `answer` (raw bytes, whatever they are) and closes.
class JunkServer : public LoopbackServer {
 public:
  explicit JunkServer(std::string answer)
      : LoopbackServer([answer = std::move(answer)](int fd) {
          // The whole request is read first, so the close is a FIN, not a reset that
          // could overtake the answer.
          if (ReadRequest(fd)) {
            SendAll(fd, answer);
          }
          ::close(fd);
        }) {}
  ~JunkServer() override { Shut(); }
};

// A TCP proxy to a loopback port that the test can cut: Cut() ends every connection and
// closes each new one at once, as a gateway cut off from etcd sees it, until Restore().
class CutProxy {
 public:
  explicit CutProxy(int target_port) : target_port_(target_port) {
    server_.emplace([this](int fd) { Accept(fd); });
  }
  ~CutProxy() {
    Cut();
    server_.reset();  // no more accepts
    for (auto& t : pumps_) {
      t.join();
    }
    for (int fd : fds_) {
      ::close(fd);
    }
  }
  CutProxy(const CutProxy&) = delete;
  CutProxy& operator=(const CutProxy&) = delete;

  std::string url() const { return server_->url(); }
  // Connections accepted while not cut.
  int accepted() {
    std::lock_guard lock(mu_);
    return static_cast<int>(fds_.size() / 2);
  }

  void Cut() {
    std::lock_guard lock(mu_);
    cut_ = true;
    for (int fd : fds_) {
      ::shutdown(fd, SHUT_RDWR);
    }
  }
  // New connections go through again.
  void Restore() {
    std::lock_guard lock(mu_);
    cut_ = false;
  }
  // Ends the connections open now; new ones go through.
  void DropConnections() {
    Cut();
    Restore();
  }

 private:
  void Accept(int client) {
    std::lock_guard lock(mu_);
    if (cut_) {
      ::close(client);
      return;
    }
    const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(target_port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(upstream);
      ::close(client);
      return;
    }
    fds_.push_back(client);
    fds_.push_back(upstream);
    pumps_.emplace_back([client, upstream] { Pump(client, upstream); });
    pumps_.emplace_back([client, upstream] { Pump(upstream, client); });
  }
  static void Pump(int from, int to) {
    char buf[16384];
    for (ssize_t n; (n = ::recv(from, buf, sizeof buf, 0)) > 0;) {
      SendAll(to, std::string_view(buf, static_cast<std::size_t>(n)));
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  int target_port_;
  std::mutex mu_;
  bool cut_ = false;
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
  std::optional<LoopbackServer> server_;
};

// An io_context run by a thread of its own until destroyed.
class IoThread {
 public:
  IoThread() : work_(ioc_.get_executor()), thread_([this] { ioc_.run(); }) {}
  ~IoThread() {
    work_.reset();
    ioc_.stop();
    thread_.join();
  }
  boost::asio::io_context& context() { return ioc_; }
  boost::asio::any_io_executor executor() { return ioc_.get_executor(); }

  // Runs `awaitable` on the thread and waits for its value.
  template <typename T>
  T Run(boost::asio::awaitable<T> awaitable) {
    std::promise<T> promise;
    std::future<T> future = promise.get_future();
    boost::asio::co_spawn(
        ioc_,
        // By reference: Run waits for the end.
        [&promise, &awaitable]() -> boost::asio::awaitable<void> {
          promise.set_value(co_await std::move(awaitable));
        },
        [&promise](std::exception_ptr e) {
          if (e) {
            promise.set_exception(e);
          }
        });
    return future.get();
  }

 private:
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

// Polls `done` until it holds or `timeout` (real time) passed; returns done().
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return done();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace strata::storage::testing
