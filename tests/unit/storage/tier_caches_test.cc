// TierCaches over a real index and store: a hot tier of 1 MiB (marks at 95% and 85%) whose
// bucket is bound to an s3 tier that is never contacted; a version becomes clean when the
// test records the push as the write-back worker does (Index::FinishWriteback). Passes run
// on the test thread (Load, RunPass; never Start). Covered: dirty copies are never evicted
// however full the tier is (their bytes exist nowhere else); clean ones go least recently
// used first, down to the low mark and no further; a restored (pinned) copy stays; a
// read-through miss is cached only when it fits below the high mark or its key was read
// more often than the copies it displaces (TinyLFU, storage/cache_policy.h), and
// what it displaces is evicted by the next pass; ReserveRoom (prefetch) spends only the
// room below the high mark, which each pass recomputes from the index's usage counters
// less the reservations still in flight.
#include "storage/engine/tier_caches.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "metadata/codec.h"
#include "metadata/index.h"
#include "storage/object_store.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_store.h"
#include "tests/unit/storage/test_writeback.h"

namespace strata::storage {
namespace {

using testing::RandomBytes;
using testing::TempDir;

constexpr std::uint64_t kCapacity = std::uint64_t{1} << 20;
constexpr double kHighWatermark = 0.95;
constexpr double kLowWatermark = 0.85;
constexpr std::int64_t kObject = 64 * 1024;  // every object's size
constexpr char kBucket[] = "bound";

// A mark in bytes, rounded down as TierCaches rounds it.
std::int64_t Mark(double fraction) {
  return static_cast<std::int64_t>(std::floor(static_cast<double>(kCapacity) * fraction));
}

std::string Key(int i) { return std::string(i < 10 ? "k0" : "k") + std::to_string(i); }

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A read-through miss of a key the store has never held.
metadata::ObjectRecord Miss(const std::string& key) {
  metadata::ObjectRecord record;
  record.bucket = BucketName(kBucket);
  record.key = ObjectKey(key);
  record.version_id = VersionId("null");
  record.size = static_cast<std::uint64_t>(kObject);
  return record;
}

class TierCachesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = false;
    TierConfig hot = testing::LocalTierConfig("hot", dir_.path());
    hot.capacity = kCapacity;
    hot.high_watermark = kHighWatermark;
    hot.low_watermark = kLowWatermark;
    TierConfig cold;
    cold.name = "cold";
    cold.kind = TierKind::kS3;
    cold.endpoint = "http://127.0.0.1:1";  // never contacted
    config_.tiers = {hot, cold};
    config_.storage_classes = {{"STANDARD", "hot"}};
    auto store =
        ObjectStore::Open(config_, *index_, SweepOptions{.interval = {}, .at_open = false});
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    auto bucket = store_->CreateBucket(BucketName(kBucket), "alice", "", "cold");
    ASSERT_TRUE(bucket.ok()) << bucket.error().message;
    caches_ = std::make_unique<TierCaches>(config_, *index_, *store_);
    store_->SetResidencyListener([this](const metadata::ObjectRecord& record) {
      if (caches_ != nullptr) {
        caches_->OnResident(record);
      }
    });
    auto loaded = caches_->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  }

  metadata::ObjectRecord Put(const std::string& key, std::uint64_t seed) {
    return testing::PutBytes(*store_, kBucket, key,
                             RandomBytes(static_cast<std::size_t>(kObject), seed));
  }

  metadata::ObjectRecord Head(const std::string& key) {
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    EXPECT_TRUE(head.ok()) << key << ": " << head.error().message;
    return head.ok() ? *head : metadata::ObjectRecord{};
  }

  bool Local(const std::string& key) { return store_->HasLocalCopy(Head(key)); }

  // What the write-back worker records after a successful push: the version gets a
  // placement on the s3 tier and is clean from then on.
  void MarkPushed(const metadata::ObjectRecord& record) { testing::MarkPushed(*index_, record); }

  // Objects k00..k<count-1>, written in that order (k00 the least recently used), pushed
  // (clean) or not (dirty); returns their current records.
  std::vector<metadata::ObjectRecord> Fill(int count, bool pushed) {
    std::vector<metadata::ObjectRecord> records;
    for (int i = 0; i < count; ++i) {
      const auto put = Put(Key(i), static_cast<std::uint64_t>(i) + 1);
      if (pushed) {
        MarkPushed(put);
      }
      records.push_back(Head(Key(i)));
    }
    return records;
  }

