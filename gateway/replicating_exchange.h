// ReplicatingExchange: the exchange of a write this gateway serves as its key's primary in
// a cluster (storage/replication.h). A successful answer (2xx) waits until the key's other
// owners hold the change: just before the answer's head goes out, the key is synced, and
// if that fails the handler's send fails with a retryable kUnavailable instead, so the
// client sees 503 and retries, never an acknowledgement of a write with fewer copies than
// `replicas`. Everything else passes through to the wrapped exchange.
#pragma once

#include <string>

#include "common/ids.h"
#include "gateway/exchange.h"
#include "storage/replication.h"

namespace strata::gateway {

class ReplicatingExchange final : public Exchange {
 public:
  // `inner` and `replication` outlive the exchange. `newest_is_new`: the write makes a new
  // version (storage/replication.h's SyncKey).
  ReplicatingExchange(Exchange& inner, storage::Replication& replication, BucketName bucket,
                      ObjectKey key, bool newest_is_new)
      : inner_(inner),
        replication_(replication),
        bucket_(std::move(bucket)),
        key_(std::move(key)),
        newest_is_new_(newest_is_new) {}

  const RequestHeader& request() const override { return inner_.request(); }
  const std::string& request_id() const override { return inner_.request_id(); }
  std::string_view remote_address() const override { return inner_.remote_address(); }
  bool secure() const override { return inner_.secure(); }
  void AddResponseHeader(std::string name, std::string value) override {
    inner_.AddResponseHeader(std::move(name), std::move(value));
  }
  asio::awaitable<Result<std::size_t>> ReadBody(std::span<char> buf) override {
    return inner_.ReadBody(buf);
  }
  bool body_complete() const override { return inner_.body_complete(); }
  asio::awaitable<Result<void>> SendHeader(ResponseHeader header, std::uint64_t content_length,
                                           std::string_view body_start) override;
  asio::awaitable<Result<void>> SendBody(std::string_view data) override {
    return inner_.SendBody(data);
  }
  asio::awaitable<Result<void>> Send(ResponseHeader header, std::string body) override;
  bool response_started() const override { return inner_.response_started(); }
  unsigned status() const override { return inner_.status(); }
  std::uint64_t bytes_in() const override { return inner_.bytes_in(); }
  std::uint64_t bytes_out() const override { return inner_.bytes_out(); }
  void CloseAfterResponse() override { inner_.CloseAfterResponse(); }
  void SetOperation(S3Operation op) override { inner_.SetOperation(op); }
  bool forwarded() const override { return inner_.forwarded(); }
  bool fan_out() const override { return inner_.fan_out(); }

 private:
  // Syncs the key before the first successful answer; the sync's error otherwise.
  asio::awaitable<Result<void>> SyncBefore(const ResponseHeader& header);

  Exchange& inner_;
  storage::Replication& replication_;
  BucketName bucket_;
  ObjectKey key_;
  bool newest_is_new_ = false;
  bool synced_ = false;
};

}  // namespace strata::gateway
