// RocksIndex::ReplaceKeyVersions, a cluster replica's write: the key's stack becomes the
// primary's exactly (order, ids, records), whatever it held before; usage follows; later
// writes still land on top; the primary's write-back item and the key's lifecycle due
// time are queued; bad input changes nothing.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "metadata/index.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

class ReplicaIndexTest : public testing::IndexFixture {
 protected:
  void SetUp() override {
    IndexFixture::SetUp();
    if (HasFatalFailure()) {
      return;
    }
    BucketRecord bucket{BucketName("b"), "alice", 1, ""};
    bucket.versioning = "Enabled";
    ASSERT_TRUE(index_->CreateBucket(bucket).ok());
  }

  static ObjectRecord Version(const std::string& id, std::uint64_t size, bool marker = false) {
    ObjectRecord o;
    o.bucket = BucketName("b");
    o.key = ObjectKey("k");
    o.version_id = VersionId(id);
    o.delete_marker = marker;
    o.size = marker ? 0 : size;
    o.etag = marker ? "" : "etag-" + id;
    o.last_modified_ms = static_cast<std::int64_t>(size);
    if (!marker) {
      o.placements = {{"hot", {{"file-" + id, size}}}};
    }
    return o;
  }
  std::vector<std::string> Ids() {
    auto versions = index_->KeyVersions(BucketName("b"), ObjectKey("k"), 100);
    EXPECT_TRUE(versions.ok());
    std::vector<std::string> ids;
    for (const auto& v : *versions) {
      ids.push_back(v.version_id.str() + (v.delete_marker ? "*" : ""));
    }
    return ids;
  }
  std::int64_t Bytes() {
    auto rows = index_->Usage();
    EXPECT_TRUE(rows.ok());
    std::int64_t bytes = 0;
    for (const auto& row : *rows) {
      bytes += row.bytes;
    }
    return bytes;
  }
};

TEST_F(ReplicaIndexTest, TheStackBecomesThePrimarysInItsOrder) {
  ASSERT_TRUE(index_->PutObject(Version("old", 7)).ok());
  ASSERT_TRUE(index_->PutObject(Version("gone", 5)).ok());
  auto replaced = index_->ReplaceKeyVersions(
      BucketName("b"), ObjectKey("k"),
      {Version("v3", 30), Version("m", 0, true), Version("old", 7)}, std::nullopt);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  ASSERT_EQ(replaced->size(), 2u);
  EXPECT_EQ((*replaced)[0].version_id.str(), "gone");  // newest first, as stored
  EXPECT_EQ((*replaced)[1].version_id.str(), "old");
  EXPECT_EQ(Ids(), (std::vector<std::string>{"v3", "m*", "old"}));
  EXPECT_EQ(Bytes(), 37);

  // A later write still lands on top of the replaced stack.
  ASSERT_TRUE(index_->PutObject(Version("v4", 40)).ok());
  EXPECT_EQ(Ids(), (std::vector<std::string>{"v4", "v3", "m*", "old"}));
  auto current = index_->GetObject(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->version_id.str(), "v4");
  EXPECT_EQ(Bytes(), 77);
}

TEST_F(ReplicaIndexTest, AnEmptyListRemovesTheKeyAndSurvivesAReopen) {
  ASSERT_TRUE(index_->PutObject(Version("a", 3)).ok());
  ASSERT_TRUE(index_->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"), {}, std::nullopt).ok());
  EXPECT_TRUE(Ids().empty());
  EXPECT_EQ(Bytes(), 0);
  ASSERT_TRUE(index_
                  ->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"),
                                       {Version("b2", 2), Version("b1", 1)}, std::nullopt)
                  .ok());
  Reopen();
  EXPECT_EQ(Ids(), (std::vector<std::string>{"b2", "b1"}));
  EXPECT_EQ(Bytes(), 3);
}

