// WritebackWorker over a real index and local store (RocksIndex and a LocalTier in a temp
// dir) pushing to a MemTier "cold" behind a FaultyTier, on a FakeClock: time is advanced,
// never slept through. The worker's thread ticks every quarter of the delay (1 s here);
// each Tick below moves the clock by one period and waits until the worker has looked at
// the queue and waits again. The tier is in memory and answers at once, and the worker's
// io_context runs its handlers in order, so a push that a tick starts has run to its end
// before the next tick's look; outcomes are waited for on what the worker records.
// Covered: a key is pushed once its delay passed and not at an earlier tick; a failing
// push is retried with backoff and never dropped (the queue keeps it, across a restart of
// the worker too); a torn push stores nothing and a short one is not taken for the
// object; a delete is pushed as a remove.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/config.h"
#include "metadata/index.h"
#include "storage/object_store.h"
#include "storage/upstream/writeback.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_io_context.h"
#include "tests/unit/storage/test_store.h"
#include "tests/unit/storage/testing/faulty_tier.h"
#include "tests/unit/storage/testing/mem_tier.h"

namespace strata::storage {
namespace {

using std::chrono::milliseconds;
using testing::FaultyTier;
using testing::MemTier;
using testing::RandomBytes;
using testing::TempDir;
using testing::TierOp;
using testing::WriteFault;

constexpr char kBucket[] = "pushed";
constexpr milliseconds kDelay{4'000};
constexpr milliseconds kPeriod{1'000};  // kDelay / 4
const WallTime kStart = WallTime{} + std::chrono::hours(24 * 365 * 50);

class WritebackWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index =
        metadata::Index::Open((dir_.path() / "index").string(), {.sync = false, .clock = &clock_});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_ = testing::HotAndMemColdConfig(dir_.path());  // the worker pushes to mem_
    auto store =
        ObjectStore::Open(config_, *index_, SweepOptions{.interval = {}, .at_open = false}, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(BucketName(kBucket), "alice", "", "cold").ok());
  }

  void StartWorker() {
    worker_ = std::make_unique<WritebackWorker>(
        *index_, *store_, faulty_,
        WritebackOptions{.delay = kDelay, .concurrency = 2, .retry_base = milliseconds(1'000)},
        clock_);
    const std::uint64_t begun = clock_.waits_begun();
    worker_->Start();
    WaitForWaitsBegun(begun + 1);  // its loop waits on the clock
  }

  void WaitForWaitsBegun(std::uint64_t n) {
    while (clock_.waits_begun() < n) {
      std::this_thread::yield();
    }
  }

  // Moves the clock by `by` (at least one period) and waits until the worker's loop has
  // looked at the queue and waits again.
  void Tick(milliseconds by = kPeriod) {
    const std::uint64_t begun = clock_.waits_begun();
    clock_.Advance(by);
    WaitForWaitsBegun(begun + 1);
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body) {
    return testing::PutBytes(*store_, kBucket, key, body);
  }

  std::optional<metadata::WritebackItem> Item(const std::string& key) {
    auto item = index_->GetWriteback(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(item.ok()) << item.error().message;
    return item.ok() ? *item : std::nullopt;
  }

  // The upstream copy of `key`, or nullopt when the tier has none.
  std::optional<std::string> Upstream(const std::string& key) {
    boost::asio::io_context ioc;
    auto reader =
        testing::RunAwaitable(ioc, mem_.Open(std::string(kBucket) + "/" + key, TierOpenOptions{}));
    if (!reader.ok()) {
      EXPECT_EQ(reader.error().code, ErrorCode::kNotFound) << reader.error().message;
      return std::nullopt;
    }
    std::string bytes((*reader)->size(), '\0');
    for (std::size_t got = 0; got < bytes.size();) {
      auto n = testing::RunAwaitable(
          ioc, (*reader)->ReadAsync(got, std::span<char>(bytes).subspan(got)));
      EXPECT_TRUE(n.ok() && *n > 0);
      if (!n.ok() || *n == 0) {
        return std::nullopt;
      }
      got += *n;
    }
    return bytes;
  }

  bool Clean(const std::string& key) {
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok()) << head.error().message;
    if (!head.ok()) {
      return false;
    }
    for (const auto& placement : head->placements) {
      if (placement.tier == "cold") {
        return true;
      }
    }
    return false;
  }

  // Waits until the worker finished `n` pushes (each counted once its item is finished
  // and its record marked clean).
  void WaitForPushes(std::uint64_t n) {
    while (worker_->stats().pushes < n) {
      std::this_thread::yield();
    }
  }
  // Waits until `key`'s item records `n` failed pushes (the worker records the failure
  // after counting it).
  metadata::WritebackItem WaitForAttempts(const std::string& key, std::uint32_t n) {
    for (;;) {
      auto item = Item(key);
      if (!item) {
        ADD_FAILURE() << key << ": a failed push dropped its item";
        return {};
      }
      if (item->attempts >= n) {
        return *item;
      }
      std::this_thread::yield();
    }
  }

  TempDir dir_;
  FakeClock clock_{kStart};
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  MemTier mem_{"cold"};
  FaultyTier faulty_{mem_};
  std::unique_ptr<WritebackWorker> worker_;  // last: stopped before the tiers go
};

TEST_F(WritebackWorkerTest, PushesAKeyOnceItsDelayPassedNotAtAnEarlierTick) {
  StartWorker();
  const std::string body = RandomBytes(300'000, 1);  // more than one 256 KiB read
  Put("a/key", body);
  ASSERT_TRUE(Item("a/key").has_value());
  for (int i = 0; i < 3; ++i) {  // 1, 2 and 3 s after the write: not due
    Tick();
  }
  EXPECT_EQ(faulty_.calls(TierOp::kBeginWrite), 0u) << "pushed before its delay passed";
  EXPECT_EQ(Upstream("a/key"), std::nullopt);
  EXPECT_FALSE(Clean("a/key"));
  Tick();  // 4 s: the due time itself (enqueued + the delay)
  WaitForPushes(1);
  EXPECT_EQ(worker_->stats().failures, 0u);
  EXPECT_EQ(Upstream("a/key"), body);
  EXPECT_FALSE(Item("a/key").has_value());
  EXPECT_TRUE(Clean("a/key"));
  EXPECT_EQ(faulty_.calls(TierOp::kBeginWrite), 1u);
}

TEST_F(WritebackWorkerTest, AFailingPushIsRetriedWithBackoffAndNeverDropped) {
  StartWorker();
  const std::string body = RandomBytes(50'000, 2);
  Put("flaky", body);
  faulty_.FailNext(TierOp::kCommit, Error(ErrorCode::kUnavailable, "upstream down"), 2);
  for (int i = 0; i < 4; ++i) {
    Tick();
  }
  auto item = WaitForAttempts("flaky", 1);
  EXPECT_EQ(item.attempts, 1u);
  EXPECT_NE(item.last_error.find("upstream down"), std::string::npos) << item.last_error;
  // The first retry waits between half and all of retry_base (1 s): due by the next tick.
  const std::int64_t now_ms =
      std::chrono::duration_cast<milliseconds>(clock_.Now().time_since_epoch()).count();
  EXPECT_GE(item.retry_ms, now_ms + 500);
  EXPECT_LE(item.retry_ms, now_ms + 1'000);
  Tick();
  item = WaitForAttempts("flaky", 2);
  EXPECT_EQ(item.attempts, 2u);
  EXPECT_EQ(worker_->stats().failures, 2u);
  EXPECT_EQ(Upstream("flaky"), std::nullopt);  // nothing committed by the failed pushes
  EXPECT_FALSE(Clean("flaky"));
  // The second waits 1 to 2 s: two ticks at most; then the upstream takes it.
  Tick();
  Tick();
  WaitForPushes(1);
  EXPECT_EQ(worker_->stats().failures, 2u);
  EXPECT_EQ(Upstream("flaky"), body);
  EXPECT_FALSE(Item("flaky").has_value());
  EXPECT_TRUE(Clean("flaky"));
}

TEST_F(WritebackWorkerTest, AQueuedItemOutlivesTheWorkerThatFailedIt) {
  StartWorker();
  const std::string body = RandomBytes(10'000, 3);
  Put("restart", body);
  faulty_.FailNext(TierOp::kBeginWrite, Error(ErrorCode::kUnavailable, "upstream down"));
  for (int i = 0; i < 4; ++i) {
    Tick();
  }
  WaitForAttempts("restart", 1);
  worker_.reset();  // stopped: the queue is in the index
  ASSERT_TRUE(Item("restart").has_value());
  StartWorker();  // the next start finds the same item
  Tick();
  Tick();
  WaitForPushes(1);
  EXPECT_EQ(Upstream("restart"), body);
  EXPECT_TRUE(Clean("restart"));
}

TEST_F(WritebackWorkerTest, ATornPushStoresNothingAndAShortOneIsNotTakenForTheObject) {
  StartWorker();
  const std::string body = RandomBytes(100'000, 4);
  Put("torn", body);
  faulty_.TearNextWrite(WriteFault::kTorn, 30'000);
  for (int i = 0; i < 4; ++i) {
    Tick();
  }
  WaitForAttempts("torn", 1);
  EXPECT_EQ(Upstream("torn"), std::nullopt);
  EXPECT_FALSE(Clean("torn"));

  // A write that commits a shorter object: the worker sees the size and fails the push.
  faulty_.TearNextWrite(WriteFault::kShort, 30'000);
  Tick();
  const auto item = WaitForAttempts("torn", 2);
  EXPECT_NE(item.last_error.find("30000 bytes"), std::string::npos) << item.last_error;
  EXPECT_FALSE(Clean("torn"));
  // The next push replaces it whole.
  Tick();
  Tick();
  WaitForPushes(1);
  EXPECT_EQ(worker_->stats().failures, 2u);
  EXPECT_EQ(Upstream("torn"), body);
  EXPECT_TRUE(Clean("torn"));
}

TEST_F(WritebackWorkerTest, ADeleteIsPushedAsARemove) {
  StartWorker();
  Put("gone", "soon deleted");
  for (int i = 0; i < 4; ++i) {
    Tick();
  }
  WaitForPushes(1);
  ASSERT_EQ(Upstream("gone"), "soon deleted");
  ASSERT_TRUE(store_->DeleteObject(BucketName(kBucket), ObjectKey("gone")).ok());
  ASSERT_TRUE(Item("gone").has_value());
  for (int i = 0; i < 4; ++i) {
    Tick();
  }
  WaitForPushes(2);
  EXPECT_EQ(worker_->stats().pushes, 2u);
  EXPECT_EQ(faulty_.calls(TierOp::kRemove), 1u);
  EXPECT_EQ(Upstream("gone"), std::nullopt);
  EXPECT_FALSE(Item("gone").has_value());
}

}  // namespace
}  // namespace strata::storage
