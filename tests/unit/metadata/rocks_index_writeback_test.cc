// The write-back queue of RocksIndex: items staged with the changes of upstream-bound
// buckets (never of local ones), coalescing, finishing only the change that was pushed,
// failures recorded, read-through fills refused while a change waits, totals at reopen.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "metadata/codec.h"
#include "metadata/index.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

namespace fs = std::filesystem;

class WritebackQueueTest : public testing::IndexFixture {
 protected:
  void SetUp() override {
    IndexFixture::SetUp();
    BucketRecord bound{BucketName("bound"), "alice", 1, ""};
    bound.upstream_tier = "cold";
    bound.upstream_bucket = "bound";
    ASSERT_TRUE(index_->CreateBucket(bound).ok());
    ASSERT_TRUE(index_->CreateBucket({BucketName("local"), "alice", 1, ""}).ok());
  }
  static ObjectRecord Obj(const std::string& bucket, const std::string& key, std::uint64_t size,
                          const std::string& etag) {
    ObjectRecord o;
    o.bucket = BucketName(bucket);
    o.key = ObjectKey(key);
    o.version_id = VersionId("null");
    o.etag = etag;
    o.size = size;
    o.last_modified_ms = 1000 + static_cast<std::int64_t>(size);
    o.placements = {{"hot", {{"id-" + etag, size}}}};
    return o;
  }
  std::optional<WritebackItem> Item(const std::string& bucket, const std::string& key) {
    auto item = index_->GetWriteback(BucketName(bucket), ObjectKey(key));
    EXPECT_TRUE(item.ok());
    return item.ok() ? *item : std::nullopt;
  }
  static UpstreamCopy CopyOf(const ObjectRecord& o) {
    return {o.version_id, o.etag, o.last_modified_ms, {"cold", {{o.etag, o.size}}}};
  }
};

TEST_F(WritebackQueueTest, OnlyBoundBucketsQueue) {
  ASSERT_TRUE(index_->PutObject(Obj("local", "k", 10, "a")).ok());
  EXPECT_FALSE(Item("local", "k").has_value());
  ASSERT_TRUE(index_->PutObject(Obj("bound", "k", 10, "a")).ok());
  auto item = Item("bound", "k");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->bytes, 10u);
  EXPECT_EQ(item->attempts, 0u);
  EXPECT_GT(item->enqueued_ms, 0);
  EXPECT_EQ(index_->WritebackBacklog().objects, 1u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 10u);
}

TEST_F(WritebackQueueTest, OverwritesCoalesceIntoOneItem) {
  ASSERT_TRUE(index_->PutObject(Obj("bound", "k", 10, "a")).ok());
  auto first = Item("bound", "k");
  ASSERT_TRUE(index_->PutObject(Obj("bound", "k", 25, "b")).ok());
  auto second = Item("bound", "k");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->enqueued_ms, first->enqueued_ms);  // the delay runs from the first
  EXPECT_GT(second->sequence, first->sequence);
  EXPECT_EQ(second->bytes, 25u);
  EXPECT_EQ(index_->WritebackBacklog().objects, 1u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 25u);
}

