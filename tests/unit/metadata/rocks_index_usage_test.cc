// Usage counters in RocksIndex: every change of a version, part or upload moves them in its
// own batch; they survive a reopen, go with their bucket, and an index written before
// they existed is counted once at open.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "metadata/index.h"
#include "metadata/rocks_util.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

using Counts = std::pair<std::int64_t, std::int64_t>;  // objects, bytes

class UsageIndexTest : public testing::IndexFixture {
 protected:
  void SetUp() override {
    IndexFixture::SetUp();
    if (HasFatalFailure()) {
      return;
    }
    ASSERT_TRUE(index_->CreateBucket({BucketName("b"), "alice", 1, ""}).ok());
  }

  static ObjectRecord Obj(const std::string& key, const std::string& version_id,
                          std::uint64_t size) {
    ObjectRecord o;
    o.bucket = BucketName("b");
    o.key = ObjectKey(key);
    o.version_id = VersionId(version_id);
    o.size = size;
    o.etag = "etag-" + key + version_id + std::to_string(size);
    o.last_modified_ms = 5;
    o.placements = {{"hot", {{"file-" + key + version_id, size}}}};
    return o;
  }
  // An upload of key "mp" in progress with one part of `size` bytes on hot.
  void UploadWithPart(const std::string& id, std::uint64_t size) {
    UploadRecord upload;
    upload.upload_id = UploadId(id);
    upload.object = Obj("mp", "null", 0);
    ASSERT_TRUE(index_->CreateUpload(upload).ok());
    PartRecord p{1, size, "e", 0, {}, "hot", "loc-" + id};
    ASSERT_TRUE(index_->PutPart(BucketName("b"), ObjectKey("mp"), UploadId(id), p).ok());
  }
  void Put(const ObjectRecord& o) {
    auto put = index_->PutObject(o);
    ASSERT_TRUE(put.ok()) << put.error().message;
  }
  // (bucket/tier) -> (objects, bytes).
  std::map<std::string, Counts> Usage() {
    auto rows = index_->Usage();
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::map<std::string, Counts> out;
    if (rows.ok()) {
      for (const auto& row : *rows) {
        out[row.bucket.str() + "/" + row.tier] = {row.objects, row.bytes};
      }
    }
    return out;
  }
};

TEST_F(UsageIndexTest, PutsOverwritesAndDeletesMoveTheCounters) {
  EXPECT_TRUE(Usage().empty());
  Put(Obj("a", "null", 10));
  Put(Obj("b", "null", 5));
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {2, 15}}}));
  Put(Obj("a", "null", 30));  // replaces a's 10 bytes
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {2, 35}}}));
  ASSERT_TRUE(index_->DeleteObject(BucketName("b"), ObjectKey("a")).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 5}}}));
  ASSERT_TRUE(index_->DeleteObject(BucketName("b"), ObjectKey("b")).ok());
  EXPECT_TRUE(Usage().empty());
}

TEST_F(UsageIndexTest, VersionsEachCountAndDeleteMarkersDoNot) {
  Put(Obj("k", "v1", 10));
  Put(Obj("k", "v2", 20));
  ObjectRecord marker = Obj("k", "v3", 0);
  marker.delete_marker = true;
  marker.placements.clear();
  Put(marker);
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {2, 30}}}));
  ASSERT_TRUE(index_->DeleteVersion(BucketName("b"), ObjectKey("k"), VersionId("v1")).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 20}}}));
  ASSERT_TRUE(index_->DeleteVersion(BucketName("b"), ObjectKey("k"), VersionId("v3")).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 20}}}));
}

TEST_F(UsageIndexTest, PlacementChangesMoveBytesBetweenTiers) {
  const ObjectRecord o = Obj("k", "null", 10);
  Put(o);
  // Written back: the upstream holds it too.
  UpstreamCopy copy{o.version_id, o.etag, o.last_modified_ms, {"cold", {{"etag", 10}}}, false};
  auto recorded = index_->RecordUpstreamCopy(o.bucket, o.key, copy);
  ASSERT_TRUE(recorded.ok() && *recorded);
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/cold", {1, 10}}, {"b/hot", {1, 10}}}));
  // Moved to warm, then evicted: only the upstream copy is left.
  const Placement hot = o.placements[0];
  Placement warm = hot;
  warm.tier = "warm";
  auto moved = index_->ChangeVersion(o.bucket, o.key,
                                     VersionChange{.version_id = o.version_id,
                                                   .etag = o.etag,
                                                   .last_modified_ms = o.last_modified_ms,
                                                   .edits = {ReplacePlacement{hot, warm}}});
  ASSERT_TRUE(moved.ok() && moved->written);
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/cold", {1, 10}}, {"b/warm", {1, 10}}}));
  auto evicted =
      index_->ChangeVersion(o.bucket, o.key,
                            VersionChange{.version_id = o.version_id,
                                          .etag = o.etag,
                                          .last_modified_ms = o.last_modified_ms,
                                          .requires_placement_on = "cold",
                                          .edits = {RemovePlacementsOn{{"hot", "warm"}}}});
  ASSERT_TRUE(evicted.ok() && evicted->written);
  ASSERT_EQ(evicted->removed.size(), 1u);
  EXPECT_EQ(evicted->removed[0].tier, "warm");
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/cold", {1, 10}}}));
  // Dropped as a stale cached copy: nothing is left.
  auto dropped = index_->DropCleanVersion(o.bucket, o.key, copy);
  ASSERT_TRUE(dropped.ok() && dropped->has_value());
  EXPECT_TRUE(Usage().empty());
}

