// Lifecycle in RocksIndex: rules stored with the bucket and a reseed marked in the same
// batch, due rows queued with the changes that make them due (object writes, version
// deletes, new uploads), the queue read earliest first, and the conditional writes the
// lifecycle worker relies on (DeleteVersion by time, if_newest, ChangeVersion).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metadata/index.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

// Days of one second keep due times small and their rounding easy to follow.
constexpr std::int64_t kDay = 1000;
constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

class LifecycleIndexTest : public testing::IndexFixture {
 protected:
  void SetUp() override {
    IndexFixture::SetUp();
    if (HasFatalFailure()) {
      return;
    }
    OpenWithShortDays();
    if (HasFatalFailure()) {
      return;
    }
    ASSERT_TRUE(index_->CreateBucket({BucketName("rules"), "alice", 1, ""}).ok());
    ASSERT_TRUE(index_->CreateBucket({BucketName("plain"), "alice", 1, ""}).ok());
  }
  // The fixture opens with the default day; the same directory again with kDay.
  void OpenWithShortDays() {
    index_.reset();
    auto opened = Index::Open(dir_.string(), IndexOptions{.sync = false, .lifecycle_day_ms = kDay});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    index_ = std::move(opened).value();
  }

  static ObjectRecord Obj(const std::string& bucket, const std::string& key,
                          const std::string& version_id, std::int64_t modified_ms) {
    ObjectRecord o;
    o.bucket = BucketName(bucket);
    o.key = ObjectKey(key);
    o.version_id = VersionId(version_id);
    o.size = 10;
    o.etag = "etag-" + version_id + "-" + std::to_string(modified_ms);
    o.last_modified_ms = modified_ms;
    o.placements = {{"hot", {{"file-" + version_id, 10}}}};
    return o;
  }
  static UploadRecord Upload(const std::string& bucket, const std::string& key,
                             const std::string& upload_id, std::int64_t initiated_ms) {
    UploadRecord u;
    u.upload_id = UploadId(upload_id);
    u.initiated_ms = initiated_ms;
    u.owner = "alice";
    u.object.bucket = BucketName(bucket);
    u.object.key = ObjectKey(key);
    return u;
  }
  static LifecycleRule ExpireAfter(std::int64_t days) {
    LifecycleRule rule;
    rule.id = "expire-" + std::to_string(days);
    rule.expiration_days = days;
    return rule;
  }

  void SetRules(const std::string& bucket, const std::vector<LifecycleRule>& rules) {
    auto set = index_->SetBucketLifecycle(BucketName(bucket), rules);
    ASSERT_TRUE(set.ok()) << set.error().message;
  }
  std::vector<LifecycleRow> Due(std::int64_t now_ms, std::size_t max = 100) {
    auto rows = index_->DueLifecycleRows(now_ms, max);
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    return rows.ok() ? *rows : std::vector<LifecycleRow>{};
  }
  std::vector<LifecycleReseed> Reseeds() {
    auto reseeds = index_->LifecycleReseeds();
    EXPECT_TRUE(reseeds.ok()) << reseeds.error().message;
    return reseeds.ok() ? *reseeds : std::vector<LifecycleReseed>{};
  }
  static void ExpectRow(const LifecycleRow& row, std::int64_t due_ms, const std::string& bucket,
                        const std::string& key, const std::string& upload_id) {
    EXPECT_EQ(row.due_ms, due_ms);
    EXPECT_EQ(row.bucket, bucket);
    EXPECT_EQ(row.key, key);
    EXPECT_EQ(row.upload_id, upload_id);
  }
};

TEST_F(LifecycleIndexTest, SetLifecycleOfAMissingBucketFails) {
  auto set = index_->SetBucketLifecycle(BucketName("missing"), {ExpireAfter(1)});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().code, ErrorCode::kNoSuchBucket);
  EXPECT_TRUE(Reseeds().empty());
}

