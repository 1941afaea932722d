// PrefetchJobs over a real index and store (RocksIndex, LocalTier in a temp dir), a real
// Fetcher and a real upstream (moto_server on loopback; the tests fail when it cannot
// start), on a FakeClock: scan windows and idle times are measured on it, and a learned
// job out of room polls on it, so the test moves time instead of sleeping. Covered: a bulk
// job stops at its byte budget (what it fetched is what the budget allowed, nothing
// past it); a scan is recognised from scan_threshold misses within scan_window (not when
// the window passed between them), its job fetches the keys the reader has not read, only
// into the hot tier's room, then waits for the reader and ends once the scan has been
// idle for scan_window (at a millisecond less it waits on).
#include "storage/engine/prefetch_jobs.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "metadata/index.h"
#include "storage/engine/tier_caches.h"
#include "storage/object_store.h"
#include "storage/upstream/fetcher.h"
#include "storage/upstream/s3_client.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/upstream_tier.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_io_context.h"
#include "tests/unit/storage/test_moto.h"
#include "tests/unit/storage/test_store.h"

namespace strata::storage {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using testing::MotoServer;
using testing::RandomBytes;
using testing::TempDir;

constexpr std::uint64_t kObject = 16 * 1024;  // every object's size
constexpr int kKeys = 10;                     // epoch/k0 .. epoch/k9
constexpr milliseconds kWindow{10'000};       // [prefetch] scan_window

std::string Key(int i) { return "epoch/k" + std::to_string(i); }

MotoServer* moto = nullptr;

class PrefetchJobsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { moto = new MotoServer(); }
  static void TearDownTestSuite() {
    delete moto;
    moto = nullptr;
  }

  // `bucket`: unique per test (moto keeps buckets for the whole suite).
  void SetUpWith(const std::string& bucket) {
    ASSERT_TRUE(moto->running()) << "moto_server (the upstream these tests need) did not start";
    bucket_ = BucketName(bucket);
    auto index =
        metadata::Index::Open((dir_.path() / "index").string(), {.sync = false, .clock = &clock_});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = false;
    TierConfig hot = testing::LocalTierConfig("hot", dir_.path());
    hot.capacity = 100 * 1024;  // high mark at half: room for 3 objects (50 KiB)
    hot.high_watermark = 0.5;
    hot.low_watermark = 0.4;
    TierConfig cold;
    cold.name = "cold";
    cold.kind = TierKind::kS3;
    cold.endpoint = "http://127.0.0.1:" + std::to_string(moto->port());
    cold.access_key = "test";
    cold.secret_key = "test";
    config_.tiers = {hot, cold};
    config_.storage_classes = {{"STANDARD", "hot"}, {"GLACIER", "cold"}};
    config_.prefetch.learned = true;
    config_.prefetch.scan_threshold = 3;
    config_.prefetch.scan_window = kWindow;
    config_.prefetch.concurrency = 2;
    auto store =
        ObjectStore::Open(config_, *index_, SweepOptions{.interval = {}, .at_open = false}, clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(bucket_, "alice", "", "cold").ok());
    auto upstream = Upstream::Create(cold);
    ASSERT_TRUE(upstream.ok()) << upstream.error().message;
    upstream_ = std::move(upstream).value();
    SeedUpstream();
    caches_ = std::make_unique<TierCaches>(config_, *index_, *store_, TierCacheOptions{}, clock_);
    upstream_tier_ = std::make_unique<UpstreamTier>(*upstream_, dir_.path().string());
    fetcher_ = std::make_unique<Fetcher>(*store_, *upstream_, *upstream_tier_,
                                         FetchOptions{.concurrency = 2}, clock_, &flights_);
    fetcher_->Start();
    jobs_ =
        std::make_unique<PrefetchJobs>(config_, clock_, *index_, *store_, *fetcher_, caches_.get());
  }

  void TearDown() override {
    if (jobs_ != nullptr) {
      jobs_->Stop();  // while the fetcher's thread runs, as main does
    }
    fetcher_.reset();
    jobs_.reset();
    caches_.reset();
  }

  // The upstream bucket of the same name with kKeys objects under epoch/.
  void SeedUpstream() {
    asio::io_context ioc;
    const std::string bucket = bucket_.str();
    const upstream::Endpoint endpoint = upstream_->endpoint();
    auto seeded = testing::RunAwaitable(
        ioc, [](std::string bucket, upstream::Endpoint endpoint) -> asio::awaitable<Result<void>> {
          upstream::S3Client client(co_await asio::this_coro::executor, endpoint);
          auto created = co_await client.CreateBucket(bucket);
          if (!created.ok()) {
            co_return std::move(created).error();
          }
          for (int i = 0; i < kKeys; ++i) {
            const std::string body = RandomBytes(kObject, static_cast<std::uint64_t>(i));
            upstream::BodySource source =
                [body](std::uint64_t offset,
                       std::span<char> buf) -> asio::awaitable<Result<std::size_t>> {
              const std::size_t n = std::min<std::size_t>(buf.size(), body.size() - offset);
              std::copy_n(body.data() + offset, n, buf.data());
              co_return n;
            };
            std::vector<upstream::Header> headers;
            auto put = co_await client.PutObject(bucket, Key(i), kObject, std::move(source),
                                                 std::move(headers));
            if (!put.ok()) {
              co_return std::move(put).error();
            }
          }
          co_return Ok();
        }(bucket, endpoint));
    ASSERT_TRUE(seeded.ok()) << seeded.error().message;
  }

  // The keys of the prefix that have a local copy now.
  std::set<std::string> LocalKeys() {
    std::set<std::string> out;
    for (int i = 0; i < kKeys; ++i) {
      auto head = store_->HeadObject(bucket_, ObjectKey(Key(i)));
      if (head.ok() && store_->HasLocalCopy(*head)) {
        out.insert(Key(i));
      }
    }
    return out;
  }

  // A GET of key `i` that reached the upstream.
  void Miss(int i) {
    metadata::ObjectRecord record;
    record.bucket = bucket_;
    record.key = ObjectKey(Key(i));
    record.version_id = VersionId("null");
    record.size = kObject;
    jobs_->ObserveMiss(record);
  }

  PrefetchJobInfo Job(std::uint64_t id) {
    auto info = jobs_->Get(id);
    EXPECT_TRUE(info.ok()) << info.error().message;
    return info.ok() ? *info : PrefetchJobInfo{};
  }

  // Until job `id` has ended (its fetches, real network I/O, take their time).
  PrefetchJobInfo Ended(std::uint64_t id) {
    while (Job(id).state == PrefetchState::kRunning) {
      std::this_thread::yield();
    }
    return Job(id);
  }

  TempDir dir_;
  FakeClock clock_{WallTime{} + std::chrono::hours(500'000)};
  Config config_;
  BucketName bucket_{""};
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<Upstream> upstream_;
  std::unique_ptr<UpstreamTier> upstream_tier_;
  std::unique_ptr<TierCaches> caches_;
  CopyFlights flights_;  // as the engine's: shared with read-through GETs
  std::unique_ptr<Fetcher> fetcher_;
  std::unique_ptr<PrefetchJobs> jobs_;
};

TEST_F(PrefetchJobsTest, ABulkJobStopsAtItsBudget) {
  SetUpWith("pf-budget");
  // Two and a half objects' worth: the third would pass it.
  auto started = jobs_->Start(bucket_, "epoch/", 2 * kObject + kObject / 2);
  ASSERT_TRUE(started.ok()) << started.error().message;
  const PrefetchJobInfo info = Ended(started->id);
  EXPECT_EQ(info.state, PrefetchState::kDone) << info.error;
  EXPECT_TRUE(info.budget_reached);
  EXPECT_EQ(info.queued, 2u);
  EXPECT_LE(info.queued_bytes, info.budget);
  EXPECT_EQ(info.fetched, 2u);
  EXPECT_EQ(info.fetched_bytes, 2 * kObject);
  EXPECT_EQ(info.failed, 0u);
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(0), Key(1)}));
  // The bytes are the upstream's.
  auto head = store_->HeadObject(bucket_, ObjectKey(Key(1)));
  ASSERT_TRUE(head.ok());
  auto reader = store_->OpenObject(*head);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  std::string body(kObject, '\0');
  auto read = (*reader)->Read(0, std::span<char>(body.data(), body.size()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(body, RandomBytes(kObject, 1));
}

// A key whose copy is in flight elsewhere (a read-through GET holds its seat) is not
// fetched alongside: its fetch waits for the seat, then finds the key still not local
// (this GET cached nothing) and fetches it; the other key goes ahead meanwhile.
TEST_F(PrefetchJobsTest, AFetchWaitsWhileAGetCopiesTheSameKey) {
  SetUpWith("pf-flight");
  auto get_of_k0 = flights_.Join(bucket_, ObjectKey(Key(0)));
  ASSERT_TRUE(get_of_k0->leader());
  auto started = jobs_->Start(bucket_, "epoch/k", 2 * kObject);  // k0 and k1
  ASSERT_TRUE(started.ok()) << started.error().message;
  while (Job(started->id).fetched < 1) {
    std::this_thread::yield();
  }
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(1)}));
  // k0 waits as long as the seat is held, however long that is.
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(Job(started->id).state, PrefetchState::kRunning);
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(1)}));
  get_of_k0.reset();
  const PrefetchJobInfo info = Ended(started->id);
  EXPECT_EQ(info.state, PrefetchState::kDone) << info.error;
  EXPECT_EQ(info.fetched, 2u);
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(0), Key(1)}));
}

