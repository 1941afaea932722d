// Fetcher over a real index and local store (RocksIndex and a LocalTier in a temp dir)
// reading its upstream copies from a MemTier "cold" behind a FaultyTier, on a FakeClock.
// Covered: a restore brings an evicted version's bytes back and commits them; a fill
// whose bytes are damaged on the way, or short, is never committed (the version keeps no
// local copy and no file is left behind); a retryable failure waits its backoff on the
// clock and then succeeds; a version that already has its local copy is skipped.
#include "storage/upstream/fetcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/config.h"
#include "metadata/index.h"
#include "storage/object_store.h"
#include "storage/upstream/upstream.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_io_context.h"
#include "tests/unit/storage/test_store.h"
#include "tests/unit/storage/test_writeback.h"
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

constexpr char kBucket[] = "fetched";
constexpr milliseconds kRetryBase{500};
const WallTime kStart = WallTime{} + std::chrono::hours(24 * 365 * 50);

class FetcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index =
        metadata::Index::Open((dir_.path() / "index").string(), {.sync = false, .clock = &clock_});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_ = testing::HotAndMemColdConfig(dir_.path());  // the fetcher reads mem_
    auto store =
        ObjectStore::Open(config_, *index_, SweepOptions{.interval = {}, .at_open = false}, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(BucketName(kBucket), "alice", "", "cold").ok());
    auto upstream = Upstream::Create(config_.tiers[1]);  // for client(): never used here
    ASSERT_TRUE(upstream.ok()) << upstream.error().message;
    upstream_ = std::move(upstream).value();
    fetcher_ =
        std::make_unique<Fetcher>(*store_, *upstream_, faulty_,
                                  FetchOptions{.concurrency = 2, .retry_base = kRetryBase}, clock_);
    fetcher_->Start();
  }

  // `body` as a clean version whose only copy is upstream (in mem_): written, pushed
  // (the index records the copy), its local copy evicted. The record as the index has it.
  metadata::ObjectRecord Evicted(const std::string& key, const std::string& body) {
    const auto put = testing::PutBytes(*store_, kBucket, key, body);
    testing::MarkPushed(*index_, put);
    StoreUpstream(key, body);
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok());
    auto evicted = store_->EvictLocalCopy(*head, "cold");
    EXPECT_TRUE(evicted.ok() && *evicted);
    head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok());
    EXPECT_FALSE(store_->HasLocalCopy(*head));
    return *head;
  }

  void StoreUpstream(const std::string& key, const std::string& body) {
    boost::asio::io_context ioc;
    TierWriteOptions options{.location = std::string(kBucket) + "/" + key};
    auto write = testing::RunAwaitable(ioc, mem_.BeginWrite(options));
    ASSERT_TRUE(write.ok());
    ASSERT_TRUE(testing::RunAwaitable(ioc, (*write)->Append(body)).ok());
    ASSERT_TRUE(testing::RunAwaitable(ioc, (*write)->Commit()).ok());
  }

  // Queues the restore of `record` and returns its outcome's future.
  std::future<Result<bool>> Restore(const metadata::ObjectRecord& record) {
    auto promise = std::make_shared<std::promise<Result<bool>>>();
    auto future = promise->get_future();
    EXPECT_TRUE(fetcher_->Enqueue(
        record, [promise](const Result<bool>& done) { promise->set_value(done); },
        FetchKind::kRestore));
    return future;
  }

  std::string LocalBytes(const std::string& key) {
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok());
    auto reader = store_->OpenObject(*head);
    EXPECT_TRUE(reader.ok()) << reader.error().message;
    if (!reader.ok()) {
      return {};
    }
    std::string bytes((*reader)->size(), '\0');
    for (std::size_t got = 0; got < bytes.size();) {
      auto n = (*reader)->Read(got, std::span<char>(bytes).subspan(got));
      EXPECT_TRUE(n.ok() && *n > 0);
      if (!n.ok() || *n == 0) {
        return {};
      }
      got += *n;
    }
    return bytes;
  }

  bool HasLocalCopy(const std::string& key) {
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok());
    return head.ok() && store_->HasLocalCopy(*head);
  }

  // Files on the hot tier, named ones being written (tmp/) included: a fill that fails
  // leaves as many as there were before it.
  std::size_t HotFiles() {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() / "hot")) {
      n += entry.is_regular_file() ? 1 : 0;
    }
    return n;
  }

  TempDir dir_;
  FakeClock clock_{kStart};
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<Upstream> upstream_;
  MemTier mem_{"cold"};
  FaultyTier faulty_{mem_};
  std::unique_ptr<Fetcher> fetcher_;  // last: stopped before the tiers go
};