TEST_F(LifecycleIndexTest, SetLifecycleStoresRulesAndMarksAReseed) {
  LifecycleRule rule = ExpireAfter(3);
  rule.filter.prefix = "logs/";
  SetRules("rules", {rule});

  auto bucket = index_->GetBucket(BucketName("rules"));
  ASSERT_TRUE(bucket.ok()) << bucket.error().message;
  ASSERT_EQ(bucket->lifecycle.size(), 1u);
  EXPECT_EQ(bucket->lifecycle[0].id, "expire-3");
  EXPECT_EQ(bucket->lifecycle[0].filter.prefix, std::optional<std::string>("logs/"));
  EXPECT_EQ(bucket->lifecycle[0].expiration_days, std::optional<std::int64_t>(3));
  EXPECT_EQ(bucket->owner, "alice");  // the rest of the record is left alone

  auto reseeds = Reseeds();
  ASSERT_EQ(reseeds.size(), 1u);
  EXPECT_EQ(reseeds[0].bucket, BucketName("rules"));
  EXPECT_FALSE(reseeds[0].token.empty());

  // Rules and mark are durable.
  OpenWithShortDays();
  bucket = index_->GetBucket(BucketName("rules"));
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->lifecycle.size(), 1u);
  auto reopened = Reseeds();
  ASSERT_EQ(reopened.size(), 1u);
  EXPECT_EQ(reopened[0].token, reseeds[0].token);

  ASSERT_TRUE(index_->FinishReseed(reseeds[0]).ok());
  EXPECT_TRUE(Reseeds().empty());
  // Finishing twice is harmless.
  ASSERT_TRUE(index_->FinishReseed(reseeds[0]).ok());

  // Empty rules remove them.
  SetRules("rules", {});
  bucket = index_->GetBucket(BucketName("rules"));
  ASSERT_TRUE(bucket.ok());
  EXPECT_TRUE(bucket->lifecycle.empty());
}

TEST_F(LifecycleIndexTest, StaleFinishReseedKeepsTheNewerMark) {
  SetRules("rules", {ExpireAfter(1)});
  auto first = Reseeds();
  ASSERT_EQ(first.size(), 1u);
  SetRules("rules", {ExpireAfter(2)});
  auto second = Reseeds();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(first[0].token, second[0].token);

  // The worker finished reseeding under the first rules: the second change still needs one.
  ASSERT_TRUE(index_->FinishReseed(first[0]).ok());
  auto left = Reseeds();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].token, second[0].token);

  ASSERT_TRUE(index_->FinishReseed(second[0]).ok());
  EXPECT_TRUE(Reseeds().empty());
}

TEST_F(LifecycleIndexTest, ReseedMarksArePerBucket) {
  SetRules("rules", {ExpireAfter(1)});
  SetRules("plain", {ExpireAfter(1)});
  auto reseeds = Reseeds();
  ASSERT_EQ(reseeds.size(), 2u);
  ASSERT_TRUE(index_->FinishReseed(reseeds[0]).ok());
  auto left = Reseeds();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].bucket, reseeds[1].bucket);
}

TEST_F(LifecycleIndexTest, PutObjectQueuesTheKeyAtItsDueTime) {
  SetRules("rules", {ExpireAfter(2)});
  EXPECT_TRUE(Due(kForever).empty());
  ASSERT_TRUE(index_->PutObject(Obj("rules", "k", "null", 1500)).ok());

  // 1500 + two days = 3500, rounded up to the day boundary at 4000.
  EXPECT_TRUE(Due(3999).empty());
  auto rows = Due(4000);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 4000, "rules", "k", "");
  EXPECT_EQ(Due(kForever).size(), 1u);
}

TEST_F(LifecycleIndexTest, RowsComeEarliestFirstAndMaxIsRespected) {
  SetRules("rules", {ExpireAfter(2)});
  ASSERT_TRUE(index_->PutObject(Obj("rules", "a", "null", 5500)).ok());  // due 8000
  ASSERT_TRUE(index_->PutObject(Obj("rules", "b", "null", 1500)).ok());  // due 4000
  ASSERT_TRUE(index_->PutObject(Obj("rules", "c", "null", 3200)).ok());  // due 6000

  auto rows = Due(kForever);
  ASSERT_EQ(rows.size(), 3u);
  ExpectRow(rows[0], 4000, "rules", "b", "");
  ExpectRow(rows[1], 6000, "rules", "c", "");
  ExpectRow(rows[2], 8000, "rules", "a", "");

  rows = Due(kForever, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "b");
  EXPECT_EQ(rows[1].key, "c");
  EXPECT_TRUE(Due(kForever, 0).empty());

  rows = Due(6000);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].key, "c");
}