  // The hot tier's bytes, from the index's usage counters (what a pass reads).
  std::int64_t HotBytes() {
    auto rows = index_->Usage();
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::int64_t bytes = 0;
    if (rows.ok()) {
      for (const auto& row : *rows) {
        if (row.tier == "hot") {
          bytes += row.bytes;
        }
      }
    }
    return bytes;
  }

  TierCacheStats Stats() const {
    const auto all = caches_->stats();
    EXPECT_EQ(all.size(), 1u) << "one tier has a capacity";
    return all.empty() ? TierCacheStats{} : all.front();
  }

  void Pass() {
    auto pass = caches_->RunPass();
    ASSERT_TRUE(pass.ok()) << pass.error().message;
  }

  TempDir dir_;
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<TierCaches> caches_;  // destroyed first
};

// A copy not yet written back is the version's only one: however far above its marks
// the tier is, a pass looks at each dirty copy, keeps it, and reports itself blocked.
TEST_F(TierCachesTest, DirtyCopiesAreNeverEvicted) {
  Fill(24, /*pushed=*/false);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(HotBytes(), 24 * kObject);
  ASSERT_GT(HotBytes(), Mark(kHighWatermark));

  ASSERT_NO_FATAL_FAILURE(Pass());
  for (int i = 0; i < 24; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i) << " lost its only copy";
  }
  auto stats = Stats();
  EXPECT_EQ(stats.tier, "hot");
  EXPECT_EQ(stats.capacity, kCapacity);
  EXPECT_EQ(stats.used, 24 * kObject);
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.evicted_bytes, 0u);
  EXPECT_GE(stats.blocked, 1u);
  EXPECT_EQ(stats.resident, 24u) << "every dirty copy looked at goes back to the policy";

  // The next pass finds them all again, and is blocked again.
  ASSERT_NO_FATAL_FAILURE(Pass());
  stats = Stats();
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.blocked, 2u);
  EXPECT_EQ(stats.resident, 24u);

  // After a restart the policy learns what the tier holds from the index alone (Load);
  // its pass keeps them too.
  TierCaches restarted(config_, *index_, *store_);
  auto loaded = restarted.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto pass = restarted.RunPass();
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  const auto after = restarted.stats();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after.front().resident, 24u) << "Load did not find the copies on the tier";
  EXPECT_EQ(after.front().evictions, 0u);
  EXPECT_EQ(after.front().blocked, 1u);
  for (int i = 0; i < 24; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i);
  }
}

// 24 clean copies (1.5 MiB on a 1 MiB tier); the four oldest were read since, so the
// least recently used are k04, k05, ... A pass evicts them in that order until the tier
// is under the low mark, and stops there: the records stay, without a local copy.
TEST_F(TierCachesTest, CleanCopiesAreEvictedOldestFirstDownToTheLowMark) {
  const auto records = Fill(24, /*pushed=*/true);
  ASSERT_FALSE(HasFailure());
  for (int i = 0; i < 4; ++i) {
    caches_->OnRead(records[i]);
  }
  std::vector<std::string> coldest_first;
  for (int i = 4; i < 24; ++i) {
    coldest_first.push_back(Key(i));
  }
  for (int i = 0; i < 4; ++i) {
    coldest_first.push_back(Key(i));
  }
  ASSERT_EQ(HotBytes(), 24 * kObject);

  ASSERT_NO_FATAL_FAILURE(Pass());
  const std::int64_t after = HotBytes();
  EXPECT_LE(after, Mark(kLowWatermark));
  EXPECT_GT(after, static_cast<std::int64_t>(kCapacity / 2)) << "evicted far below the low mark";
  EXPECT_GT(after + kObject, Mark(kLowWatermark)) << "one eviction more than needed";

  int gone = 0;
  for (int i = 0; i < 24; ++i) {
    gone += Local(Key(i)) ? 0 : 1;
  }
  EXPECT_EQ(static_cast<std::int64_t>(gone) * kObject, 24 * kObject - after);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i) << " was read recently";
  }
  for (int j = 0; j < 24; ++j) {
    const std::string& key = coldest_first[static_cast<std::size_t>(j)];
    auto head = store_->HeadObject(BucketName(kBucket), ObjectKey(key));
    ASSERT_TRUE(head.ok()) << key << ": the record must stay: " << head.error().message;
    if (j < gone) {
      EXPECT_FALSE(store_->HasLocalCopy(*head)) << key << " is among the " << gone << " coldest";
      ASSERT_EQ(head->placements.size(), 1u) << key;
      EXPECT_EQ(head->placements[0].tier, "cold") << key;
      EXPECT_EQ(head->size, static_cast<std::uint64_t>(kObject)) << key;
    } else {
      EXPECT_TRUE(store_->HasLocalCopy(*head)) << key << " was evicted before a colder copy";
    }
  }

  const auto stats = Stats();
  EXPECT_EQ(stats.evictions, static_cast<std::uint64_t>(gone));
  EXPECT_EQ(stats.evicted_bytes, static_cast<std::uint64_t>(gone) * kObject);
  EXPECT_EQ(stats.used, after);
  EXPECT_EQ(stats.resident, static_cast<std::uint64_t>(24 - gone));
  EXPECT_EQ(stats.blocked, 0u);

  // Under the high mark now: the next pass evicts nothing.
  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_EQ(Stats().evictions, static_cast<std::uint64_t>(gone));
  EXPECT_EQ(HotBytes(), after);
}

