// KeyLocks: a lock per name (a key's syncs on its primary), for coroutines of one
// single-threaded executor. A lock is held by one exclusive holder or by any number of
// shared ones (the syncs of one upload's parts, which may run side by side, while a key
// sync or an upload's creation or end waits for them all). Waiters queue in arrival order
// and are handed the lock in that order: a shared waiter behind an exclusive one waits for
// it, so neither kind starves the other. On that executor only.
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
  enum class Mode { kExclusive, kShared };

  class Guard {
   public:
    Guard() = default;
    Guard(KeyLocks* locks, std::string name, Mode mode)
        : locks_(locks), name_(std::move(name)), mode_(mode) {}
    Guard(Guard&& other) noexcept
        : locks_(other.locks_), name_(std::move(other.name_)), mode_(other.mode_) {
      other.locks_ = nullptr;
    }
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (locks_ != nullptr) {
        locks_->Release(name_, mode_);
      }
    }

   private:
    KeyLocks* locks_ = nullptr;
    std::string name_;
    Mode mode_ = Mode::kExclusive;
  };

  // Holds `name` in `mode` once the holders and the waiters before it allow. kUnavailable
  // when the wait was cancelled (nothing is held then).
  boost::asio::awaitable<Result<Guard>> Lock(std::string name, Mode mode = Mode::kExclusive);

  std::size_t held() const { return held_.size(); }

 private:
  struct Waiter {
    Waiter(const boost::asio::any_io_executor& executor, Mode mode) : wake(executor), mode(mode) {}
    boost::asio::steady_timer wake;
    Mode mode;
    bool granted = false;
  };
  struct Entry {
    bool exclusive = false;  // held by one exclusive holder
    std::size_t shared = 0;  // shared holders
    std::deque<std::shared_ptr<Waiter>> waiters;
  };
  static bool Grantable(const Entry& entry, Mode mode) {
    return !entry.exclusive && (mode == Mode::kShared || entry.shared == 0);
  }
  static void Take(Entry& entry, Mode mode) {
    if (mode == Mode::kShared) {
      ++entry.shared;
    } else {
      entry.exclusive = true;
    }
  }
  void Release(const std::string& name, Mode mode);
  // Hands the lock to the waiters at the front that may hold it now (one exclusive, or a
  // run of shared ones), and forgets the name once nobody holds or waits for it.
  void WakeReady(std::map<std::string, Entry>::iterator it);

  // Held names: their holders and waiters.
  std::map<std::string, Entry> held_;
};

}  // namespace strata::storage::cluster
