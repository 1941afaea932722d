#include "metadata/version_change.h"

#include <gtest/gtest.h>

#include "metadata/codec.h"

namespace strata::metadata {
namespace {

Placement On(const std::string& tier, const std::string& file) {
  return Placement{tier, {{file, 100}}};
}

ObjectRecord Version() {
  ObjectRecord v;
  v.version_id = VersionId("v1");
  v.etag = "e";
  v.last_modified_ms = 1000;
  v.size = 100;
  v.storage_class = "STANDARD";
  v.placements = {On("hot", "f1"), On("cold", "etag")};
  return v;
}

VersionChange Of(const ObjectRecord& v) {
  return VersionChange{
      .version_id = v.version_id, .etag = v.etag, .last_modified_ms = v.last_modified_ms};
}

TEST(VersionChangeTest, EvictionTakesTheLocalCopiesOut) {
  ObjectRecord v = Version();
  VersionChange change = Of(v);
  change.requires_placement_on = "cold";
  change.edits = {RemovePlacementsOn{{"hot", "warm"}}, SetStorageClass{"GLACIER"}};
  std::vector<Placement> removed;
  ASSERT_TRUE(ApplyVersionChange(change, v, removed));
  ASSERT_EQ(v.placements.size(), 1u);
  EXPECT_EQ(v.placements[0].tier, "cold");
  EXPECT_EQ(v.storage_class, "GLACIER");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].extents[0].location, "f1");
}

TEST(VersionChangeTest, AFailingGuardChangesNothing) {
  const ObjectRecord original = Version();
  const auto refused = [&](VersionChange change) {
    ObjectRecord v = original;
    change.edits = {RemovePlacementsOn{{"hot"}}, SetStorageClass{"GLACIER"}};
    std::vector<Placement> removed;
    const bool applied = ApplyVersionChange(change, v, removed);
    EXPECT_EQ(EncodeObject(v), EncodeObject(original));
    EXPECT_TRUE(removed.empty());
    return !applied;
  };
  VersionChange dirty = Of(original);
  dirty.requires_placement_on = "elsewhere";
  EXPECT_TRUE(refused(dirty));
  VersionChange local = Of(original);
  local.refuses_placements_on = {"warm", "hot"};
  EXPECT_TRUE(refused(local));
  VersionChange same_class = Of(original);
  same_class.refuses_storage_class = "STANDARD";
  EXPECT_TRUE(refused(same_class));

  // A restored copy stays until its pin expires, in the class it was restored into only.
  ObjectRecord pinned = original;
  pinned.restore_expiry_ms = 5000;
  VersionChange pin = Of(original);
  pin.refuses_pinned = VersionChange::Pin{"STANDARD", 4999};
  pin.edits = {RemovePlacementsOn{{"hot"}}};
  std::vector<Placement> removed;
  EXPECT_FALSE(ApplyVersionChange(pin, pinned, removed));
  pin.refuses_pinned->now_ms = 5000;  // expired
  EXPECT_TRUE(ApplyVersionChange(pin, pinned, removed));
  ObjectRecord other_class = original;
  other_class.restore_expiry_ms = 5000;
  pin.refuses_pinned = VersionChange::Pin{"GLACIER", 0};
  EXPECT_TRUE(ApplyVersionChange(pin, other_class, removed));

  // A delete marker is never changed.
  ObjectRecord marker = original;
  marker.delete_marker = true;
  VersionChange any = Of(original);
  any.edits = {SetStorageClass{"GLACIER"}};
  EXPECT_FALSE(ApplyVersionChange(any, marker, removed));
}

TEST(VersionChangeTest, ReplaceKeepsTheSlotAndNeedsTheSameExtents) {
  ObjectRecord v = Version();
  VersionChange change = Of(v);
  change.edits = {ReplacePlacement{On("hot", "f1"), On("hot", "f9")}};
  std::vector<Placement> removed;
  ASSERT_TRUE(ApplyVersionChange(change, v, removed));
  EXPECT_EQ(v.placements[0].extents[0].location, "f9");  // still the first, read first
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].extents[0].location, "f1");
  // f1 is gone now: the same replace finds nothing and changes nothing, not even the
  // edits before it.
  VersionChange again = Of(v);
  again.edits = {SetStorageClass{"GLACIER"}, ReplacePlacement{On("hot", "f1"), On("hot", "f8")}};
  removed.clear();
  EXPECT_FALSE(ApplyVersionChange(again, v, removed));
  EXPECT_EQ(v.storage_class, "STANDARD");
  EXPECT_TRUE(removed.empty());
}