TEST_F(LifecycleIndexTest, KeysNoRuleSelectsQueueNothing) {
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "null", 1500)).ok());
  EXPECT_TRUE(Due(kForever).empty());

  LifecycleRule logs = ExpireAfter(1);
  logs.filter.prefix = "logs/";
  SetRules("rules", {logs});
  ASSERT_TRUE(index_->PutObject(Obj("rules", "data/x", "null", 1500)).ok());
  EXPECT_TRUE(Due(kForever).empty());
  ASSERT_TRUE(index_->PutObject(Obj("rules", "logs/x", "null", 1500)).ok());
  auto rows = Due(kForever);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 3000, "rules", "logs/x", "");
}

TEST_F(LifecycleIndexTest, UpdateLifecycleRowsAddsAndRemoves) {
  const LifecycleRow key_row{100, "rules", "x", ""};
  const LifecycleRow upload_row{200, "rules", "y", "upload-1"};
  const LifecycleRow later_row{300, "plain", "z", ""};
  ASSERT_TRUE(index_->UpdateLifecycleRows({key_row, upload_row}, {}).ok());
  auto rows = Due(1000);
  ASSERT_EQ(rows.size(), 2u);
  ExpectRow(rows[0], 100, "rules", "x", "");
  ExpectRow(rows[1], 200, "rules", "y", "upload-1");

  ASSERT_TRUE(index_->UpdateLifecycleRows({}, {key_row}).ok());
  rows = Due(1000);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 200, "rules", "y", "upload-1");

  // Both in one call: the worker replaces a handled row by the key's next one.
  ASSERT_TRUE(index_->UpdateLifecycleRows({later_row}, {upload_row}).ok());
  rows = Due(1000);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 300, "plain", "z", "");

  // Removing a row that is not there is no error.
  ASSERT_TRUE(index_->UpdateLifecycleRows({}, {key_row, upload_row}).ok());
  EXPECT_EQ(Due(1000).size(), 1u);
}

TEST_F(LifecycleIndexTest, CreateUploadQueuesItsAbort) {
  LifecycleRule abort;
  abort.id = "abort";
  abort.abort_incomplete_days = 1;
  SetRules("rules", {abort});
  ASSERT_TRUE(index_->CreateUpload(Upload("rules", "big", "upload-1", 1500)).ok());

  // 1500 + one day = 2500, rounded up to 3000.
  EXPECT_TRUE(Due(2999).empty());
  auto rows = Due(3000);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 3000, "rules", "big", "upload-1");

  // No rules, no row.
  ASSERT_TRUE(index_->CreateUpload(Upload("plain", "big", "upload-2", 1500)).ok());
  EXPECT_EQ(Due(kForever).size(), 1u);
  // An upload to a key the rule does not select queues nothing either.
  abort.filter.prefix = "tmp/";
  SetRules("rules", {abort});
  ASSERT_TRUE(index_->CreateUpload(Upload("rules", "big", "upload-3", 1500)).ok());
  EXPECT_EQ(Due(kForever).size(), 1u);
}

TEST_F(LifecycleIndexTest, DeleteVersionWithAnotherTimeRemovesNothing) {
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "v1", 1500)).ok());
  auto stale = index_->DeleteVersion(BucketName("plain"), ObjectKey("k"), VersionId("v1"),
                                     std::optional<std::int64_t>(1499), LockCheck{});
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(index_->GetVersion(BucketName("plain"), ObjectKey("k"), VersionId("v1")).ok());

  auto removed = index_->DeleteVersion(BucketName("plain"), ObjectKey("k"), VersionId("v1"),
                                       std::optional<std::int64_t>(1500), LockCheck{});
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(removed->version_id, VersionId("v1"));
  EXPECT_EQ(removed->last_modified_ms, 1500);
  auto gone = index_->GetVersion(BucketName("plain"), ObjectKey("k"), VersionId("v1"));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

TEST_F(LifecycleIndexTest, DeleteVersionQueuesTheKeyAsItLeavesIt) {
  LifecycleRule markers;
  markers.id = "markers";
  markers.expired_object_delete_marker = true;
  SetRules("rules", {markers});
  ASSERT_TRUE(index_->SetBucketVersioning(BucketName("rules"), "Enabled").ok());
  ASSERT_TRUE(index_->PutObject(Obj("rules", "k", "v1", 1000)).ok());
  ObjectRecord marker = Obj("rules", "k", "dm", 3000);
  marker.delete_marker = true;
  marker.size = 0;
  marker.etag.clear();
  marker.placements.clear();
  ASSERT_TRUE(index_->PutObject(marker).ok());
  // The marker still hides v1: nothing to do.
  EXPECT_TRUE(Due(kForever).empty());

  // With v1 gone the marker is the key's only version: due at once (its own time).
  ASSERT_TRUE(index_->DeleteVersion(BucketName("rules"), ObjectKey("k"), VersionId("v1")).ok());
  auto rows = Due(kForever);
  ASSERT_EQ(rows.size(), 1u);
  ExpectRow(rows[0], 3000, "rules", "k", "");
}