// A restored version (RestoreObject, as gateway/handlers/restore_handlers.cc records it)
// is pinned until its expiry: kept although it is the coldest copy, and still tracked. A
// pin that has expired pins nothing.
TEST_F(TierCachesTest, PinnedCopiesAreKept) {
  const auto records = Fill(24, /*pushed=*/true);
  ASSERT_FALSE(HasFailure());
  const auto restore = [&](const metadata::ObjectRecord& record, std::int64_t expiry_ms) {
    const metadata::VersionChange change{
        .version_id = record.version_id,
        .etag = record.etag,
        .last_modified_ms = record.last_modified_ms,
        .edits = {metadata::SetRestoreState{expiry_ms, false}},
    };
    auto set = index_->ChangeVersion(record.bucket, record.key, change);
    EXPECT_TRUE(set.ok()) << set.error().message;
    return set.ok() && set->written;
  };
  ASSERT_TRUE(restore(records[0], NowMs() + 3'600'000));  // the coldest: pinned for an hour
  ASSERT_TRUE(restore(records[1], NowMs() - 3'600'000));  // the next: its pin has expired

  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_TRUE(Local(Key(0))) << "a pinned copy was evicted";
  EXPECT_FALSE(Local(Key(1))) << "an expired pin still kept its copy";
  const std::int64_t after = HotBytes();
  EXPECT_LE(after, Mark(kLowWatermark));
  const auto stats = Stats();
  ASSERT_GT(stats.evictions, 0u);
  EXPECT_EQ(static_cast<std::int64_t>(stats.evictions) * kObject, 24 * kObject - after);
  // The evicted ones are the next coldest, k01 onwards; the pinned one is passed over.
  const int gone = static_cast<int>(stats.evictions);
  for (int i = 1; i < 24; ++i) {
    EXPECT_EQ(Local(Key(i)), i > gone) << Key(i);
  }
  EXPECT_EQ(stats.resident, static_cast<std::uint64_t>(24 - gone))
      << "the pinned copy must stay tracked, to be evicted once its pin expires";
  EXPECT_EQ(stats.blocked, 0u);
}

// 15 clean copies (960 KiB) leave less room below the high mark than one more object.
// A miss of a key never read before ties the residents (never read either) and displaces
// none: refused. Its second miss compares its count from before (1) with the coldest
// copy's (0), wins, and is admitted; the copy it displaced is evicted by the next pass,
// though the tier is below its high mark.
TEST_F(TierCachesTest, AdmitFillRefusesAColdMissWhenFullAndAdmitsAFrequentOne) {
  Fill(15, /*pushed=*/true);
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(Pass());
  ASSERT_EQ(Stats().evictions, 0u);
  ASSERT_LE(HotBytes(), Mark(kHighWatermark));
  ASSERT_LT(Mark(kHighWatermark) - HotBytes(), kObject) << "the miss must not fit";

  const auto miss = Miss("new");
  EXPECT_FALSE(caches_->AdmitFill(miss));
  auto stats = Stats();
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_EQ(stats.admitted, 0u);

  EXPECT_TRUE(caches_->AdmitFill(miss)) << "read once before, more often than any resident";
  stats = Stats();
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_EQ(stats.admitted, 1u);
  for (int i = 0; i < 15; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i) << ": admission evicts nothing itself";
  }

  ASSERT_NO_FATAL_FAILURE(Pass());
  stats = Stats();
  EXPECT_EQ(stats.evictions, 1u) << "one copy makes room for the miss";
  EXPECT_EQ(stats.evicted_bytes, static_cast<std::uint64_t>(kObject));
  EXPECT_FALSE(Local(Key(0))) << "the displaced copy is the least recently used";
  for (int i = 1; i < 15; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i);
  }
  EXPECT_EQ(HotBytes(), 14 * kObject);
}