TEST_F(PrefetchJobsTest, ALearnedScanFillsTheRoomThenStopsOnceIdle) {
  SetUpWith("pf-learned");
  // Two misses, then the window passes: they no longer count.
  Miss(0);
  Miss(1);
  clock_.Advance(kWindow + milliseconds(1));
  Miss(2);
  Miss(3);
  EXPECT_EQ(jobs_->stats().learned_started, 0u);
  EXPECT_TRUE(jobs_->List().empty());
  // The third within one window: a scan, followed from now on, and its job starts.
  Miss(4);
  ASSERT_EQ(jobs_->stats().learned_started, 1u);
  const auto listed = jobs_->List();
  ASSERT_EQ(listed.size(), 1u);
  const PrefetchJobInfo first = listed.front();
  EXPECT_TRUE(first.learned);
  EXPECT_EQ(first.prefix, "epoch/");

  // It fetches what the reader has not read (k2, k3 and k4 it has), in listing order,
  // as far as the room below the high mark goes: three objects. Then it waits for the
  // reader, polling on the clock.
  while (Job(first.id).fetched + Job(first.id).failed < 3 || clock_.watchers() == 0) {
    std::this_thread::yield();
  }
  PrefetchJobInfo info = Job(first.id);
  EXPECT_EQ(info.state, PrefetchState::kRunning);
  EXPECT_EQ(info.queued, 3u);
  EXPECT_EQ(info.fetched, 3u);
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(0), Key(1), Key(5)}));

  // Idle for a millisecond less than the window: it looks again and waits on.
  std::uint64_t begun = clock_.waits_begun();
  clock_.Advance(kWindow - milliseconds(1));
  while (clock_.waits_begun() == begun || clock_.watchers() == 0) {
    std::this_thread::yield();
  }
  EXPECT_EQ(Job(first.id).state, PrefetchState::kRunning);
  EXPECT_EQ(Job(first.id).queued, 3u);

  // Past the window (by more than the job's room poll): the scan is idle and the job
  // ends, out of room.
  clock_.Advance(std::chrono::seconds(1));
  info = Ended(first.id);
  EXPECT_EQ(info.state, PrefetchState::kDone) << info.error;
  EXPECT_TRUE(info.budget_reached);  // stopped before the end of the listing
  EXPECT_EQ(info.queued, 3u);
  EXPECT_EQ(LocalKeys(), (std::set<std::string>{Key(0), Key(1), Key(5)}));
}

TEST_F(PrefetchJobsTest, StopCancelsAJobWaitingForRoom) {
  SetUpWith("pf-stop");
  Miss(0);
  Miss(1);
  Miss(2);
  ASSERT_EQ(jobs_->stats().learned_started, 1u);
  const std::uint64_t id = jobs_->List().front().id;
  while (Job(id).fetched + Job(id).failed < 3 || clock_.watchers() == 0) {
    std::this_thread::yield();
  }
  jobs_->Stop();  // returns only once the job's coroutine is gone; the clock never moved
  EXPECT_EQ(clock_.watchers(), 0u);
  auto refused = jobs_->Start(bucket_, "epoch/", 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace strata::storage