TEST(VersionChangeTest, RestoreAddsTheLocalCopyFirstAndSetsTheState) {
  ObjectRecord v = Version();
  v.placements = {On("cold", "etag")};
  VersionChange change = Of(v);
  change.refuses_placements_on = {"hot"};
  change.edits = {AddPlacementFirst{On("hot", "f2")}, SetRestoreState{86'400'000, false}};
  std::vector<Placement> removed;
  ASSERT_TRUE(ApplyVersionChange(change, v, removed));
  ASSERT_EQ(v.placements.size(), 2u);
  EXPECT_EQ(v.placements[0].tier, "hot");
  EXPECT_EQ(v.restore_expiry_ms, 86'400'000);
  EXPECT_FALSE(v.restore_ongoing);
  EXPECT_TRUE(removed.empty());
}

TEST(VersionChangeTest, EncodesAndDecodesEveryField) {
  VersionChange change = Of(Version());
  change.requires_placement_on = "cold";
  change.refuses_placements_on = {"hot", "warm"};
  change.refuses_storage_class = "GLACIER";
  change.refuses_pinned = VersionChange::Pin{"GLACIER", -5};
  change.edits = {AddPlacementFirst{On("hot", "a")},
                  ReplacePlacement{On("hot", "a"), Placement{"warm", {{"b", 1}, {"c", 2}}}},
                  RemovePlacementsOn{{"hot"}}, SetStorageClass{"GLACIER_IR"},
                  SetRestoreState{123, true}};
  const std::string bytes = EncodeVersionChange(change);
  auto decoded = DecodeVersionChange(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(EncodeVersionChange(*decoded), bytes);
  EXPECT_EQ(decoded->version_id, change.version_id);
  EXPECT_EQ(decoded->refuses_placements_on, change.refuses_placements_on);
  ASSERT_TRUE(decoded->refuses_pinned.has_value());
  EXPECT_EQ(decoded->refuses_pinned->now_ms, -5);
  ASSERT_EQ(decoded->edits.size(), 5u);
  const auto& replace = std::get<ReplacePlacement>(decoded->edits[1]);
  ASSERT_EQ(replace.new_placement.extents.size(), 2u);
  EXPECT_EQ(replace.new_placement.extents[1].location, "c");
  EXPECT_TRUE(std::get<SetRestoreState>(decoded->edits[4]).ongoing);
  // The smallest change: nothing optional, no edits.
  const std::string empty = EncodeVersionChange(VersionChange{});
  auto plain = DecodeVersionChange(empty);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->requires_placement_on.has_value());
  EXPECT_TRUE(plain->edits.empty());
}

TEST(VersionChangeTest, BadBytesAreCorruption) {
  VersionChange change = Of(Version());
  change.edits = {SetStorageClass{"GLACIER"}, SetRestoreState{1, false}};
  const std::string bytes = EncodeVersionChange(change);
  // Every truncation, and one trailing byte too many.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto cut = DecodeVersionChange(bytes.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.error().code, ErrorCode::kCorruption);
  }
  EXPECT_FALSE(DecodeVersionChange(bytes + "x").ok());
  // An edit kind this version does not know, a flag that is not 0 or 1, a newer format.
  std::string unknown = bytes;
  unknown[unknown.size() - 3] = 9;  // the second edit's kind byte
  EXPECT_FALSE(DecodeVersionChange(unknown).ok());
  std::string newer = bytes;
  newer[0] = static_cast<char>(kVersionChangeFormat + 1);
  EXPECT_FALSE(DecodeVersionChange(newer).ok());
  // A count far larger than the bytes left is refused before anything is allocated.
  // (format, seven empty or absent fields, then 2^32 - 1 edits).
  const std::string huge("\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\x0f", 13);
  EXPECT_FALSE(DecodeVersionChange(huge).ok());
}

}  // namespace
}  // namespace strata::metadata
