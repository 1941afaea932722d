// Exchange: one HTTP request and its response, as the handlers see it. The session owns
// the connection and implements this for plain TCP and for TLS, so handlers are written
// once and never learn which stream carries them. Used only on the connection's thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gateway/operation.h"
#include "storage/peer_transport.h"
#include "storage/read_cache.h"

namespace strata::gateway {

namespace asio = boost::asio;
namespace http = boost::beast::http;

using RequestHeader = http::request_header<>;
using ResponseHeader = http::response_header<>;

class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual const RequestHeader& request() const = 0;
  virtual const std::string& request_id() const = 0;
  virtual std::string_view remote_address() const = 0;
  // Whether the client's connection is TLS (a policy's aws:SecureTransport).
  virtual bool secure() const { return false; }
  // A header the response carries besides the handler's own, whatever the response is
  // (an error's too): the CORS headers of the rule a browser's request matched. Before
  // the response starts.
  virtual void AddResponseHeader(std::string name, std::string value) = 0;

  // Reads the next body bytes into `buf` (sending "100 Continue" first when the client
  // asked for it). Returns the count, 0 once the body is complete. Errors:
  // kIncompleteBody (client closed early), kRequestTimeout (client went quiet).
  virtual asio::awaitable<Result<std::size_t>> ReadBody(std::span<char> buf) = 0;
  virtual bool body_complete() const = 0;

  // Sends a response header announcing `content_length` body bytes with the first of them,
  // `body_start` (may be empty), in the same write, so a small object is one segment and
  // one wakeup of the client; SendBody sends the rest. The exchange adds x-amz-request-id,
  // Date, Server and Connection.
  virtual asio::awaitable<Result<void>> SendHeader(ResponseHeader header,
                                                   std::uint64_t content_length,
                                                   std::string_view body_start) = 0;
  virtual asio::awaitable<Result<void>> SendBody(std::string_view data) = 0;
  // A whole small response in one call.
  virtual asio::awaitable<Result<void>> Send(ResponseHeader header, std::string body) = 0;

  virtual bool response_started() const = 0;
  virtual unsigned status() const = 0;          // of the response sent; 0 before
  virtual std::uint64_t bytes_in() const = 0;   // body bytes read
  virtual std::uint64_t bytes_out() const = 0;  // body bytes sent
  // Forbids keep-alive after this exchange (the connection's state is no longer known).
  virtual void CloseAfterResponse() = 0;
  // Names the request's operation for metrics (Dispatch, once the target is parsed);
  // until then it is named by its HTTP method.
  virtual void SetOperation(S3Operation op) = 0;
  // Whether another gateway of the cluster forwarded this request here, its key's owner
  // (gateway/forward.h): it is served here, never forwarded again.
  virtual bool forwarded() const { return false; }
  // Whether the request came as a fan-out (gateway/forward.h's FanOut): a request on many
  // keys, such as DeleteObjects, sent to every member, each of which answers for the keys
  // it owns only.
  virtual bool fan_out() const { return false; }
  // In a cluster: the peer client of the I/O thread the exchange runs on (its calls never
  // leave that thread), or null, when peer calls go through the cluster's own thread.
  virtual storage::PeerTransport* peer_client() const { return nullptr; }

  // --- A forwarded request and the forwarding gateway's read cache (storage/read_cache.h) ---
  // The tag of the version of the key that gateway's cache holds, or empty.
  virtual std::string_view forwarder_cached_tag() const { return {}; }
  // Offers the 200 response about to be sent, all of `version`'s bytes, to that gateway's
  // cache (when it keeps one).
  virtual void OfferToForwarderCache(const storage::ReadCacheVersion& /*version*/) {}
  // Sends `header`, announcing `length` body bytes that the forwarding gateway sends from
  // its cached copy (the version forwarder_cached_tag names), starting at `first`.
  virtual asio::awaitable<Result<void>> SendFromForwarderCache(ResponseHeader /*header*/,
                                                               std::uint64_t /*first*/,
                                                               std::uint64_t /*length*/) {
    co_return Error(ErrorCode::kInternal, "no forwarding gateway holds a copy");
  }
};

}  // namespace strata::gateway