TEST_F(UsageIndexTest, PartsCountBytesUntilCompletedOrAborted) {
  UploadRecord upload;
  upload.upload_id = UploadId("u1");
  upload.object = Obj("mp", "null", 0);
  upload.object.placements.clear();
  ASSERT_TRUE(index_->CreateUpload(upload).ok());
  auto part = [](std::uint32_t number, std::uint64_t size) {
    PartRecord p;
    p.number = number;
    p.size = size;
    p.etag = "p" + std::to_string(number);
    p.tier = "hot";
    p.location = "part-" + std::to_string(number) + "-" + std::to_string(size);
    return p;
  };
  ASSERT_TRUE(index_->PutPart(BucketName("b"), ObjectKey("mp"), UploadId("u1"), part(1, 8)).ok());
  ASSERT_TRUE(index_->PutPart(BucketName("b"), ObjectKey("mp"), UploadId("u1"), part(2, 4)).ok());
  ASSERT_TRUE(index_->PutPart(BucketName("b"), ObjectKey("mp"), UploadId("u1"), part(2, 6)).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {0, 14}}}));
  UploadCompletion completion{UploadId("u1"), upload.object, {{1, "hot", "part-1-8"}}};
  completion.object.version_id = VersionId("null");
  completion.object.etag = "mpu-1";
  completion.object.placements = {{"hot", {{"part-1-8", 8}}}};  // part 2 unused
  completion.object.size = 8;
  auto done = index_->CompleteUpload(BucketName("b"), ObjectKey("mp"), completion);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 8}}}));

  upload.upload_id = UploadId("u2");
  ASSERT_TRUE(index_->CreateUpload(upload).ok());
  ASSERT_TRUE(index_->PutPart(BucketName("b"), ObjectKey("mp"), UploadId("u2"), part(1, 3)).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 11}}}));
  ASSERT_TRUE(index_->AbortUpload(BucketName("b"), ObjectKey("mp"), UploadId("u2")).ok());
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 8}}}));
}

TEST_F(UsageIndexTest, CountersSurviveReopenAndGoWithTheirBucket) {
  Put(Obj("k", "null", 10));
  UploadWithPart("u1", 4);
  Reopen();
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 14}}}));
  ASSERT_TRUE(index_->DeleteObject(BucketName("b"), ObjectKey("k")).ok());
  ASSERT_TRUE(index_->DeleteBucket(BucketName("b")).ok());  // drops the upload
  EXPECT_TRUE(Usage().empty());
  // A new bucket of the same name starts from zero.
  ASSERT_TRUE(index_->CreateBucket({BucketName("b"), "alice", 1, ""}).ok());
  Put(Obj("k", "null", 3));
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {1, 3}}}));
}

TEST_F(UsageIndexTest, AnIndexWithoutCountersIsCountedAtOpen) {
  Put(Obj("a", "null", 10));
  Put(Obj("b", "v1", 7));
  Put(Obj("b", "v2", 1));
  UploadWithPart("u1", 4);
  const auto expected = Usage();
  ASSERT_EQ(expected, (std::map<std::string, Counts>{{"b/hot", {3, 22}}}));
  index_.reset();

  // What an index written by an older strata looks like: no usage family at all.
  {
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir_.string(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) {
      // The WAL holds the counters' merges: replaying them needs the operator.
      rocksdb::ColumnFamilyOptions options;
      options.merge_operator = NewUsageMergeOperator();
      descriptors.emplace_back(name, options);
    }
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(
        rocksdb::DB::Open(rocksdb::DBOptions(), dir_.string(), descriptors, &handles, &raw).ok());
    for (auto* handle : handles) {
      if (handle->GetName() == "usage") {
        ASSERT_TRUE(raw->DropColumnFamily(handle).ok());
      }
      ASSERT_TRUE(raw->DestroyColumnFamilyHandle(handle).ok());
    }
    delete raw;
  }
  Reopen();
  EXPECT_EQ(Usage(), expected);
  Reopen();  // counted once: the marker stays
  EXPECT_EQ(Usage(), expected);
  Put(Obj("c", "null", 2));
  EXPECT_EQ(Usage(), (std::map<std::string, Counts>{{"b/hot", {4, 24}}}));
}

}  // namespace
}  // namespace strata::metadata