TEST_F(WritebackQueueTest, FinishRemovesOnlyThePushedChangeAndMarksTheVersionClean) {
  auto v1 = Obj("bound", "k", 10, "a");
  ASSERT_TRUE(index_->PutObject(v1).ok());
  auto pushed = Item("bound", "k");
  ASSERT_TRUE(pushed);

  // A newer change lands while v1 is being pushed: the item stays for it.
  auto v2 = Obj("bound", "k", 20, "b");
  ASSERT_TRUE(index_->PutObject(v2).ok());
  auto finished = index_->FinishWriteback(*pushed, CopyOf(v1));
  ASSERT_TRUE(finished.ok());
  EXPECT_FALSE(*finished);
  ASSERT_TRUE(Item("bound", "k").has_value());
  auto current = index_->GetObject(BucketName("bound"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->placements.size(), 1u) << "v2 is not what was pushed";

  auto latest = Item("bound", "k");
  finished = index_->FinishWriteback(*latest, CopyOf(v2));
  ASSERT_TRUE(finished.ok());
  EXPECT_TRUE(*finished);
  EXPECT_FALSE(Item("bound", "k").has_value());
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 0u);
  current = index_->GetObject(BucketName("bound"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  ASSERT_EQ(current->placements.size(), 2u);
  EXPECT_EQ(current->placements[1].tier, "cold");
  EXPECT_EQ(current->placements[1].extents[0].location, "b");
}

TEST_F(WritebackQueueTest, DeletesQueueEvenForKeysTheIndexNeverHad) {
  // The upstream may hold a key strata never read through: the delete must reach it.
  ASSERT_TRUE(index_->DeleteObject(BucketName("bound"), ObjectKey("only-upstream")).ok());
  auto item = Item("bound", "only-upstream");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->bytes, 0u);
  ASSERT_TRUE(index_->DeleteObject(BucketName("local"), ObjectKey("nothing")).ok());
  EXPECT_FALSE(Item("local", "nothing").has_value());
}

TEST_F(WritebackQueueTest, DeferRecordsTheFailureUnlessANewerChangeCame) {
  ASSERT_TRUE(index_->PutObject(Obj("bound", "k", 10, "a")).ok());
  auto item = Item("bound", "k");
  ASSERT_TRUE(index_->DeferWriteback(*item, 5000, "NoSuchBucket: gone").ok());
  auto failed = Item("bound", "k");
  EXPECT_EQ(failed->attempts, 1u);
  EXPECT_EQ(failed->retry_ms, 5000);
  EXPECT_EQ(failed->last_error, "NoSuchBucket: gone");

  // A new change starts afresh, and a late failure report of the old one changes nothing.
  ASSERT_TRUE(index_->PutObject(Obj("bound", "k", 11, "b")).ok());
  auto fresh = Item("bound", "k");
  EXPECT_EQ(fresh->attempts, 0u);
  EXPECT_EQ(fresh->retry_ms, 0);
  ASSERT_TRUE(index_->DeferWriteback(*failed, 9000, "late").ok());
  EXPECT_EQ(Item("bound", "k")->attempts, 0u);
}

TEST_F(WritebackQueueTest, CleanFillIsRefusedWhileAChangeWaits) {
  ASSERT_TRUE(index_->DeleteObject(BucketName("bound"), ObjectKey("k")).ok());
  auto fill = Obj("bound", "k", 10, "up");
  fill.placements.push_back({"cold", {{"up", 10}}});
  auto put = index_->PutObject(fill, WriteCondition{.if_absent = true, .if_etag = std::nullopt});
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kPreconditionFailed);

  // With nothing waiting the fill goes in, and queues nothing: it is the upstream's copy.
  auto item = Item("bound", "k");
  ASSERT_TRUE(index_->FinishWriteback(*item, std::nullopt).ok());
  put = index_->PutObject(fill, WriteCondition{.if_absent = true, .if_etag = std::nullopt});
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_FALSE(Item("bound", "k").has_value());
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u);
}

TEST_F(WritebackQueueTest, QueueAndTotalsSurviveReopen) {
  ASSERT_TRUE(index_->PutObject(Obj("bound", "a", 10, "a")).ok());
  ASSERT_TRUE(index_->PutObject(Obj("bound", "b", 32, "b")).ok());
  ASSERT_TRUE(index_->DeleteObject(BucketName("bound"), ObjectKey("c")).ok());
  Reopen();
  EXPECT_EQ(index_->WritebackBacklog().objects, 3u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 42u);
  std::vector<std::string> keys;
  ASSERT_TRUE(index_
                  ->ScanWriteback([&](const WritebackItem& item) {
                    keys.push_back(item.bucket.str() + "/" + item.key.str());
                    return true;
                  })
                  .ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"bound/a", "bound/b", "bound/c"}));
}

