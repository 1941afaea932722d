#include "storage/cluster/key_locks.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace strata::storage::cluster {

namespace asio = boost::asio;

asio::awaitable<Result<KeyLocks::Guard>> KeyLocks::Lock(std::string name, Mode mode) {
  Entry& entry = held_[name];
  if (entry.waiters.empty() && Grantable(entry, mode)) {
    Take(entry, mode);
    co_return Guard(this, std::move(name), mode);
  }
  auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor, mode);
  waiter->wake.expires_at(asio::steady_timer::time_point::max());
  entry.waiters.push_back(waiter);
  boost::system::error_code ec;
  co_await waiter->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (!waiter->granted) {
    // Cancelled from outside: leave the queue (the entry is held or waited for by others,
    // and a shared waiter behind this one may hold it now).
    auto it = held_.find(name);
    if (it != held_.end()) {
      auto& queue = it->second.waiters;
      queue.erase(std::remove(queue.begin(), queue.end(), waiter), queue.end());
      WakeReady(it);
    }
    co_return Error(ErrorCode::kUnavailable, "key lock wait cancelled");
  }
  co_return Guard(this, std::move(name), mode);
}

void KeyLocks::Release(const std::string& name, Mode mode) {
  auto it = held_.find(name);
  if (it == held_.end()) {
    return;
  }
  Entry& entry = it->second;
  if (mode == Mode::kShared) {
    --entry.shared;
  } else {
    entry.exclusive = false;
  }
  WakeReady(it);
}

void KeyLocks::WakeReady(std::map<std::string, Entry>::iterator it) {
  Entry& entry = it->second;
  while (!entry.waiters.empty() && Grantable(entry, entry.waiters.front()->mode)) {
    auto next = std::move(entry.waiters.front());
    entry.waiters.pop_front();
    Take(entry, next->mode);
    next->granted = true;
    next->wake.cancel();
  }
  if (!entry.exclusive && entry.shared == 0 && entry.waiters.empty()) {
    held_.erase(it);
  }
}

}  // namespace strata::storage::cluster