TEST_F(ReplicaIndexTest, ThePrimarysWritebackItemIsMirrored) {
  // A bound bucket: the replica's item becomes the primary's (its own sequence, none of
  // the primary's failures), the backlog counts it, and a sync without one removes it.
  BucketRecord bound{BucketName("up"), "alice", 1, ""};
  bound.upstream_tier = "cold";
  bound.upstream_bucket = "up";
  ASSERT_TRUE(index_->CreateBucket(bound).ok());
  ObjectRecord v = Version("null", 4);
  v.bucket = BucketName("up");
  WritebackItem primarys;
  primarys.sequence = 999'999;
  primarys.enqueued_ms = 12345;
  primarys.bytes = 4;
  primarys.attempts = 3;
  primarys.retry_ms = 99;
  primarys.last_error = "upstream down";
  ASSERT_TRUE(index_->ReplaceKeyVersions(BucketName("up"), ObjectKey("k"), {v}, primarys).ok());
  auto waiting = index_->GetWriteback(BucketName("up"), ObjectKey("k"));
  ASSERT_TRUE(waiting.ok());
  ASSERT_TRUE(waiting->has_value());
  EXPECT_EQ((*waiting)->enqueued_ms, 12345);
  EXPECT_EQ((*waiting)->bytes, 4u);
  EXPECT_EQ((*waiting)->attempts, 0u);
  EXPECT_EQ((*waiting)->retry_ms, 0);
  EXPECT_NE((*waiting)->sequence, 999'999u);
  EXPECT_EQ(index_->WritebackBacklog().objects, 1u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 4u);

  // Again with the same item: still one.
  ASSERT_TRUE(index_->ReplaceKeyVersions(BucketName("up"), ObjectKey("k"), {v}, primarys).ok());
  EXPECT_EQ(index_->WritebackBacklog().objects, 1u);

  // The primary pushed it: the next sync carries no item, and the replica's goes.
  ASSERT_TRUE(index_->ReplaceKeyVersions(BucketName("up"), ObjectKey("k"), {v}, std::nullopt).ok());
  waiting = index_->GetWriteback(BucketName("up"), ObjectKey("k"));
  ASSERT_TRUE(waiting.ok());
  EXPECT_FALSE(waiting->has_value());
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u);
  EXPECT_EQ(index_->WritebackBacklog().bytes, 0u);

  // A bucket without an upstream queues nothing, whatever the primary sends.
  ObjectRecord plain = Version("v1", 2);
  ASSERT_TRUE(index_->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"), {plain}, primarys).ok());
  waiting = index_->GetWriteback(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(waiting.ok());
  EXPECT_FALSE(waiting->has_value());
}

TEST_F(ReplicaIndexTest, TheKeysLifecycleDueTimeIsQueued) {
  // A replica keeps the key's due row, for the day it becomes the key's primary.
  LifecycleRule rule;
  rule.id = "expire";
  rule.expiration_days = 1;
  ASSERT_TRUE(index_->SetBucketLifecycle(BucketName("b"), {rule}).ok());
  ASSERT_TRUE(
      index_->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"), {Version("v1", 5)}, std::nullopt)
          .ok());
  auto due = index_->DueLifecycleRows(std::numeric_limits<std::int64_t>::max(), 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].bucket, "b");
  EXPECT_EQ((*due)[0].key, "k");
}

TEST_F(ReplicaIndexTest, BadInputChangesNothing) {
  ASSERT_TRUE(index_->PutObject(Version("a", 3)).ok());
  ObjectRecord other = Version("x", 1);
  other.key = ObjectKey("other");
  auto refused = index_->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"), {other}, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  refused = index_->ReplaceKeyVersions(BucketName("b"), ObjectKey("k"),
                                       {Version("d", 1), Version("d", 2)}, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  ObjectRecord elsewhere = Version("y", 1);
  elsewhere.bucket = BucketName("nope");
  refused =
      index_->ReplaceKeyVersions(BucketName("nope"), ObjectKey("k"), {elsewhere}, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(Ids(), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace strata::metadata
