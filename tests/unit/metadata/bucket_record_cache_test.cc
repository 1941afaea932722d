#include "metadata/internal/bucket_record_cache.h"

#include <gtest/gtest.h>

namespace strata::metadata::internal {
namespace {

BucketRecord Record(const std::string& name, const std::string& policy = "") {
  BucketRecord record;
  record.name = BucketName(name);
  record.owner = "alice";
  record.access.policy = policy;
  return record;
}

// Finds `name` (a miss) and keeps a record of it, as RocksIndex does after its read.
void MissAndKeep(BucketRecordCache& cache, const std::string& name, std::size_t bytes,
                 const std::string& policy = "") {
  BucketRecordCache::Miss miss;
  ASSERT_FALSE(cache.Find(name, &miss).has_value());
  cache.Keep(Record(name, policy), bytes, miss);
}

TEST(BucketRecordCacheTest, AMissKeptIsFoundWithItsTextShared) {
  BucketRecordCache cache;
  MissAndKeep(cache, "b", 100, R"({"Statement": []})");
  BucketRecordCache::Miss miss;
  auto first = cache.Find("b", &miss);
  auto second = cache.Find("b", &miss);
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_EQ(first->owner, "alice");
  EXPECT_EQ(first->access.policy, R"({"Statement": []})");
  // Copies of one kept record share its text: the per-request comparison is a pointer's.
  EXPECT_TRUE(first->access.policy.SharesWith(second->access.policy));
  EXPECT_FALSE(cache.Find("other", &miss).has_value());
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 100u);
}

TEST(BucketRecordCacheTest, ForgetDropsTheRecord) {
  BucketRecordCache cache;
  MissAndKeep(cache, "b", 10);
  cache.Forget("b");
  BucketRecordCache::Miss miss;
  EXPECT_FALSE(cache.Find("b", &miss).has_value());
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(BucketRecordCacheTest, ARecordReadBeforeAWriteIsNotKeptAfterIt) {
  BucketRecordCache cache;
  BucketRecordCache::Miss before_write;
  (void)cache.Find("b", &before_write);
  cache.Forget("b");  // the row is written while the reader decodes the old one
  cache.Keep(Record("b", "old"), 10, before_write);
  BucketRecordCache::Miss after_write;
  EXPECT_FALSE(cache.Find("b", &after_write).has_value());
  // A write of any bucket counts: the check is cheap and a missed keep costs one read.
  BucketRecordCache::Miss elsewhere;
  (void)cache.Find("b", &elsewhere);
  cache.Forget("c");
  cache.Keep(Record("b"), 10, elsewhere);
  EXPECT_FALSE(cache.Find("b", &after_write).has_value());
  cache.Keep(Record("b", "new"), 10, after_write);
  EXPECT_EQ(cache.Find("b", &after_write)->access.policy, "new");
}

TEST(BucketRecordCacheTest, BoundedInEntriesAndBytes) {
  BucketRecordCache cache(BucketRecordCache::Limits{.max_entries = 3, .max_bytes = 1000});
  BucketRecordCache::Miss miss;
  for (int i = 0; i < 10; ++i) {
    MissAndKeep(cache, "b" + std::to_string(i), 100);
    EXPECT_LE(cache.entries(), 3u);
  }
  EXPECT_TRUE(cache.Find("b9", &miss).has_value());  // the newest stays
  for (int i = 0; i < 3; ++i) {
    MissAndKeep(cache, "big" + std::to_string(i), 600);
    EXPECT_LE(cache.bytes(), 1000u);
  }
  EXPECT_TRUE(cache.Find("big2", &miss).has_value());
  MissAndKeep(cache, "huge", 1001);  // larger than the whole cache: not kept
  EXPECT_FALSE(cache.Find("huge", &miss).has_value());
  EXPECT_TRUE(cache.Find("big2", &miss).has_value());
}

TEST(BucketRecordCacheTest, KeepingANameAgainReplacesIt) {
  BucketRecordCache cache;
  BucketRecordCache::Miss miss;
  ASSERT_FALSE(cache.Find("b", &miss).has_value());
  cache.Keep(Record("b", "one"), 10, miss);
  cache.Keep(Record("b", "two"), 20, miss);
  EXPECT_EQ(cache.Find("b", &miss)->access.policy, "two");
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 20u);
}

}  // namespace
}  // namespace strata::metadata::internal