TEST_F(LifecycleIndexTest, IfNewestMustNameTheNewestVersion) {
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "v1", 1000)).ok());

  WriteCondition older_time;
  older_time.if_newest = WriteCondition::Stamp{VersionId("v1"), 999};
  auto put = index_->PutObject(Obj("plain", "k", "v2", 2000), older_time);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kPreconditionFailed);

  WriteCondition other_id;
  other_id.if_newest = WriteCondition::Stamp{VersionId("v0"), 1000};
  put = index_->PutObject(Obj("plain", "k", "v2", 2000), other_id);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kPreconditionFailed);

  auto current = index_->GetObject(BucketName("plain"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->version_id, VersionId("v1"));

  WriteCondition right;
  right.if_newest = WriteCondition::Stamp{VersionId("v1"), 1000};
  put = index_->PutObject(Obj("plain", "k", "v2", 2000), right);
  ASSERT_TRUE(put.ok()) << put.error().message;
  current = index_->GetObject(BucketName("plain"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->version_id, VersionId("v2"));

  // A key without versions has no newest one to match.
  put = index_->PutObject(Obj("plain", "empty", "v1", 1000), right);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kPreconditionFailed);
  EXPECT_FALSE(index_->GetObject(BucketName("plain"), ObjectKey("empty")).ok());
}

TEST_F(LifecycleIndexTest, KeyVersionsAreNewestFirst) {
  ASSERT_TRUE(index_->SetBucketVersioning(BucketName("plain"), "Enabled").ok());
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "v1", 1000)).ok());
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "v2", 2000)).ok());
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k", "v3", 3000)).ok());
  ASSERT_TRUE(index_->PutObject(Obj("plain", "k2", "other", 4000)).ok());

  auto versions = index_->KeyVersions(BucketName("plain"), ObjectKey("k"), 10);
  ASSERT_TRUE(versions.ok()) << versions.error().message;
  ASSERT_EQ(versions->size(), 3u);
  EXPECT_EQ((*versions)[0].version_id, VersionId("v3"));
  EXPECT_EQ((*versions)[1].version_id, VersionId("v2"));
  EXPECT_EQ((*versions)[2].version_id, VersionId("v1"));
  EXPECT_EQ((*versions)[0].bucket, BucketName("plain"));
  EXPECT_EQ((*versions)[0].key, ObjectKey("k"));

  versions = index_->KeyVersions(BucketName("plain"), ObjectKey("k"), 2);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].version_id, VersionId("v3"));
  EXPECT_EQ((*versions)[1].version_id, VersionId("v2"));

  versions = index_->KeyVersions(BucketName("plain"), ObjectKey("none"), 10);
  ASSERT_TRUE(versions.ok());
  EXPECT_TRUE(versions->empty());
}

TEST_F(LifecycleIndexTest, ChangeVersionChangesOnlyClassAndPlacements) {
  ObjectRecord v = Obj("plain", "k", "v1", 1000);
  v.content_type = "text/plain";
  v.user_metadata = {{"color", "green"}};
  v.tags = {{"team", "ml"}};
  ASSERT_TRUE(index_->PutObject(v).ok());

  // A transition to the upstream tier: the local copy swapped for the upstream's.
  const Placement cold{"cold", {{"far-away", v.size}}};
  const VersionChange change{
      .version_id = v.version_id,
      .etag = v.etag,
      .last_modified_ms = v.last_modified_ms,
      .edits = {ReplacePlacement{v.placements[0], cold}, SetStorageClass{"GLACIER"}},
  };
  auto changed = index_->ChangeVersion(BucketName("plain"), ObjectKey("k"), change);
  ASSERT_TRUE(changed.ok()) << changed.error().message;
  EXPECT_TRUE(changed->applied);
  EXPECT_TRUE(changed->written);
  ASSERT_EQ(changed->removed.size(), 1u);
  EXPECT_EQ(changed->removed[0].tier, "hot");
  ASSERT_TRUE(changed->record.has_value());
  EXPECT_EQ(changed->record->storage_class, "GLACIER");

  auto after = index_->GetVersion(BucketName("plain"), ObjectKey("k"), VersionId("v1"));
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->storage_class, "GLACIER");
  ASSERT_EQ(after->placements.size(), 1u);
  EXPECT_EQ(after->placements[0].tier, "cold");
  ASSERT_EQ(after->placements[0].extents.size(), 1u);
  EXPECT_EQ(after->placements[0].extents[0].location, "far-away");
  EXPECT_EQ(after->etag, v.etag);
  EXPECT_EQ(after->size, v.size);
  EXPECT_EQ(after->last_modified_ms, v.last_modified_ms);
  EXPECT_EQ(after->version_id, v.version_id);
  EXPECT_FALSE(after->delete_marker);
  EXPECT_EQ(after->content_type, v.content_type);
  EXPECT_EQ(after->user_metadata, v.user_metadata);
  EXPECT_EQ(after->tags, v.tags);
  EXPECT_TRUE(Due(kForever).empty()) << "a change in place queues nothing";

  // The same change again: its placement to replace is gone, so nothing applies.
  changed = index_->ChangeVersion(BucketName("plain"), ObjectKey("k"), change);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->applied);
  EXPECT_FALSE(changed->written);
  EXPECT_TRUE(changed->removed.empty());
}

