#include "metadata/rocks_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

namespace fs = std::filesystem;

class RocksIndexTest : public testing::IndexFixture {
 protected:
  void MakeBucket(const std::string& name, const std::string& owner = "alice") {
    ASSERT_TRUE(index_->CreateBucket({BucketName(name), owner, 1000, ""}).ok());
  }
  static ObjectRecord Obj(const std::string& bucket, const std::string& key,
                          const std::string& etag = "e") {
    ObjectRecord o;
    o.bucket = BucketName(bucket);
    o.key = ObjectKey(key);
    o.version_id = VersionId("null");
    o.etag = etag;
    o.size = etag.size();
    o.placements = {{"hot", {{"id-" + etag, o.size}}}};
    return o;
  }
};

TEST_F(RocksIndexTest, BucketCrud) {
  MakeBucket("b1", "alice");
  MakeBucket("a0", "bob");
  auto dup = index_->CreateBucket({BucketName("b1"), "bob", 2, ""});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);

  auto got = index_->GetBucket(BucketName("b1"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->created_ms, 1000);
  EXPECT_EQ(index_->GetBucket(BucketName("zz")).error().code, ErrorCode::kNotFound);

  auto list = index_->ListBuckets();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name.str(), "a0");
  EXPECT_EQ((*list)[1].name.str(), "b1");

  ASSERT_TRUE(index_->DeleteBucket(BucketName("b1")).ok());
  EXPECT_EQ(index_->DeleteBucket(BucketName("b1")).error().code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(index_->GetBucket(BucketName("b1")).error().code, ErrorCode::kNotFound);
}

TEST_F(RocksIndexTest, ConditionalWrites) {
  MakeBucket("b");
  WriteCondition create_only{.if_absent = true, .if_etag = std::nullopt};
  ASSERT_TRUE(index_->PutObject(Obj("b", "k", "v1"), create_only).ok());
  EXPECT_EQ(index_->PutObject(Obj("b", "k", "v2"), create_only).error().code,
            ErrorCode::kPreconditionFailed);
  WriteCondition if_v1{.if_absent = false, .if_etag = "v1"};
  WriteCondition if_v9{.if_absent = false, .if_etag = "v9"};
  EXPECT_EQ(index_->PutObject(Obj("b", "k", "v2"), if_v9).error().code,
            ErrorCode::kPreconditionFailed);
  ASSERT_TRUE(index_->PutObject(Obj("b", "k", "v2"), if_v1).ok());
  EXPECT_EQ(index_->GetObject(BucketName("b"), ObjectKey("k"))->etag, "v2");
  EXPECT_EQ(index_->PutObject(Obj("b", "absent", "v1"), if_v1).error().code, ErrorCode::kNoSuchKey);
}

TEST_F(RocksIndexTest, RacingCreateOnlyWritesHaveOneWinner) {
  MakeBucket("b");
  for (int round = 0; round < 20; ++round) {
    const std::string key = "race" + std::to_string(round);
    std::atomic<int> winners{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 6; ++t) {
      writers.emplace_back([&, t] {
        auto r = index_->PutObject(Obj("b", key, "v" + std::to_string(t)),
                                   WriteCondition{.if_absent = true, .if_etag = std::nullopt});
        if (r.ok()) {
          ++winners;
        } else if (r.error().code == ErrorCode::kPreconditionFailed) {
          ++refused;
        }
      });
    }
    for (auto& w : writers) {
      w.join();
    }
    EXPECT_EQ(winners.load(), 1) << key;
    EXPECT_EQ(refused.load(), 5) << key;
  }
}

