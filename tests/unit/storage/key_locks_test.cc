// KeyLocks (storage/cluster/key_locks.h): exclusive and shared holders of one name, handed
// the lock in arrival order, on one executor.
#include "storage/cluster/key_locks.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strata::storage::cluster {
namespace {

namespace asio = boost::asio;
using Mode = KeyLocks::Mode;

// Holders of named locks that log when they get and give back the lock, each holding it
// until the test releases it.
class Holders {
 public:
  void Start(const std::string& who, const std::string& name, Mode mode) {
    auto& release = release_[who];
    release = std::make_unique<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
    asio::co_spawn(io_, Hold(who, name, mode, *release), asio::detached);
    io_.poll();
  }
  void Release(const std::string& who) {
    release_.at(who)->cancel();
    io_.poll();
  }
  std::vector<std::string> TakeLog() { return std::exchange(log_, {}); }
  KeyLocks& locks() { return locks_; }

 private:
  asio::awaitable<void> Hold(std::string who, std::string name, Mode mode,
                             asio::steady_timer& release) {
    auto guard = co_await locks_.Lock(name, mode);
    if (!guard.ok()) {
      log_.push_back(who + " failed");
      co_return;
    }
    log_.push_back(who + "+");
    boost::system::error_code ec;
    co_await release.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    log_.push_back(who + "-");
  }

  asio::io_context io_;
  KeyLocks locks_;
  std::vector<std::string> log_;
  std::map<std::string, std::unique_ptr<asio::steady_timer>> release_;
};

using Log = std::vector<std::string>;

TEST(KeyLocks, OneExclusiveHolderAtATimeInArrivalOrder) {
  Holders h;
  h.Start("a", "k", Mode::kExclusive);
  h.Start("b", "k", Mode::kExclusive);
  h.Start("c", "k", Mode::kExclusive);
  EXPECT_EQ(h.TakeLog(), (Log{"a+"}));
  h.Release("a");
  EXPECT_EQ(h.TakeLog(), (Log{"a-", "b+"}));
  h.Release("b");
  EXPECT_EQ(h.TakeLog(), (Log{"b-", "c+"}));
  h.Release("c");
  EXPECT_EQ(h.TakeLog(), (Log{"c-"}));
  EXPECT_EQ(h.locks().held(), 0u);
}

TEST(KeyLocks, SharedHoldersRunTogetherAndAnExclusiveWaitsForThemAll) {
  Holders h;
  h.Start("s1", "k", Mode::kShared);
  h.Start("s2", "k", Mode::kShared);
  EXPECT_EQ(h.TakeLog(), (Log{"s1+", "s2+"}));
  h.Start("x", "k", Mode::kExclusive);
  // A shared request behind a waiting exclusive one waits for it: no starving it.
  h.Start("s3", "k", Mode::kShared);
  EXPECT_EQ(h.TakeLog(), Log{});
  h.Release("s1");
  EXPECT_EQ(h.TakeLog(), (Log{"s1-"}));
  h.Release("s2");
  EXPECT_EQ(h.TakeLog(), (Log{"s2-", "x+"}));
  h.Release("x");
  EXPECT_EQ(h.TakeLog(), (Log{"x-", "s3+"}));
  h.Release("s3");
  EXPECT_EQ(h.TakeLog(), (Log{"s3-"}));
  EXPECT_EQ(h.locks().held(), 0u);
}

TEST(KeyLocks, AnExclusiveReleaseHandsOverARunOfSharedWaiters) {
  Holders h;
  h.Start("x1", "k", Mode::kExclusive);
  h.Start("s1", "k", Mode::kShared);
  h.Start("s2", "k", Mode::kShared);
  h.Start("x2", "k", Mode::kExclusive);
  h.Start("s3", "k", Mode::kShared);
  EXPECT_EQ(h.TakeLog(), (Log{"x1+"}));
  h.Release("x1");
  EXPECT_EQ(h.TakeLog(), (Log{"x1-", "s1+", "s2+"}));
  h.Release("s2");
  h.Release("s1");
  EXPECT_EQ(h.TakeLog(), (Log{"s2-", "s1-", "x2+"}));
  h.Release("x2");
  EXPECT_EQ(h.TakeLog(), (Log{"x2-", "s3+"}));
  h.Release("s3");
  EXPECT_EQ(h.locks().held(), 0u);
}

TEST(KeyLocks, NamesAreIndependent) {
  Holders h;
  h.Start("a", "k1", Mode::kExclusive);
  h.Start("b", "k2", Mode::kExclusive);
  h.Start("c", "k2", Mode::kShared);
  EXPECT_EQ(h.TakeLog(), (Log{"a+", "b+"}));
  EXPECT_EQ(h.locks().held(), 2u);
  h.Release("b");
  EXPECT_EQ(h.TakeLog(), (Log{"b-", "c+"}));
  h.Release("a");
  h.Release("c");
  EXPECT_EQ(h.locks().held(), 0u);
}

}  // namespace
}  // namespace strata::storage::cluster
