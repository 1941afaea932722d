// ForwardedExchange: a request another gateway forwarded to this one, the key's owner
// (gateway/forward.h), as the handlers see it: the client's request head and body as the
// forwarding gateway received them, and a response that goes back to it over the peer
// call. Used on one I/O thread; each step of the peer call runs in the call's lane: in
// place when the call was served on that thread, else a hop to the cluster's executor
// (a response whose body comes whole with its head goes in one step).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "gateway/exchange.h"
#include "gateway/forward.h"
#include "gateway/forward_wire.h"
#include "storage/peer_transport.h"

namespace strata::gateway {

class ForwardedExchange final : public Exchange {
 public:
  // `call` outlives the exchange, and its steps run in `lane`; `head` was decoded from the
  // call's payload.
  ForwardedExchange(const ForwardedRequestHead& head, storage::PeerIncomingCall& call,
                    PeerLane lane, bool fan_out);

  const RequestHeader& request() const override { return request_; }
  const std::string& request_id() const override { return request_id_; }
  std::string_view remote_address() const override { return remote_; }
  bool secure() const override { return secure_; }
  void AddResponseHeader(std::string name, std::string value) override {
    extra_headers_.emplace_back(std::move(name), std::move(value));
  }
  bool forwarded() const override { return true; }
  bool fan_out() const override { return fan_out_; }

  asio::awaitable<Result<std::size_t>> ReadBody(std::span<char> buf) override;
  bool body_complete() const override { return body_ended_; }

  asio::awaitable<Result<void>> SendHeader(ResponseHeader header, std::uint64_t content_length,
                                           std::string_view body_start) override;
  asio::awaitable<Result<void>> SendBody(std::string_view data) override;
  asio::awaitable<Result<void>> Send(ResponseHeader header, std::string body) override;

  bool response_started() const override { return response_started_; }
  unsigned status() const override { return status_; }
  std::uint64_t bytes_in() const override { return bytes_in_; }
  std::uint64_t bytes_out() const override { return bytes_out_; }
  void CloseAfterResponse() override { close_ = true; }
  void SetOperation(S3Operation) override {}  // counted where the client's request arrived
  std::string_view forwarder_cached_tag() const override { return cached_tag_; }
  void OfferToForwarderCache(const storage::ReadCacheVersion& version) override;
  asio::awaitable<Result<void>> SendFromForwarderCache(ResponseHeader header, std::uint64_t first,
                                                       std::uint64_t length) override;

  // After the handler: ends the response's stream when every announced byte was sent;
  // an error otherwise (no response, or a body cut short), which ends the call with it so
  // that the forwarding gateway cuts its client's response short too.
  asio::awaitable<Result<void>> Finish();

 private:
  // In the call's lane: `response` (taken; by reference, see PeerTransport::Call), then
  // `body` (all of it), then the stream's end when `close`.
  asio::awaitable<Result<void>> RespondInLane(storage::PeerResponse& response,
                                              std::string_view body, bool close);
  // The response head of `header` announcing `content_length` bytes, with the read cache's
  // fields: the offer (taken) on a 200, or `from_cache` from `cache_first`.
  ForwardedResponseHead HeadOf(const ResponseHeader& header, std::uint64_t content_length,
                               std::optional<std::uint64_t> cache_first);
  // In the call's lane: `data` as chunks of the response's stream.
  asio::awaitable<Result<void>> WriteInLane(std::string_view data);

  storage::PeerIncomingCall& call_;
  PeerLane lane_;
  RequestHeader request_;
  std::string request_id_;
  std::string remote_;
  bool secure_ = false;  // the client's connection to the forwarder is TLS
  std::vector<std::pair<std::string, std::string>> extra_headers_;  // AddResponseHeader's
  std::string pending_;  // the request stream's chunk being read
  std::size_t pending_offset_ = 0;
  bool body_ended_ = false;
  bool response_started_ = false;
  bool streaming_ = false;  // the response has a body stream
  bool close_ = false;
  bool closed_ = false;  // the response's stream ended with its head (SendHeader)
  bool fan_out_ = false;
  bool takes_cache_ = false;  // the forwarder keeps a read cache
  std::string cached_tag_;    // the version its cache holds
  std::optional<storage::ReadCacheVersion> offer_;
  unsigned status_ = 0;
  std::uint64_t announced_ = 0;  // the response body's length
  std::uint64_t bytes_in_ = 0;
  std::uint64_t bytes_out_ = 0;
};

}  // namespace strata::gateway