TEST_F(RocksIndexTest, ObjectCrud) {
  MakeBucket("b");
  auto none = index_->PutObject(Obj("b", "k", "v1"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  auto got = index_->GetObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->etag, "v1");
  EXPECT_EQ(got->bucket.str(), "b");
  EXPECT_EQ(got->key.str(), "k");
  EXPECT_EQ(got->placements.at(0).extents.at(0).location, "id-v1");

  auto replaced = index_->PutObject(Obj("b", "k", "v2"));
  ASSERT_TRUE(replaced.ok());
  ASSERT_TRUE(replaced->has_value());
  EXPECT_EQ((*replaced)->etag, "v1");
  EXPECT_EQ((*replaced)->key.str(), "k");
  EXPECT_EQ(index_->GetObject(BucketName("b"), ObjectKey("k"))->etag, "v2");

  auto deleted = index_->DeleteObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(deleted->has_value());
  EXPECT_EQ((*deleted)->etag, "v2");
  EXPECT_EQ(index_->GetObject(BucketName("b"), ObjectKey("k")).error().code, ErrorCode::kNotFound);
  auto again = index_->DeleteObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
}

TEST_F(RocksIndexTest, ObjectErrors) {
  EXPECT_EQ(index_->PutObject(Obj("nobucket", "k")).error().code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(index_->DeleteObject(BucketName("nobucket"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchBucket);
  EXPECT_EQ(index_->ListObjects(BucketName("nobucket"), "", "", 10).error().code,
            ErrorCode::kNoSuchBucket);
  MakeBucket("b");
  EXPECT_EQ(index_->PutObject(Obj("b", std::string("a\0b", 3))).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(index_->PutObject(Obj("b", "")).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(RocksIndexTest, SetObjectTagsRewritesInPlace) {
  MakeBucket("b");
  ObjectRecord old_version = Obj("b", "k", "old");
  old_version.version_id = VersionId("v1");
  ObjectRecord new_version = Obj("b", "k", "new");
  new_version.version_id = VersionId("v2");
  new_version.last_modified_ms = 77;
  ASSERT_TRUE(index_->PutObject(old_version).ok());
  ASSERT_TRUE(index_->PutObject(new_version).ok());

  const Tags tags = {{"a", "1"}, {"b", ""}};
  auto current = index_->SetObjectTags(BucketName("b"), ObjectKey("k"), std::nullopt, tags);
  ASSERT_TRUE(current.ok()) << current.error().message;
  EXPECT_EQ(current->version_id.str(), "v2");
  EXPECT_EQ(current->etag, "new");
  EXPECT_EQ(current->last_modified_ms, 77);
  EXPECT_EQ(current->tags, tags);

  auto older =
      index_->SetObjectTags(BucketName("b"), ObjectKey("k"), VersionId("v1"), {{"x", "y"}});
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(older->etag, "old");

  // Still two versions in the same order, each with its own tags.
  auto page = index_->ListVersions(BucketName("b"), "", "", "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->versions.size(), 2u);
  EXPECT_EQ(page->versions[0].record.version_id.str(), "v2");
  EXPECT_TRUE(page->versions[0].latest);
  EXPECT_EQ(page->versions[0].record.tags, tags);
  EXPECT_EQ(page->versions[1].record.tags, (Tags{{"x", "y"}}));
  auto got = index_->GetObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->tags, tags);

  // Removing them.
  ASSERT_TRUE(index_->SetObjectTags(BucketName("b"), ObjectKey("k"), std::nullopt, {}).ok());
  EXPECT_TRUE(index_->GetObject(BucketName("b"), ObjectKey("k"))->tags.empty());
}

TEST_F(RocksIndexTest, SetObjectTagsErrors) {
  MakeBucket("b");
  auto none = index_->SetObjectTags(BucketName("b"), ObjectKey("k"), std::nullopt, {{"a", "1"}});
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(index_->PutObject(Obj("b", "k")).ok());
  auto version = index_->SetObjectTags(BucketName("b"), ObjectKey("k"), VersionId("nope"), {});
  EXPECT_EQ(version.error().code, ErrorCode::kNotFound);
  auto bucket = index_->SetObjectTags(BucketName("zz"), ObjectKey("k"), std::nullopt, {});
  EXPECT_EQ(bucket.error().code, ErrorCode::kNoSuchBucket);

  ObjectRecord marker = Obj("b", "k");
  marker.version_id = VersionId("m1");
  marker.delete_marker = true;
  ASSERT_TRUE(index_->PutObject(marker).ok());
  auto on_marker = index_->SetObjectTags(BucketName("b"), ObjectKey("k"), std::nullopt, {});
  EXPECT_EQ(on_marker.error().code, ErrorCode::kMethodNotAllowed);
  auto on_marker_by_id =
      index_->SetObjectTags(BucketName("b"), ObjectKey("k"), VersionId("m1"), {});
  EXPECT_EQ(on_marker_by_id.error().code, ErrorCode::kMethodNotAllowed);
  // The version under the marker can still be tagged by id.
  EXPECT_TRUE(index_->SetObjectTags(BucketName("b"), ObjectKey("k"), VersionId("null"), {}).ok());
}

// A version's settings change under the key's lock, checked there: a refused change
// writes nothing, and a locked version is never removed (metadata/object_lock.h).
TEST_F(RocksIndexTest, VersionSettingsChangeInPlaceAndLocksHold) {
  MakeBucket("b");
  ObjectRecord v1 = Obj("b", "k", "one");
  v1.version_id = VersionId("v1");
  ASSERT_TRUE(index_->PutObject(v1).ok());
  VersionSettingsChange lock;
  lock.acl = VersionSettingsChange::OwnedAcl{
      "bob", {AclGrant{AclGrantee::kAllUsers, "", AclPermission::kRead}}};
  lock.retention = VersionSettingsChange::Retention{"COMPLIANCE", 1000};
  auto locked =
      index_->UpdateVersionSettings(BucketName("b"), ObjectKey("k"), VersionId("v1"), lock);
  ASSERT_TRUE(locked.ok()) << locked.error().message;
  EXPECT_EQ(locked->etag, "one");
  auto stored = index_->GetVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->owner, "bob");
  EXPECT_EQ(stored->acl, lock.acl->acl);
  EXPECT_EQ(stored->retention_mode, "COMPLIANCE");

  // Shortening a COMPLIANCE date is refused on the stored record, and nothing is written
  // (not even the ACL that came with it); extending it is fine.
  VersionSettingsChange shorter;
  shorter.acl = VersionSettingsChange::OwnedAcl{"mallory", {}};
  shorter.retention = VersionSettingsChange::Retention{"COMPLIANCE", 900};
  shorter.lock = LockCheck{500, true};
  auto refused =
      index_->UpdateVersionSettings(BucketName("b"), ObjectKey("k"), std::nullopt, shorter);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(index_->GetVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"))->owner, "bob");
  VersionSettingsChange hold;
  hold.legal_hold = true;
  ASSERT_TRUE(
      index_->UpdateVersionSettings(BucketName("b"), ObjectKey("k"), std::nullopt, hold).ok());
  EXPECT_TRUE(index_->GetVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"))->legal_hold);
  EXPECT_EQ(index_->GetVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"))->tags, Tags{});
  hold.legal_hold = false;
  ASSERT_TRUE(
      index_->UpdateVersionSettings(BucketName("b"), ObjectKey("k"), std::nullopt, hold).ok());

  // In force at 500 (and whenever no time is given); gone at its date.
  auto early = index_->DeleteVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"), std::nullopt,
                                     LockCheck{500, true});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(index_->DeleteVersion(BucketName("b"), ObjectKey("k"), VersionId("v1")).error().code,
            ErrorCode::kAccessDenied);
  EXPECT_TRUE(index_->GetVersion(BucketName("b"), ObjectKey("k"), VersionId("v1")).ok());
  EXPECT_TRUE(index_
                  ->DeleteVersion(BucketName("b"), ObjectKey("k"), VersionId("v1"), std::nullopt,
                                  LockCheck{1000, false})
                  .ok());
}

TEST_F(RocksIndexTest, BucketTagsAndVersioning) {
  MakeBucket("b");
  ASSERT_TRUE(index_->SetBucketVersioning(BucketName("b"), "Enabled").ok());
  ASSERT_TRUE(index_->SetBucketTags(BucketName("b"), {{"team", "ml"}}).ok());
  Reopen();
  auto got = index_->GetBucket(BucketName("b"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->versioning, "Enabled");
  EXPECT_EQ(got->tags, (Tags{{"team", "ml"}}));
  ASSERT_TRUE(index_->SetBucketTags(BucketName("b"), {}).ok());
  EXPECT_TRUE(index_->GetBucket(BucketName("b"))->tags.empty());
  EXPECT_EQ(index_->GetBucket(BucketName("b"))->versioning, "Enabled");
  EXPECT_EQ(index_->SetBucketTags(BucketName("zz"), {}).error().code, ErrorCode::kNoSuchBucket);
}

// Bucket records are read through a cache of decoded rows: every kind of write is seen
// by the next read, with no reopen in between.
TEST_F(RocksIndexTest, EveryBucketWriteIsSeenByTheNextRead) {
  const BucketName b("b");
  MakeBucket("b");
  ASSERT_EQ(index_->GetBucket(b)->owner, "alice");  // now cached
  ASSERT_TRUE(index_->SetBucketVersioning(b, "Enabled").ok());
  EXPECT_EQ(index_->GetBucket(b)->versioning, "Enabled");
  ASSERT_TRUE(index_->SetBucketTags(b, {{"team", "ml"}}).ok());
  EXPECT_EQ(index_->GetBucket(b)->tags, (Tags{{"team", "ml"}}));
  auto set_policy = [&](const std::string& text) {
    return index_->UpdateBucketAccess(b, [&text](BucketAccess& access) -> Result<void> {
      access.policy = text;
      return Ok();
    });
  };
  ASSERT_TRUE(set_policy("{1}").ok());
  auto before = index_->GetBucket(b);
  EXPECT_EQ(before->access.policy, "{1}");
  ASSERT_TRUE(set_policy("{2}").ok());
  EXPECT_EQ(index_->GetBucket(b)->access.policy, "{2}");
  EXPECT_EQ(before->access.policy, "{1}");  // a copy read earlier keeps its text
  LifecycleRule rule;
  rule.id = "r";
  rule.expiration_days = 3;
  ASSERT_TRUE(index_->SetBucketLifecycle(b, {rule}).ok());
  ASSERT_EQ(index_->GetBucket(b)->lifecycle.size(), 1u);
  ASSERT_TRUE(index_->DeleteBucket(b).ok());
  EXPECT_EQ(index_->GetBucket(b).error().code, ErrorCode::kNotFound);
  MakeBucket("b", "bob");
  EXPECT_EQ(index_->GetBucket(b)->owner, "bob");
  EXPECT_TRUE(index_->GetBucket(b)->access.policy.empty());
}

// Readers racing a writer never keep a record older than the last write.
TEST_F(RocksIndexTest, ReadersRacingBucketWritesEndOnTheLastOne) {
  const BucketName b("b");
  MakeBucket("b");
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        ASSERT_TRUE(index_->GetBucket(b).ok());
      }
    });
  }
  for (int i = 1; i <= 300; ++i) {
    ASSERT_TRUE(index_->SetBucketTags(b, {{"n", std::to_string(i)}}).ok());
    ASSERT_EQ(index_->GetBucket(b)->tags, (Tags{{"n", std::to_string(i)}}));
  }
  done = true;
  for (auto& reader : readers) {
    reader.join();
  }
  EXPECT_EQ(index_->GetBucket(b)->tags, (Tags{{"n", "300"}}));
}

TEST_F(RocksIndexTest, BucketAccessIsReadModifiedAndWritten) {
  MakeBucket("b");
  const BucketName b("b");
  ASSERT_TRUE(index_->SetBucketTags(b, {{"team", "ml"}}).ok());
  ASSERT_TRUE(index_
                  ->UpdateBucketAccess(b,
                                       [](BucketAccess& access) -> Result<void> {
                                         EXPECT_TRUE(access.policy.empty());
                                         access.policy = "{}";
                                         return Ok();
                                       })
                  .ok());
  // A change that fails writes nothing.
  auto refused = index_->UpdateBucketAccess(b, [](BucketAccess& access) -> Result<void> {
    access.policy = "lost";
    return Error(ErrorCode::kMalformedPolicy, "no");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kMalformedPolicy);
  Reopen();
  auto got = index_->GetBucket(b);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->access.policy, "{}");
  EXPECT_EQ(got->tags, (Tags{{"team", "ml"}}));  // the other settings stay
  auto missing = index_->UpdateBucketAccess(BucketName("zz"),
                                            [](BucketAccess&) -> Result<void> { return Ok(); });
  EXPECT_EQ(missing.error().code, ErrorCode::kNoSuchBucket);
}

TEST_F(RocksIndexTest, ListObjectsOrderPrefixStartAfterAndPaging) {
  MakeBucket("b");
  MakeBucket("b-other");
  MakeBucket("a");
  const std::vector<std::string> keys = {"photos/2024/b.jpg",
                                         "photos/2024/a.jpg",
                                         "docs/x",
                                         "photos/2023/z.jpg",
                                         "photos",
                                         "photos0",
                                         "zeta",
                                         "\xc3\xa9t\xc3\xa9",
                                         "\x01low"};
  for (const auto& k : keys) {
    ASSERT_TRUE(index_->PutObject(Obj("b", k)).ok());
  }
  ASSERT_TRUE(index_->PutObject(Obj("b-other", "photos/2024/c.jpg")).ok());
  ASSERT_TRUE(index_->PutObject(Obj("a", "photos/0")).ok());
  // Overwrites must not produce duplicates.
  ASSERT_TRUE(index_->PutObject(Obj("b", "photos/2024/a.jpg", "v2")).ok());

  auto all = index_->ListObjects(BucketName("b"), "", "", 1000);
  ASSERT_TRUE(all.ok());
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> listed;
  for (const auto& o : all->objects) {
    listed.push_back(o.key.str());
    EXPECT_EQ(o.bucket.str(), "b");
  }
  EXPECT_EQ(listed, sorted);
  EXPECT_FALSE(all->truncated);

  auto photos = index_->ListObjects(BucketName("b"), "photos/", "", 1000);
  ASSERT_TRUE(photos.ok());
  ASSERT_EQ(photos->objects.size(), 3u);
  EXPECT_EQ(photos->objects[0].key.str(), "photos/2023/z.jpg");
  EXPECT_EQ(photos->objects[1].key.str(), "photos/2024/a.jpg");
  EXPECT_EQ(photos->objects[1].etag, "v2");
  EXPECT_EQ(photos->objects[2].key.str(), "photos/2024/b.jpg");

  auto after = index_->ListObjects(BucketName("b"), "photos/", "photos/2024/a.jpg", 1000);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->objects.size(), 1u);
  EXPECT_EQ(after->objects[0].key.str(), "photos/2024/b.jpg");

  // start_after before the prefix range, and after it.
  auto before = index_->ListObjects(BucketName("b"), "photos/", "a", 1000);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->objects.size(), 3u);
  auto past = index_->ListObjects(BucketName("b"), "photos/", "q", 1000);
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->objects.empty());

  // Paging through everything two at a time yields the same sequence.
  std::vector<std::string> paged;
  std::string marker;
  for (int guard = 0; guard < 100; ++guard) {
    auto page = index_->ListObjects(BucketName("b"), "", marker, 2);
    ASSERT_TRUE(page.ok());
    for (const auto& o : page->objects) {
      paged.push_back(o.key.str());
    }
    if (!page->truncated) {
      break;
    }
    ASSERT_EQ(page->objects.size(), 2u);
    marker = page->objects.back().key.str();
  }
  EXPECT_EQ(paged, sorted);

  auto exact = index_->ListObjects(BucketName("b"), "", "", sorted.size());
  ASSERT_TRUE(exact.ok());
  EXPECT_FALSE(exact->truncated);
  auto zero = index_->ListObjects(BucketName("b"), "", "", 0);
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->objects.empty());
}

TEST_F(RocksIndexTest, DeleteBucketRefusesNonEmpty) {
  MakeBucket("b");
  MakeBucket("b0");
  ASSERT_TRUE(index_->PutObject(Obj("b0", "k")).ok());
  ASSERT_TRUE(index_->PutObject(Obj("b", "k")).ok());
  EXPECT_EQ(index_->DeleteBucket(BucketName("b")).error().code, ErrorCode::kBucketNotEmpty);
  ASSERT_TRUE(index_->DeleteObject(BucketName("b"), ObjectKey("k")).ok());
  // A neighbour bucket whose name extends this one does not count.
  ASSERT_TRUE(index_->DeleteBucket(BucketName("b")).ok());
  EXPECT_EQ(index_->PutObject(Obj("b", "k")).error().code, ErrorCode::kNoSuchBucket);
  EXPECT_TRUE(index_->GetObject(BucketName("b0"), ObjectKey("k")).ok());
}

TEST_F(RocksIndexTest, ReopenKeepsData) {
  MakeBucket("b");
  ASSERT_TRUE(index_->PutObject(Obj("b", "k", "v1")).ok());
  ASSERT_TRUE(index_->PutObject(Obj("b", "k", "v2")).ok());
  ASSERT_TRUE(index_->PutUser({"ak", "sk", true, 7}).ok());
  Reopen();
  EXPECT_TRUE(index_->GetBucket(BucketName("b")).ok());
  auto got = index_->GetObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->etag, "v2");
  EXPECT_EQ(index_->GetUser("ak")->secret_key, "sk");
  // Overwrite after reopen still replaces (sequence keeps growing across restarts).
  auto replaced = index_->PutObject(Obj("b", "k", "v3"));
  ASSERT_TRUE(replaced.ok());
  ASSERT_TRUE(replaced->has_value());
  EXPECT_EQ((*replaced)->etag, "v2");
  EXPECT_EQ(index_->ListObjects(BucketName("b"), "", "", 10)->objects.size(), 1u);
}

