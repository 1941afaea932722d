// LifecycleWorker over a real index and store (RocksIndex and LocalTiers in a temp dir)
// on a FakeClock: the store stamps versions with the fake wall time, the worker reads it,
// and its thread waits on the fake monotonic time. A "day" is an hour here. Covered: an
// action runs once the clock passes its due time (DaysAfter: creation plus the days,
// rounded up to a day boundary) and not a millisecond before; expiration removes the
// version, a transition to STANDARD_IA moves the bytes onto the warm tier; the thread
// runs a pass each time the clock passes its interval, and not otherwise.
#include "storage/engine/lifecycle_worker.h"

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
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_store.h"

namespace strata::storage {
namespace {

using std::chrono::milliseconds;
using testing::RandomBytes;
using testing::TempDir;

constexpr std::int64_t kDayMs = 3'600'000;
constexpr milliseconds kInterval{60'000};
constexpr char kBucket[] = "rules";
// A day boundary plus 10 minutes: creation times are not on a boundary, so the rounding
// matters.
const WallTime kStart = WallTime{} + milliseconds(kDayMs * 500'000 + 600'000);

// When an action `days` after `created_ms` falls due: rounded up to a day boundary.
std::int64_t DueMs(std::int64_t created_ms, std::int64_t days) {
  const std::int64_t at = created_ms + days * kDayMs;
  return at % kDayMs == 0 ? at : at + (kDayMs - at % kDayMs);
}

class LifecycleWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index =
        metadata::Index::Open((dir_.path() / "index").string(),
                              {.sync = false, .lifecycle_day_ms = kDayMs, .clock = &clock_});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = false;
    config_.lifecycle.day = milliseconds(kDayMs);
    config_.lifecycle.interval = kInterval;
    config_.tiers = {testing::LocalTierConfig("hot", dir_.path()),
                     testing::LocalTierConfig("warm", dir_.path())};
    config_.storage_classes = {{"STANDARD", "hot"}, {"STANDARD_IA", "warm"}};
    auto store =
        ObjectStore::Open(config_, *index_, SweepOptions{.interval = {}, .at_open = false}, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(BucketName(kBucket), "alice", "").ok());
    metadata::LifecycleRule expire;
    expire.id = "expire-tmp";
    expire.filter.prefix = "tmp/";
    expire.expiration_days = 2;
    metadata::LifecycleRule move;
    move.id = "data-to-ia";
    move.filter.prefix = "data/";
    move.transitions.push_back({1, std::nullopt, "STANDARD_IA"});
    ASSERT_TRUE(index_->SetBucketLifecycle(BucketName(kBucket), {expire, move}).ok());
    worker_ = std::make_unique<LifecycleWorker>(config_, *index_, *store_, clock_);
  }

  metadata::ObjectRecord Put(const std::string& key) {
    return testing::PutBytes(*store_, kBucket, key, RandomBytes(4096, key.size()));
  }

  Result<metadata::ObjectRecord> Head(const std::string& key) {
    return store_->HeadObject(BucketName(kBucket), ObjectKey(key));
  }

  // Moves the fake clock to `ms` (wall time), which must not be behind it.
  void AdvanceTo(std::int64_t ms) {
    const std::int64_t now =
        std::chrono::duration_cast<milliseconds>(clock_.Now().time_since_epoch()).count();
    ASSERT_GE(ms, now);
    clock_.Advance(milliseconds(ms - now));
  }

  void Pass() {
    auto pass = worker_->RunPass();
    ASSERT_TRUE(pass.ok()) << pass.error().message;
  }

  static std::string TierOf(const metadata::ObjectRecord& record) {
    return record.placements.empty() ? "" : record.placements.front().tier;
  }

  TempDir dir_;
  FakeClock clock_{kStart};
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<LifecycleWorker> worker_;
};

TEST_F(LifecycleWorkerTest, ExpirationRemovesTheVersionOnceDueNotBefore) {
  const auto put = Put("tmp/scratch");
  ASSERT_EQ(put.last_modified_ms,
            std::chrono::duration_cast<milliseconds>(kStart.time_since_epoch()).count());
  const std::int64_t due = DueMs(put.last_modified_ms, 2);
  Pass();  // queues nothing new, acts on nothing
  ASSERT_TRUE(Head("tmp/scratch").ok());

  AdvanceTo(due - 1);
  Pass();
  EXPECT_TRUE(Head("tmp/scratch").ok()) << "expired a millisecond early";
  EXPECT_EQ(worker_->stats().expirations, 0u);

  AdvanceTo(due);
  Pass();
  auto gone = Head("tmp/scratch");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(worker_->stats().expirations, 1u);
  EXPECT_EQ(worker_->stats().errors, 0u);
}

TEST_F(LifecycleWorkerTest, TransitionMovesTheBytesToTheWarmTierOnceDue) {
  const auto put = Put("data/shard-0");
  ASSERT_EQ(TierOf(put), "hot");
  const auto kept = Put("tmp/other");  // another rule's key: untouched by the transition
  const std::int64_t due = DueMs(put.last_modified_ms, 1);

  AdvanceTo(due - 1);
  Pass();
  auto before = Head("data/shard-0");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(TierOf(*before), "hot");
  EXPECT_NE(before->storage_class, "STANDARD_IA");

  AdvanceTo(due);
  Pass();
  auto after = Head("data/shard-0");
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(TierOf(*after), "warm");
  EXPECT_EQ(after->storage_class, "STANDARD_IA");
  EXPECT_EQ(after->etag, put.etag);
  EXPECT_EQ(worker_->stats().transitions, 1u);
  // The bytes read back whole from their new tier.
  auto reader = store_->OpenObject(*after);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  std::string body(4096, '\0');
  auto read = (*reader)->Read(0, std::span<char>(body.data(), body.size()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, body.size());
  EXPECT_EQ(body, RandomBytes(4096, std::string("data/shard-0").size()));
  // tmp/other is not due for another day.
  auto other = Head("tmp/other");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(TierOf(*other), "hot");
  EXPECT_EQ(other->etag, kept.etag);
}

TEST_F(LifecycleWorkerTest, TheThreadRunsAPassEachTimeTheClockPassesTheInterval) {
  const auto put = Put("tmp/scratch");
  worker_->Start();
  const auto waiting = [&] {
    while (clock_.watchers() == 0) {
      std::this_thread::yield();  // until the thread waits on the clock
    }
  };
  const auto passes_reach = [&](std::uint64_t n) {
    while (worker_->stats().passes < n) {
      std::this_thread::yield();
    }
  };
  waiting();
  EXPECT_EQ(worker_->stats().passes, 0u);
  clock_.Advance(kInterval - milliseconds(1));
  EXPECT_EQ(worker_->stats().passes, 0u);  // still short of its interval: it waits on
  clock_.Advance(milliseconds(1));
  passes_reach(1);
  ASSERT_TRUE(Head("tmp/scratch").ok());
  waiting();  // its next wait has begun (and fixed its deadline)

  // Past the due time: the next pass (one interval on) expires it.
  AdvanceTo(DueMs(put.last_modified_ms, 2));  // many intervals at once: one pass
  passes_reach(2);
  while (worker_->stats().expirations < 1) {
    std::this_thread::yield();
  }
  EXPECT_FALSE(Head("tmp/scratch").ok());
  worker_.reset();  // stops and joins while it waits on the clock
}

}  // namespace
}  // namespace strata::storage
