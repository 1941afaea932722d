#include "storage/peer/tcp_io.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace strata::storage::peer {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// The outcome of an operation raced against its timer: the operation's own error, or
// timed_out when the timer completed first (not cancelled: cancellation of the caller
// cancels both, and reports operation_aborted).
error_code Raced(const std::array<std::size_t, 2>& order, const error_code& op_ec,
                 const error_code& timer_ec) {
  if (order[0] == 1 && !timer_ec) {
    return asio::error::timed_out;
  }
  return order[0] == 1 ? error_code(asio::error::operation_aborted) : op_ec;
}

bool WouldBlock(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

// At most this many steps in a row on a thread complete without a trip through its
// io_context: the next one takes the async path, so a stream whose socket is always ready
// still lets the thread's other connections run.
constexpr int kMaxReadySteps = 16;

// Whether to try the socket at once, non-blocking. A peer on loopback or a LAN mostly
// finds its socket ready: the attempt spares the common case the timer and the parallel
// group of a timed wait (their allocations, the timer queue's updates), which then cover
// only what is left. The socket's mode is set once; its async operations work the same.
bool TryReady(tcp::socket& socket) {
  thread_local int ready_steps = 0;
  if (++ready_steps > kMaxReadySteps) {
    ready_steps = 0;
    return false;
  }
  if (!socket.non_blocking()) {
    error_code ec;
    socket.non_blocking(true, ec);
    return !ec;
  }
  return true;
}

}  // namespace

asio::awaitable<std::pair<error_code, std::size_t>> ReadSome(tcp::socket& socket,
                                                             asio::mutable_buffer buffer,
                                                             Deadline deadline) {
  if (deadline == kNoDeadline) {
    auto [ec, n] = co_await socket.async_read_some(buffer, asio::as_tuple(asio::use_awaitable));
    co_return std::pair(ec, n);
  }
  if (TryReady(socket)) {
    error_code ready_ec;
    const std::size_t ready = socket.read_some(buffer, ready_ec);
    if (!WouldBlock(ready_ec)) {
      co_return std::pair(ready_ec, ready_ec ? 0 : ready);
    }
  }
  asio::steady_timer timer(socket.get_executor(), deadline);
  auto [order, read_ec, n, timer_ec] =
      co_await asio::experimental::make_parallel_group(
          socket.async_read_some(buffer, asio::deferred), timer.async_wait(asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  const error_code ec = Raced(order, read_ec, timer_ec);
  co_return std::pair(ec, ec ? 0 : n);
}

asio::awaitable<error_code> WriteAll(tcp::socket& socket, std::string_view bytes,
                                     Deadline deadline) {
  // Not a coroutine of its own: the gathered write's awaitable, with no frame in between.
  return WriteAll(socket, bytes, std::string_view(), deadline);
}

asio::awaitable<error_code> WriteAll(tcp::socket& socket, std::string_view head,
                                     std::string_view body, Deadline deadline) {
  if (TryReady(socket)) {
    error_code ready_ec;
    const std::size_t written =
        asio::write(socket,
                    std::array<asio::const_buffer, 2>{asio::buffer(head.data(), head.size()),
                                                      asio::buffer(body.data(), body.size())},
                    ready_ec);
    if (!WouldBlock(ready_ec)) {
      co_return ready_ec;
    }
    const std::size_t from_head = std::min(written, head.size());
    head.remove_prefix(from_head);
    body.remove_prefix(written - from_head);
  }
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head.data(), head.size()),
                                                  asio::buffer(body.data(), body.size())};
  asio::steady_timer timer(socket.get_executor(), deadline);
  auto [order, write_ec, n, timer_ec] =
      co_await asio::experimental::make_parallel_group(
          asio::async_write(socket, buffers, asio::deferred), timer.async_wait(asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  co_return Raced(order, write_ec, timer_ec);
}

asio::awaitable<error_code> Connect(tcp::socket& socket, const tcp::endpoint& endpoint,
                                    Deadline deadline) {
  asio::steady_timer timer(socket.get_executor(), deadline);
  auto [order, connect_ec, timer_ec] =
      co_await asio::experimental::make_parallel_group(
          socket.async_connect(endpoint, asio::deferred), timer.async_wait(asio::deferred))
          .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  co_return Raced(order, connect_ec, timer_ec);
}

Error NetworkError(std::string_view peer, std::string_view step, const error_code& ec) {
  const bool timed_out = ec == asio::error::timed_out;
  return Error(timed_out ? ErrorCode::kTimedOut : ErrorCode::kUnavailable,
               "peer " + std::string(peer) + ": " + std::string(step) + ": " +
                   (timed_out ? std::string("timed out") : ec.message()),
               true);
}

Result<std::pair<std::string, std::string>> SplitHostPort(std::string_view address) {
  const auto bad = [&] {
    return Error(ErrorCode::kInvalidArgument,
                 "peer address \"" + std::string(address) + "\": want host:port");
  };
  std::string_view host;
  std::string_view port;
  if (address.starts_with('[')) {
    const auto close = address.find("]:");
    if (close == std::string_view::npos) {
      return bad();
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      return bad();
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoi(std::string(port)) > 65535) {
    return bad();
  }
  return std::pair(std::string(host), std::string(port));
}

}  // namespace strata::storage::peer