// The same, with every resident read twice: a miss needs a count above 2 from before its
// read, so its first three are refused (0, 1, 2: a tie displaces nothing) and the fourth
// is admitted.
TEST_F(TierCachesTest, AdmitFillNeedsMoreReadsThanTheCopiesItDisplaces) {
  const auto records = Fill(15, /*pushed=*/true);
  ASSERT_FALSE(HasFailure());
  for (int round = 0; round < 2; ++round) {
    for (const auto& record : records) {
      caches_->OnRead(record);
    }
  }
  ASSERT_NO_FATAL_FAILURE(Pass());

  const auto miss = Miss("new");
  for (int ask = 1; ask <= 3; ++ask) {
    EXPECT_FALSE(caches_->AdmitFill(miss)) << "ask " << ask;
  }
  EXPECT_EQ(Stats().refused, 3u);
  EXPECT_TRUE(caches_->AdmitFill(miss)) << "ask 4";
  EXPECT_EQ(Stats().admitted, 1u);

  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_EQ(Stats().evictions, 1u);
  EXPECT_FALSE(Local(Key(0)));
}

// A fill evicts what its admission displaced before it commits (EvictDisplaced), with no
// pass: a pass thread running late never leaves the tier holding both.
TEST_F(TierCachesTest, EvictDisplacedEvictsWhatAdmissionDisplacedWithoutAPass) {
  const auto records = Fill(15, /*pushed=*/true);
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(Pass());
  const auto miss = Miss("new");
  ASSERT_FALSE(caches_->AdmitFill(miss));
  ASSERT_TRUE(caches_->AdmitFill(miss)) << "read once before: more often than any resident";
  EXPECT_TRUE(Local(Key(0))) << "displaced, not evicted yet";
  const std::int64_t before = HotBytes();
  caches_->EvictDisplaced();
  EXPECT_FALSE(Local(Key(0)));
  EXPECT_EQ(HotBytes(), before - kObject);
  EXPECT_EQ(Stats().evictions, 1u);
  caches_->EvictDisplaced();  // nothing left to evict
  EXPECT_EQ(Stats().evictions, 1u);
  for (int i = 1; i < 15; ++i) {
    EXPECT_TRUE(Local(Key(i))) << Key(i);
  }
  caches_->ReleaseRoom(miss.size);
}

// Prefetch may spend the room below the high mark and no more, without displacing
// anything; each pass gives back what was reserved but did not land, from the usage.
TEST_F(TierCachesTest, ReserveRoomSpendsOnlyTheRoomBelowTheHighMark) {
  ASSERT_NO_FATAL_FAILURE(Pass());  // an empty tier: all of the high mark is room
  const auto high = static_cast<std::uint64_t>(Mark(kHighWatermark));
  const auto object = static_cast<std::uint64_t>(kObject);
  constexpr std::uint64_t kSmall = 1000;
  EXPECT_FALSE(caches_->ReserveRoom(high + 1)) << "more than the room";
  EXPECT_TRUE(caches_->ReserveRoom(high - kSmall)) << "a refusal must spend nothing";
  EXPECT_FALSE(caches_->ReserveRoom(object)) << "would pass the high mark";
  EXPECT_TRUE(caches_->ReserveRoom(kSmall)) << "exactly the rest";
  EXPECT_FALSE(caches_->ReserveRoom(1));

  // Reservations in flight stay out of the room a pass recomputes from the usage (their
  // bytes are not in it yet) until they are released.
  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_FALSE(caches_->ReserveRoom(object)) << "a pass must not give reserved room back";
  caches_->ReleaseRoom(high - kSmall);
  caches_->ReleaseRoom(kSmall);
  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_TRUE(caches_->ReserveRoom(object));
  caches_->ReleaseRoom(object);
  EXPECT_EQ(Stats().evictions, 0u);

  // With four copies on the tier the room is the high mark less their bytes.
  Fill(4, /*pushed=*/false);
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(Pass());
  const std::uint64_t room = high - 4 * object;
  EXPECT_FALSE(caches_->ReserveRoom(room + 1));
  EXPECT_TRUE(caches_->ReserveRoom(room));
  EXPECT_FALSE(caches_->ReserveRoom(1));
  // The room admission would have used is spent: a miss of a key never read no longer
  // fits, and displaces nothing.
  EXPECT_FALSE(caches_->AdmitFill(Miss("new")));
  EXPECT_EQ(Stats().refused, 1u);
}