// A versioned bound bucket: every version goes up, oldest first, and versions deleted by
// id after they went up are deleted upstream too.
class VersionedWritebackTest : public WritebackQueueTest {
 protected:
  void SetUp() override {
    WritebackQueueTest::SetUp();
    ASSERT_TRUE(index_->SetBucketVersioning(BucketName("bound"), "Enabled").ok());
  }
  static ObjectRecord Version(const std::string& id, std::uint64_t size, const std::string& etag) {
    ObjectRecord o = Obj("bound", "k", size, etag);
    o.version_id = VersionId(id);
    return o;
  }
  static ObjectRecord Marker(const std::string& id) {
    ObjectRecord o = Version(id, 0, "");
    o.delete_marker = true;
    o.placements.clear();
    return o;
  }
  static UpstreamCopy Pushed(const ObjectRecord& o, const std::string& upstream_id) {
    UpstreamCopy copy = CopyOf(o);
    copy.delete_marker = o.delete_marker;
    copy.placement.extents = {{EncodeUpstreamLocation({o.etag, upstream_id}), o.size}};
    return copy;
  }
  std::vector<std::string> Unpushed(std::size_t max) {
    auto versions = index_->UnpushedVersions(BucketName("bound"), ObjectKey("k"), "cold", max);
    EXPECT_TRUE(versions.ok());
    std::vector<std::string> ids;
    for (const auto& v : versions.ok() ? *versions : std::vector<ObjectRecord>{}) {
      ids.push_back(v.version_id.str());
    }
    return ids;
  }
};

TEST_F(VersionedWritebackTest, EveryVersionWaitsOldestFirstAndTheItemCountsThemAll) {
  const auto v1 = Version("v1", 10, "a"), v2 = Version("v2", 20, "b");
  const auto marker = Marker("v3");
  ASSERT_TRUE(index_->PutObject(v1).ok());
  ASSERT_TRUE(index_->PutObject(v2).ok());
  ASSERT_TRUE(index_->PutObject(marker).ok());
  EXPECT_EQ(Unpushed(10), (std::vector<std::string>{"v1", "v2", "v3"}));
  EXPECT_EQ(Unpushed(2), (std::vector<std::string>{"v1", "v2"}));  // the oldest ones
  EXPECT_EQ(Item("bound", "k")->bytes, 30u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 30u);

  // Each version is recorded as it lands; a marker too.
  auto recorded = index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(v1, "u1"));
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(*recorded);
  EXPECT_EQ(Unpushed(10), (std::vector<std::string>{"v2", "v3"}));
  ASSERT_TRUE(
      index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(v2, "u2")).ok());
  recorded = index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(marker, "u3"));
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(*recorded);
  EXPECT_TRUE(Unpushed(10).empty());
  // A copy that names a version as something it is not (a marker as an object) is ignored.
  auto wrong = Pushed(marker, "u3");
  wrong.delete_marker = false;
  recorded = index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), wrong);
  ASSERT_TRUE(recorded.ok());
  EXPECT_FALSE(*recorded);
  // The item stays until the worker finishes it.
  EXPECT_TRUE(Item("bound", "k").has_value());
}