TEST_F(FetcherTest, ARestoreBringsTheBytesBackAndCommitsThem) {
  const std::string body = RandomBytes(9'000'000, 1);  // more than one read
  const auto record = Evicted("big", body);
  const std::size_t files = HotFiles();
  auto done = Restore(record).get();
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(*done);
  EXPECT_TRUE(HasLocalCopy("big"));
  EXPECT_EQ(LocalBytes("big"), body);
  EXPECT_EQ(HotFiles(), files + 1);
  EXPECT_EQ(fetcher_->stats().fetched, 1u);
  EXPECT_EQ(fetcher_->stats().fetched_bytes, body.size());
  // Again: it has its copy now, nothing to do.
  auto again = Restore(record).get();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(fetcher_->stats().skipped, 1u);
}

TEST_F(FetcherTest, AFillDamagedOnTheWayIsNeverCommitted) {
  const std::string body = RandomBytes(6'000'000, 2);
  const auto record = Evicted("damaged", body);
  // Past the first read: part of the fill has landed when the damage arrives. Only the
  // end-to-end check (the ETag's MD5) can see it.
  faulty_.FlipBitOnRead(std::string(kBucket) + "/damaged", 5'000'000, 3);
  const std::size_t files = HotFiles();
  auto done = Restore(record).get();
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, ErrorCode::kCorruption) << done.error().message;
  EXPECT_FALSE(HasLocalCopy("damaged"));
  EXPECT_EQ(HotFiles(), files);
  EXPECT_EQ(fetcher_->stats().failed, 1u);
}

TEST_F(FetcherTest, AShortUpstreamCopyIsNeverCommitted) {
  const std::string body = RandomBytes(100'000, 3);
  const auto record = Evicted("short", body);
  StoreUpstream("short", body.substr(0, 60'000));  // replaced upstream by fewer bytes
  const std::size_t files = HotFiles();
  auto done = Restore(record).get();
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, ErrorCode::kCorruption) << done.error().message;
  EXPECT_FALSE(HasLocalCopy("short"));
  EXPECT_EQ(HotFiles(), files);
}

TEST_F(FetcherTest, ARetryableFailureWaitsItsBackoffOnTheClock) {
  const std::string body = RandomBytes(10'000, 4);
  const auto record = Evicted("outage", body);
  faulty_.FailNext(TierOp::kOpen, Error(ErrorCode::kUnavailable, "upstream down", true), 2);
  const std::uint64_t begun = clock_.waits_begun();
  auto future = Restore(record);
  // First attempt failed: it waits retry_base on the clock, then twice that.
  while (clock_.waits_begun() < begun + 1) {
    std::this_thread::yield();
  }
  EXPECT_EQ(faulty_.calls(TierOp::kOpen), 1u);
  clock_.Advance(kRetryBase - milliseconds(1));
  EXPECT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock_.Advance(milliseconds(1));
  while (clock_.waits_begun() < begun + 2) {
    std::this_thread::yield();
  }
  EXPECT_EQ(faulty_.calls(TierOp::kOpen), 2u);
  clock_.Advance(2 * kRetryBase);
  auto done = future.get();
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(*done);
  EXPECT_EQ(faulty_.calls(TierOp::kOpen), 3u);
  EXPECT_EQ(LocalBytes("outage"), body);
}

}  // namespace
}  // namespace strata::storage