TEST_F(RocksIndexTest, ManyBucketsAcrossReopenUsePrefixFilterCorrectly) {
  // Reopening flushes the recovered memtable into table files, so these reads go
  // through the bucket-prefix bloom filter.
  for (int b = 0; b < 20; ++b) {
    const std::string bucket = "bucket" + std::to_string(b);
    MakeBucket(bucket);
    for (int k = 0; k < b; ++k) {
      ASSERT_TRUE(index_->PutObject(Obj(bucket, "key" + std::to_string(k))).ok());
    }
  }
  Reopen();
  for (int b = 0; b < 20; ++b) {
    const std::string bucket = "bucket" + std::to_string(b);
    auto page = index_->ListObjects(BucketName(bucket), "", "", 100);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ(page->objects.size(), static_cast<std::size_t>(b)) << bucket;
    EXPECT_EQ(index_->GetObject(BucketName(bucket), ObjectKey("key0")).ok(), b > 0);
    auto deleted = index_->DeleteBucket(BucketName(bucket));
    EXPECT_EQ(deleted.ok(), b == 0) << bucket;
  }
  EXPECT_EQ(index_->GetObject(BucketName("bucket99"), ObjectKey("key0")).error().code,
            ErrorCode::kNotFound);
}

// The block cache is the configured size, and rows read from the index's files (after a
// reopen, the memtable is flushed to one) come to stay in it.
TEST_F(RocksIndexTest, BlockCacheHasTheConfiguredSizeAndKeepsReadRows) {
  MakeBucket("b");
  for (int k = 0; k < 200; ++k) {
    ASSERT_TRUE(index_->PutObject(Obj("b", "key" + std::to_string(k))).ok());
  }
  index_.reset();
  constexpr std::size_t kCache = std::size_t{3} << 20;
  auto opened =
      Index::Open(dir_.string(), IndexOptions{.sync = false, .block_cache_bytes = kCache});
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  index_ = std::move(opened).value();
  EXPECT_EQ(index_->BlockCache().capacity, kCache);
  const std::uint64_t before = index_->BlockCache().used;
  for (int k = 0; k < 200; ++k) {
    ASSERT_TRUE(index_->GetObject(BucketName("b"), ObjectKey("key" + std::to_string(k))).ok());
  }
  EXPECT_GT(index_->BlockCache().used, before);
  EXPECT_LE(index_->BlockCache().used, kCache);
}

