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

TEST(BucketRecordCacheTest, AMissKeptIsFoundWithItsTextShared) {
  BucketRecordCache cache;
  BucketRecordCache::Miss miss;
  EXPECT_FALSE(cache.Find("b", &miss).has_value());
  cache.Keep(Record("b", R"({"Statement": []})"), 100, miss);
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
  BucketRecordCache::Miss miss;
  (void)cache.Find("b", &miss);
  cache.Keep(Record("b"), 10, miss);
  cache.Forget("b");
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
    const std::string name = "b" + std::to_string(i);
    (void)cache.Find(name, &miss);
    cache.Keep(Record(name), 100, miss);
    EXPECT_LE(cache.entries(), 3u);
  }
  EXPECT_TRUE(cache.Find("b9", &miss).has_value());  // the newest stays
  for (int i = 0; i < 3; ++i) {
    const std::string name = "big" + std::to_string(i);
    (void)cache.Find(name, &miss);
    cache.Keep(Record(name), 600, miss);
    EXPECT_LE(cache.bytes(), 1000u);
  }
  EXPECT_TRUE(cache.Find("big2", &miss).has_value());
  (void)cache.Find("huge", &miss);
  cache.Keep(Record("huge"), 1001, miss);  // larger than the whole cache: not kept
  EXPECT_FALSE(cache.Find("huge", &miss).has_value());
  EXPECT_TRUE(cache.Find("big2", &miss).has_value());
}

TEST(BucketRecordCacheTest, KeepingANameAgainReplacesIt) {
  BucketRecordCache cache;
  BucketRecordCache::Miss miss;
  (void)cache.Find("b", &miss);
  cache.Keep(Record("b", "one"), 10, miss);
  cache.Keep(Record("b", "two"), 20, miss);
  EXPECT_EQ(cache.Find("b", &miss)->access.policy, "two");
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 20u);
}

}  // namespace
}  // namespace strata::metadata::internal