// A fill that lands while a pass measures, after its read of the usage, is in neither
// that usage nor (released) the reservations: the pass must still leave its bytes out of
// the room, or admission lets the tier pass its high mark and the next pass evicts down
// to the low mark what a training epoch would have hit. The pass after counts it once.
TEST_F(TierCachesTest, AFillLandingDuringAPassStaysOutOfTheRoom) {
  const auto high = static_cast<std::uint64_t>(Mark(kHighWatermark));
  const auto object = static_cast<std::uint64_t>(kObject);
  bool armed = false;
  TierCaches* measured_ptr = nullptr;
  TierCacheOptions options;
  options.after_usage_read = [&] {
    if (armed) {
      armed = false;
      Put("filled", 1);
      measured_ptr->ReleaseRoom(object);
    }
  };
  TierCaches measured(config_, *index_, *store_, options);
  measured_ptr = &measured;
  ASSERT_TRUE(measured.Load().ok());
  ASSERT_TRUE(measured.RunPass().ok());  // an empty tier: all of the high mark is room
  ASSERT_TRUE(measured.AdmitFill(Miss("filled")));

  armed = true;
  ASSERT_TRUE(measured.RunPass().ok());
  ASSERT_FALSE(armed) << "the fill landed during the pass";
  EXPECT_EQ(HotBytes(), kObject);
  EXPECT_FALSE(measured.ReserveRoom(high - object + 1)) << "the landed fill was left in the room";
  ASSERT_TRUE(measured.ReserveRoom(high - object));
  measured.ReleaseRoom(high - object);

  ASSERT_TRUE(measured.RunPass().ok());
  EXPECT_FALSE(measured.ReserveRoom(high - object + 1));
  EXPECT_TRUE(measured.ReserveRoom(high - object)) << "counted twice by the pass after";
}

// A learned prefetch out of room displaces only the copies it names (those its scan has
// read in this epoch), never any other: the ids it used leave the vector, unknown ones
// are dropped, and the next pass evicts the displaced copies.
TEST_F(TierCachesTest, ReserveRoomDisplacesOnlyTheNamedCopies) {
  const auto records = Fill(15, /*pushed=*/true);  // 960 KiB: no room for another object
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(Pass());
  const auto object = static_cast<std::uint64_t>(kObject);
  ASSERT_FALSE(caches_->ReserveRoom(object));
  std::vector<std::uint64_t> none;
  EXPECT_FALSE(caches_->ReserveRoom(object, &none));
  metadata::ObjectRecord unknown = records[0];
  unknown.key = ObjectKey("never-written");
  std::vector<std::uint64_t> read = {TierCaches::Ids(records[3]).first,
                                     TierCaches::Ids(records[7]).first,
                                     TierCaches::Ids(unknown).first};
  EXPECT_TRUE(caches_->ReserveRoom(object, &read));  // the unknown id, then records[7]
  EXPECT_EQ(read, std::vector<std::uint64_t>{TierCaches::Ids(records[3]).first});
  ASSERT_NO_FATAL_FAILURE(Pass());
  EXPECT_EQ(Stats().evictions, 1u);
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(Local(Key(i)), i != 7) << Key(i);
  }
  caches_->ReleaseRoom(object);
}

// A hot tier without a capacity has no limit: every reservation and every fill fits.
TEST_F(TierCachesTest, ReserveRoomIsUnlimitedWithoutACapacity) {
  Config unlimited = config_;
  unlimited.tiers[0].capacity = 0;
  TierCaches caches(unlimited, *index_, *store_);
  auto loaded = caches.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto pass = caches.RunPass();
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_TRUE(caches.stats().empty());
  EXPECT_TRUE(caches.ReserveRoom(kCapacity * 1024));
  EXPECT_TRUE(caches.ReserveRoom(kCapacity * 1024));
  EXPECT_TRUE(caches.ReserveRoom(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_TRUE(caches.AdmitFill(Miss("new")));
}

}  // namespace
}  // namespace strata::storage