TEST_F(RocksIndexTest, SecondOpenOfSameDirIsUnavailable) {
  auto second = Index::Open(dir_.string(), IndexOptions{});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
}

TEST_F(RocksIndexTest, Users) {
  ASSERT_TRUE(index_->PutUser({"b", "s2", false, 1}).ok());
  ASSERT_TRUE(index_->PutUser({"a", "s1", true, 2}).ok());
  auto users = index_->ListUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].access_key, "a");
  EXPECT_TRUE((*users)[0].admin);
  ASSERT_TRUE(index_->DeleteUser("a").ok());
  EXPECT_EQ(index_->DeleteUser("a").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(index_->GetUser("a").error().code, ErrorCode::kNotFound);
}

TEST_F(RocksIndexTest, ConcurrentPutsOnOneKeyReplaceEachRecordOnce) {
  MakeBucket("b");
  constexpr int kThreads = 6;
  constexpr int kPerThread = 150;
  std::vector<std::vector<std::string>> replaced(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string etag = std::to_string(t) + "-" + std::to_string(i);
        auto r = (i % 10 == 9) ? index_->DeleteObject(BucketName("b"), ObjectKey("k"))
                               : index_->PutObject(Obj("b", "k", etag));
        if (!r.ok()) {
          ++failures;
        } else if (r->has_value()) {
          replaced[t].push_back((*r)->etag);
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(failures.load(), 0);
  // Every record written is replaced (or deleted) exactly once, except the survivor.
  std::multiset<std::string> seen;
  for (const auto& v : replaced) {
    seen.insert(v.begin(), v.end());
  }
  std::set<std::string> written;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      if (i % 10 != 9) {
        written.insert(std::to_string(t) + "-" + std::to_string(i));
      }
    }
  }
  for (const auto& e : seen) {
    EXPECT_EQ(seen.count(e), 1u) << e;
    EXPECT_TRUE(written.count(e)) << e;
  }
  auto current = index_->GetObject(BucketName("b"), ObjectKey("k"));
  std::size_t expected = written.size() - (current.ok() ? 1 : 0);
  EXPECT_EQ(seen.size(), expected);
  if (current.ok()) {
    EXPECT_EQ(seen.count(current->etag), 0u);
  }
  auto listed = index_->ListObjects(BucketName("b"), "", "", 10);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->objects.size(), current.ok() ? 1u : 0u);
}

TEST_F(RocksIndexTest, DeleteBucketRacesPutObject) {
  // Whatever the interleaving, a deleted bucket never holds an object, and a bucket
  // holding an object is never deleted.
  for (int round = 0; round < 40; ++round) {
    const std::string name = "race" + std::to_string(round);
    MakeBucket(name);
    std::atomic<bool> put_ok{false};
    std::atomic<bool> delete_ok{false};
    std::thread putter([&] { put_ok = index_->PutObject(Obj(name, "k")).ok(); });
    std::thread deleter([&] {
      auto r = index_->DeleteBucket(BucketName(name));
      delete_ok = r.ok();
      if (!r.ok()) {
        EXPECT_EQ(r.error().code, ErrorCode::kBucketNotEmpty);
      }
    });
    putter.join();
    deleter.join();
    EXPECT_NE(put_ok.load(), delete_ok.load());
    if (delete_ok) {
      EXPECT_FALSE(index_->GetBucket(BucketName(name)).ok());
      EXPECT_FALSE(index_->GetObject(BucketName(name), ObjectKey("k")).ok());
    } else {
      EXPECT_TRUE(index_->GetObject(BucketName(name), ObjectKey("k")).ok());
    }
  }
}

}  // namespace
}  // namespace strata::metadata
