// FaultyTier: a decorator of any storage::Tier that injects the failures tests need
// (STYLE.md: fakes and fault decorators, never sleeps):
//   - FailNext: the next N calls of an operation fail with a chosen Error;
//   - HoldNext / Release: the next call of an operation waits until the test releases it
//     (a delay the test controls, so it can look at the world while the call is pending);
//   - TearNextWrite: the next write passes only its first bytes on, and then either its
//     commit fails and nothing becomes visible (kTorn) or it commits and reports the
//     shorter size (kShort);
//   - FlipBitOnRead: reads of an object return one bit flipped, damage past the inner
//     tier's own checks (memory, the wire) that only an end-to-end CRC check sees.
// The FaultyTier must outlive its readers and writes. Configuration calls are
// thread-safe; Release must run on the thread of the io_context the held calls wait on
// (between runs of it, or in a coroutine on it), as Asio timers require.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/error.h"
#include "storage/tier.h"

namespace strata::storage::testing {

enum class TierOp { kOpen, kRead, kBeginWrite, kAppend, kCommit, kRemove, kUsage };
inline constexpr std::size_t kTierOps = 7;

enum class WriteFault {
  kTorn,   // the commit fails (kUnavailable, retryable): nothing visible
  kShort,  // the commit succeeds with the shorter size
};

class FaultyTier final : public Tier {
 public:
  explicit FaultyTier(Tier& inner);
  ~FaultyTier() override;

  const std::string& name() const override { return inner_.name(); }
  TierTask<std::unique_ptr<TierReader>> Open(std::string location,
                                             TierOpenOptions options) override;
  TierTask<std::unique_ptr<TierWrite>> BeginWrite(TierWriteOptions options) override;
  TierTask<TierRemoved> Remove(std::string location, std::string version_id) override;
  TierTask<TierUsage> Usage() override;

  // The next `count` calls of `op` fail with `error` without reaching the inner tier. A
  // failed Append fails its write (later appends and the commit fail); a failed Commit
  // aborts the inner write.
  void FailNext(TierOp op, Error error, int count = 1);
  // The next call of `op` waits, before reaching the inner tier, until Release().
  void HoldNext(TierOp op);
  // Lets every held call go on.
  void Release();
  // Calls waiting in HoldNext now.
  std::size_t held() const;
  // The next write begun keeps only its first `keep` bytes, then fails or shortens.
  void TearNextWrite(WriteFault fault, std::uint64_t keep);
  // Readers of `location` opened from now on return byte `offset` of the object with
  // bit `bit` flipped.
  void FlipBitOnRead(std::string location, std::uint64_t offset, int bit = 0);
  // Calls of `op` so far (failed and held ones included).
  std::uint64_t calls(TierOp op) const;

 private:
  class Write;
  class Reader;
  struct Flip {
    std::uint64_t offset;
    int bit;
  };
  struct Tear {
    WriteFault fault;
    std::uint64_t keep;
  };

  // Counts the call, waits if it is held; the error it must fail with, if any.
  boost::asio::awaitable<std::optional<Error>> Enter(TierOp op);

  Tier& inner_;
  mutable std::mutex mu_;
  std::array<std::uint64_t, kTierOps> calls_{};    // guarded by mu_
  std::array<std::deque<Error>, kTierOps> fail_;   // guarded by mu_
  std::array<int, kTierOps> hold_{};               // guarded by mu_
  std::list<boost::asio::steady_timer*> waiting_;  // guarded by mu_
  std::optional<Tear> tear_;                       // guarded by mu_
  std::map<std::string, Flip> flips_;              // guarded by mu_
};

}  // namespace strata::storage::testing
