#include "gateway/forwarded_exchange.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/co_try.h"

namespace strata::gateway {
namespace {

Error CallerGone() { return Error(ErrorCode::kIncompleteBody, "the forwarding gateway went away"); }

}  // namespace

ForwardedExchange::ForwardedExchange(const ForwardedRequestHead& head,
                                     storage::PeerIncomingCall& call, PeerLane lane, bool fan_out)
    : call_(call),
      lane_(std::move(lane)),
      request_id_(head.request_id),
      remote_(head.remote),
      secure_(head.secure),
      body_ended_(!call.request().has_stream),
      fan_out_(fan_out),
      takes_cache_(head.takes_cache),
      cached_tag_(head.cached_tag) {
  request_.method(http::string_to_verb(head.method));
  request_.target(head.target);
  request_.version(11);
  for (const auto& [name, value] : head.fields) {
    request_.insert(name, value);
  }
}

asio::awaitable<Result<std::size_t>> ForwardedExchange::ReadBody(std::span<char> buf) {
  while (pending_offset_ == pending_.size()) {
    if (body_ended_) {
      co_return std::size_t{0};
    }
    auto chunk = co_await lane_.Run(call_.Read());
    if (!chunk.ok()) {
      body_ended_ = true;
      co_return Error(ErrorCode::kIncompleteBody,
                      "the request's body did not arrive whole: " + chunk.error().message);
    }
    if (!chunk->has_value()) {
      body_ended_ = true;
      co_return std::size_t{0};
    }
    pending_ = std::move(**chunk);
    pending_offset_ = 0;
  }
  const std::size_t n = std::min(buf.size(), pending_.size() - pending_offset_);
  std::memcpy(buf.data(), pending_.data() + pending_offset_, n);
  pending_offset_ += n;
  bytes_in_ += n;
  co_return n;
}

asio::awaitable<Result<void>> ForwardedExchange::SendHeader(ResponseHeader header,
                                                            std::uint64_t content_length,
                                                            std::string_view body_start) {
  response_started_ = true;
  status_ = header.result_int();
  announced_ = content_length;
  storage::PeerResponse response;
  response.payload = EncodeResponseHead(HeadOf(header, content_length, std::nullopt));
  // A HEAD's answer announces the object's length and sends no body.
  streaming_ = request_.method() != http::verb::head && content_length > 0;
  response.has_stream = streaming_;
  if (response.payload.size() > storage::kMaxPeerPayload) {
    co_return Error(ErrorCode::kInternal, "a response head too large to forward");
  }
  if (streaming_ && body_start.size() > content_length) {
    co_return Error(ErrorCode::kInternal, "more body than the response announced");
  }
  // A body that comes whole with its head (a small object, an error's XML) goes in the
  // same step in the call's lane, stream end included: on the cluster's executor each step
  // is a round trip between threads, which is most of a small forwarded GET's cost.
  const bool whole = streaming_ && body_start.size() == content_length;
  auto sent =
      co_await lane_.Run(RespondInLane(response, whole ? body_start : std::string_view(), whole));
  if (!sent.ok()) {
    co_return CallerGone();
  }
  if (whole) {
    bytes_out_ = content_length;
    closed_ = true;
    co_return Ok();
  }
  if (!body_start.empty()) {
    co_return co_await SendBody(body_start);
  }
  co_return Ok();
}

ForwardedResponseHead ForwardedExchange::HeadOf(const ResponseHeader& header,
                                                std::uint64_t content_length,
                                                std::optional<std::uint64_t> cache_first) {
  ForwardedResponseHead head;
  head.status = header.result_int();
  head.content_length = content_length;
  head.close = close_;
  for (const auto& field : header) {
    head.fields.emplace_back(field.name_string(), field.value());
  }
  for (auto& field : extra_headers_) {
    head.fields.push_back(std::move(field));
  }
  extra_headers_.clear();
  if (cache_first) {
    head.from_cache = true;
    head.cache_first = *cache_first;
  } else if (offer_ && head.status == 200 && takes_cache_) {
    head.cache_tag = std::move(offer_->tag);
    head.cache_crc = offer_->crc;
  }
  offer_.reset();
  return head;
}

void ForwardedExchange::OfferToForwarderCache(const storage::ReadCacheVersion& version) {
  if (takes_cache_) {
    offer_ = version;
  }
}

asio::awaitable<Result<void>> ForwardedExchange::SendFromForwarderCache(ResponseHeader header,
                                                                        std::uint64_t first,
                                                                        std::uint64_t length) {
  if (cached_tag_.empty() || request_.method() == http::verb::head) {
    co_return Error(ErrorCode::kInternal, "the forwarding gateway holds no copy");
  }
  response_started_ = true;
  status_ = header.result_int();
  announced_ = length;
  storage::PeerResponse response;
  response.payload = EncodeResponseHead(HeadOf(header, length, first));
  if (response.payload.size() > storage::kMaxPeerPayload) {
    co_return Error(ErrorCode::kInternal, "a response head too large to forward");
  }
  // No stream: the forwarder sends the bytes.
  auto sent = co_await lane_.Run(RespondInLane(response, std::string_view(), false));
  if (!sent.ok()) {
    co_return CallerGone();
  }
  bytes_out_ = length;
  co_return Ok();
}

asio::awaitable<Result<void>> ForwardedExchange::RespondInLane(storage::PeerResponse& response,
                                                               std::string_view body, bool close) {
  STRATA_CO_RETURN_IF_ERROR(co_await call_.Respond(std::move(response)));
  STRATA_CO_RETURN_IF_ERROR(co_await WriteInLane(body));
  if (close) {
    co_return co_await call_.CloseResponse();
  }
  co_return Ok();
}

asio::awaitable<Result<void>> ForwardedExchange::SendBody(std::string_view data) {
  if (!streaming_ || data.size() > announced_ - bytes_out_) {
    co_return Error(ErrorCode::kInternal, "more body than the response announced");
  }
  if (data.empty()) {
    co_return Ok();
  }
  auto wrote = co_await lane_.Run(WriteInLane(data));
  if (!wrote.ok()) {
    co_return CallerGone();
  }
  bytes_out_ += data.size();
  co_return Ok();
}

asio::awaitable<Result<void>> ForwardedExchange::WriteInLane(std::string_view data) {
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), storage::kMaxPeerChunk);
    STRATA_CO_RETURN_IF_ERROR(co_await call_.Write(std::string(data.substr(0, n))));
    data.remove_prefix(n);
  }
  co_return Ok();
}

asio::awaitable<Result<void>> ForwardedExchange::Send(ResponseHeader header, std::string body) {
  const std::uint64_t length = body.size();
  co_return co_await SendHeader(std::move(header), length, body);
}

asio::awaitable<Result<void>> ForwardedExchange::Finish() {
  if (!response_started_) {
    co_return Error(ErrorCode::kInternal, "the owner did not answer the forwarded request");
  }
  if (!streaming_ || closed_) {
    co_return Ok();
  }
  if (bytes_out_ != announced_) {
    co_return Error(ErrorCode::kInternal, "the response's body was cut short");
  }
  co_return co_await lane_.Run(call_.CloseResponse());
}

}  // namespace strata::gateway