TEST_F(VersionedWritebackTest, DeletingAPushedVersionQueuesItsUpstreamDelete) {
  const auto v1 = Version("v1", 10, "a"), v2 = Version("v2", 20, "b");
  ASSERT_TRUE(index_->PutObject(v1).ok());
  ASSERT_TRUE(index_->PutObject(v2).ok());
  ASSERT_TRUE(
      index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(v1, "u1")).ok());
  ASSERT_TRUE(index_->FinishWriteback(*Item("bound", "k"), std::nullopt).ok());
  ASSERT_FALSE(Item("bound", "k").has_value());

  // v1 is upstream as u1: deleting it by id must delete u1 there. v2 never went up.
  ASSERT_TRUE(index_->DeleteVersion(BucketName("bound"), ObjectKey("k"), VersionId("v1")).ok());
  ASSERT_TRUE(index_->DeleteVersion(BucketName("bound"), ObjectKey("k"), VersionId("v2")).ok());
  auto item = Item("bound", "k");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->upstream_deletes, (std::vector<std::string>{"u1"}));
  EXPECT_TRUE(Unpushed(10).empty());

  // A version pushed while the upstream kept no versions is its "null" version.
  const auto v3 = Version("v3", 5, "c");
  ASSERT_TRUE(index_->PutObject(v3).ok());
  ASSERT_TRUE(index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(v3, "")).ok());
  ASSERT_TRUE(index_->DeleteVersion(BucketName("bound"), ObjectKey("k"), VersionId("v3")).ok());
  EXPECT_EQ(Item("bound", "k")->upstream_deletes, (std::vector<std::string>{"u1", "null"}));

  // A marker the upstream made no version for (it named none) deletes nothing there.
  const auto marker = Marker("v4");
  ASSERT_TRUE(index_->PutObject(marker).ok());
  ASSERT_TRUE(
      index_->RecordUpstreamCopy(BucketName("bound"), ObjectKey("k"), Pushed(marker, "")).ok());
  ASSERT_TRUE(index_->DeleteVersion(BucketName("bound"), ObjectKey("k"), VersionId("v4")).ok());
  EXPECT_EQ(Item("bound", "k")->upstream_deletes, (std::vector<std::string>{"u1", "null"}));
}

TEST(UpstreamLocationTest, EtagAloneOrWithItsVersion) {
  EXPECT_EQ(EncodeUpstreamLocation({"abc", ""}), "abc");
  EXPECT_EQ(EncodeUpstreamLocation({"abc-2", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY"}),
            "abc-2\n3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY");
  auto plain = DecodeUpstreamLocation("abc");
  EXPECT_EQ(plain.etag, "abc");
  EXPECT_EQ(plain.version_id, "");
  auto versioned = DecodeUpstreamLocation("\nu1");  // a delete marker has no ETag
  EXPECT_EQ(versioned.etag, "");
  EXPECT_EQ(versioned.version_id, "u1");
}

TEST(WritebackCodecTest, RoundTripAndGarbage) {
  WritebackItem item;
  item.sequence = 1ull << 40;
  item.enqueued_ms = 1234567;
  item.bytes = 99;
  item.attempts = 3;
  item.retry_ms = -1;
  item.last_error = "SlowDown";
  item.upstream_deletes = {"u1", "null"};
  const std::string bytes = EncodeWriteback(item);
  auto decoded = DecodeWriteback(bytes);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->sequence, item.sequence);
  EXPECT_EQ(decoded->enqueued_ms, item.enqueued_ms);
  EXPECT_EQ(decoded->bytes, item.bytes);
  EXPECT_EQ(decoded->attempts, item.attempts);
  EXPECT_EQ(decoded->retry_ms, item.retry_ms);
  EXPECT_EQ(decoded->last_error, item.last_error);
  EXPECT_EQ(decoded->upstream_deletes, item.upstream_deletes);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeWriteback(std::string_view(bytes).substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(DecodeWriteback(bytes + "x").ok());
  EXPECT_FALSE(DecodeWriteback(std::string("\x09", 1) + bytes.substr(1)).ok());
}

TEST(WritebackCodecTest, FormatOneRowsStillDecode) {
  // What a format-1 build wrote: format, sequence 7, enqueued 5 (zigzag 10), bytes 3,
  // attempts 0, retry 0, no error.
  const std::string v1("\x01\x07\x0a\x03\x00\x00\x00", 7);
  auto decoded = DecodeWriteback(v1);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->sequence, 7u);
  EXPECT_EQ(decoded->bytes, 3u);
  EXPECT_TRUE(decoded->upstream_deletes.empty());
}

TEST(WritebackCodecTest, BucketBindingRoundTrips) {
  BucketRecord b{BucketName("bkt"), "o", 1, ""};
  b.upstream_tier = "cold";
  b.upstream_bucket = "bkt";
  auto decoded = DecodeBucket(EncodeBucket(b));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->upstream_tier, "cold");
  EXPECT_EQ(decoded->upstream_bucket, "bkt");
}

}  // namespace
}  // namespace strata::metadata