TEST_F(LifecycleIndexTest, ChangeVersionOfAnotherVersionChangesNothing) {
  ObjectRecord v = Obj("plain", "k", "v1", 1000);
  ASSERT_TRUE(index_->PutObject(v).ok());
  const BucketName bucket("plain");
  const ObjectKey key("k");
  const auto to_glacier = [](const std::string& version, const std::string& etag,
                             std::int64_t modified_ms) {
    return VersionChange{.version_id = VersionId(version),
                         .etag = etag,
                         .last_modified_ms = modified_ms,
                         .edits = {SetStorageClass{"GLACIER"}}};
  };

  // A replaced version (other ETag or time) or one that is gone is left alone.
  for (const auto& change : {to_glacier("v1", "other", 1000), to_glacier("v1", v.etag, 999),
                             to_glacier("v2", v.etag, 1000)}) {
    auto changed = index_->ChangeVersion(bucket, key, change);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(changed->applied);
    EXPECT_FALSE(changed->written);
  }

  // A guard that fails writes nothing: no local copy may be there, and one is.
  VersionChange guarded = to_glacier("v1", v.etag, 1000);
  guarded.refuses_placements_on = {"hot"};
  auto changed = index_->ChangeVersion(bucket, key, guarded);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->applied);
  // ...and one that holds lets the edits through.
  guarded.refuses_placements_on = {"warm"};
  guarded.requires_placement_on = "hot";
  changed = index_->ChangeVersion(bucket, key, guarded);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(changed->written);
  // Edits that change nothing apply without a write.
  changed = index_->ChangeVersion(bucket, key, guarded);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(changed->applied);
  EXPECT_FALSE(changed->written);
  auto after = index_->GetVersion(bucket, key, VersionId("v1"));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->storage_class, "GLACIER");

  // A delete marker has nothing to move.
  ObjectRecord marker = Obj("plain", "k", "dm", 2000);
  marker.delete_marker = true;
  marker.placements.clear();
  ASSERT_TRUE(index_->PutObject(marker).ok());
  changed = index_->ChangeVersion(bucket, key, to_glacier("dm", marker.etag, 2000));
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->applied);
}

// A tag-filtered rule selects a version by its current tags, and PutObjectTagging changes
// them in place. The index documents that "every change of a key in a bucket with rules
// queues a due row", but SetObjectTags stages none: a version tagged after it was written
// is never queued, so it would never expire (until the rules change and a reseed runs).
TEST_F(LifecycleIndexTest, TaggingAVersionQueuesItForATagFilteredRule) {
  LifecycleRule tagged = ExpireAfter(1);
  tagged.filter.tags = {{"expire", "yes"}};
  SetRules("rules", {tagged});
  ASSERT_TRUE(index_->PutObject(Obj("rules", "k", "null", 1500)).ok());
  EXPECT_TRUE(Due(kForever).empty());  // untagged: the rule does not select it yet

  ASSERT_TRUE(
      index_->SetObjectTags(BucketName("rules"), ObjectKey("k"), std::nullopt, {{"expire", "yes"}})
          .ok());
  auto rows = Due(kForever);
  ASSERT_EQ(rows.size(), 1u) << "the newly selected version was not queued";
  ExpectRow(rows[0], 3000, "rules", "k", "");
}

}  // namespace
}  // namespace strata::metadata
