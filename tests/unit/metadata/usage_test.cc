// The usage counters' pure parts: what a version or part counts, row keys and values.
#include "metadata/usage.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::metadata {
namespace {

ObjectRecord Version(std::uint64_t hot_bytes, bool upstream) {
  ObjectRecord o;
  o.size = hot_bytes;
  o.placements = {{"hot", {{"a", hot_bytes / 2}, {"b", hot_bytes - hot_bytes / 2}}}};
  if (upstream) {
    o.placements.push_back({"cold", {{"etag", hot_bytes}}});
  }
  return o;
}

TEST(UsageDeltaTest, AVersionCountsOnEveryTierItIsOn) {
  UsageDelta delta;
  delta.AddVersion(BucketName("b"), Version(10, true), +1);
  const auto changes = delta.Changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes.at({"b", "hot"}), (UsageCounts{1, 10}));
  EXPECT_EQ(changes.at({"b", "cold"}), (UsageCounts{1, 10}));
}

TEST(UsageDeltaTest, AReplacementCountsTheDifferenceAndZeroesAreLeftOut) {
  UsageDelta delta;
  delta.AddVersion(BucketName("b"), Version(10, true), -1);
  delta.AddVersion(BucketName("b"), Version(10, false), +1);  // an eviction's opposite
  const auto changes = delta.Changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes.at({"b", "cold"}), (UsageCounts{-1, -10}));
}

TEST(UsageDeltaTest, DeleteMarkersCountNothingAndPartsOnlyBytes) {
  UsageDelta delta;
  ObjectRecord marker;
  marker.delete_marker = true;
  delta.AddVersion(BucketName("b"), marker, +1);
  EXPECT_TRUE(delta.Changes().empty());
  PartRecord part;
  part.size = 7;
  part.tier = "hot";
  delta.AddPart(BucketName("b"), part, +1);
  EXPECT_EQ(delta.Changes().at({"b", "hot"}), (UsageCounts{0, 7}));
}

TEST(UsageRowKeyTest, RoundTripsAndRefusesMalformedRows) {
  const std::string row = UsageRowKey("bucket", "hot");
  auto parsed = ParseUsageRowKey(row);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->bucket, "bucket");
  EXPECT_EQ(parsed->tier, "hot");
  EXPECT_FALSE(ParseUsageRowKey("").has_value());  // the marker row
  EXPECT_FALSE(ParseUsageRowKey(std::string("\0hot", 4)).has_value());
  EXPECT_FALSE(ParseUsageRowKey(std::string("bucket\0", 7)).has_value());
  EXPECT_FALSE(ParseUsageRowKey("nozero").has_value());
}

TEST(UsageValueTest, RoundTripsNegativeAndLargeCounts) {
  for (const UsageCounts counts : {UsageCounts{0, 0}, UsageCounts{-1, -(1ll << 40)},
                                   UsageCounts{1ll << 50, (1ll << 62) + 3}}) {
    EXPECT_EQ(DecodeUsage(EncodeUsage(counts)), counts);
  }
  EXPECT_FALSE(DecodeUsage("short").has_value());
  EXPECT_FALSE(DecodeUsage(std::string(17, 'x')).has_value());
}

}  // namespace
}  // namespace strata::metadata
