#include "storage/cluster/key_locks.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace strata::storage::cluster {

namespace asio = boost::asio;

asio::awaitable<Result<KeyLocks::Guard>> KeyLocks::Lock(std::string name) {
  auto [it, inserted] = held_.try_emplace(name);
  if (inserted) {
    co_return Guard(this, std::move(name));
  }
  auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
  waiter->wake.expires_at(asio::steady_timer::time_point::max());
  it->second.push_back(waiter);
  boost::system::error_code ec;
  co_await waiter->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!waiter->granted) {
    // Cancelled from outside: leave the queue (the entry is still held by another).
    auto& queue = held_[name];
    queue.erase(std::remove(queue.begin(), queue.end(), waiter), queue.end());
    co_return Error(ErrorCode::kUnavailable, "key lock wait cancelled");
  }
  co_return Guard(this, std::move(name));
}

void KeyLocks::Release(const std::string& name) {
  auto it = held_.find(name);
  if (it == held_.end()) {
    return;
  }
  if (it->second.empty()) {
    held_.erase(it);
    return;
  }
  auto next = std::move(it->second.front());
  it->second.pop_front();
  next->granted = true;
  next->wake.cancel();
}

}  // namespace strata::storage::cluster
