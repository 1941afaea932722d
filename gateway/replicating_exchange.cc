#include "gateway/replicating_exchange.h"

#include "common/co_try.h"

namespace strata::gateway {

asio::awaitable<Result<void>> ReplicatingExchange::SyncBefore(const ResponseHeader& header) {
  const unsigned status = header.result_int();
  if (synced_ || status < 200 || status >= 300) {
    co_return Ok();
  }
  synced_ = true;
  co_return co_await replication_.SyncKey(bucket_, key_, newest_is_new_);
}

asio::awaitable<Result<void>> ReplicatingExchange::SendHeader(ResponseHeader header,
                                                              std::uint64_t content_length,
                                                              std::string_view body_start) {
  STRATA_CO_RETURN_IF_ERROR(co_await SyncBefore(header));
  co_return co_await inner_.SendHeader(std::move(header), content_length, body_start);
}

asio::awaitable<Result<void>> ReplicatingExchange::Send(ResponseHeader header, std::string body) {
  STRATA_CO_RETURN_IF_ERROR(co_await SyncBefore(header));
  co_return co_await inner_.Send(std::move(header), std::move(body));
}

}  // namespace strata::gateway
