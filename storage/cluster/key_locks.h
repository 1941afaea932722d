// KeyLocks: one holder at a time per name (a key's syncs on its primary), for coroutines
// of one single-threaded executor: waiters queue in order and are handed the lock one by
// one. On that executor only.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "common/error.h"

namespace strata::storage::cluster {

class KeyLocks {
 public:
  class Guard {
   public:
    Guard() = default;
    Guard(KeyLocks* locks, std::string name) : locks_(locks), name_(std::move(name)) {}
    Guard(Guard&& other) noexcept : locks_(other.locks_), name_(std::move(other.name_)) {
      other.locks_ = nullptr;
    }
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (locks_ != nullptr) {
        locks_->Release(name_);
      }
    }

   private:
    KeyLocks* locks_ = nullptr;
    std::string name_;
  };

  // Holds `name` once every earlier holder and waiter released it. kCancelled when the
  // wait was cancelled (nothing is held then).
  boost::asio::awaitable<Result<Guard>> Lock(std::string name);

  std::size_t held() const { return held_.size(); }

 private:
  struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& executor) : wake(executor) {}
    boost::asio::steady_timer wake;
    bool granted = false;
  };
  void Release(const std::string& name);

  // Held names, each with its waiters in arrival order.
  std::map<std::string, std::deque<std::shared_ptr<Waiter>>> held_;
};

}  // namespace strata::storage::cluster
