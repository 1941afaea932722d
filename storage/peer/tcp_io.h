// Socket steps with a deadline for the peer transport (private to storage/peer/): each
// first tries the socket at once (non-blocking), then races what is left of the operation
// against a timer in a parallel group, so a peer that stops answering costs a bounded
// wait, and the operation is cancelled (the connection is then dropped: a cancelled write
// may have sent part of a frame). Cancelling the calling coroutine (TaskGroup::Cancel)
// cancels both.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"

namespace strata::storage::peer {

using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

inline Deadline After(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + timeout;
}

// boost::asio::error::timed_out when the deadline passed first.
boost::asio::awaitable<std::pair<boost::system::error_code, std::size_t>> ReadSome(
    boost::asio::ip::tcp::socket& socket, boost::asio::mutable_buffer buffer, Deadline deadline);
boost::asio::awaitable<boost::system::error_code> WriteAll(boost::asio::ip::tcp::socket& socket,
                                                           std::string_view bytes,
                                                           Deadline deadline);
// `head` then `body`, in one gathered write.
boost::asio::awaitable<boost::system::error_code> WriteAll(boost::asio::ip::tcp::socket& socket,
                                                           std::string_view head,
                                                           std::string_view body,
                                                           Deadline deadline);
boost::asio::awaitable<boost::system::error_code> Connect(
    boost::asio::ip::tcp::socket& socket, const boost::asio::ip::tcp::endpoint& endpoint,
    Deadline deadline);

// A failed socket step toward `peer`: kTimedOut for a deadline, else kUnavailable; both
// retryable.
Error NetworkError(std::string_view peer, std::string_view step,
                   const boost::system::error_code& ec);

// "host:port" (host a name, an IPv4 address or a bracketed IPv6 one) split in two.
Result<std::pair<std::string, std::string>> SplitHostPort(std::string_view address);

}  // namespace strata::storage::peer
