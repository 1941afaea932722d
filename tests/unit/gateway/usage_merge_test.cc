// The cluster's usage report from its members' (gateway/usage_merge.h): every copy on a
// local tier counts, an `s3` tier's one copy is counted once, a member's report reads back
// from its JSON, and anything else a member could answer is refused.
#include "gateway/usage_merge.h"

#include <gtest/gtest.h>

#include "gateway/usage_report.h"

namespace strata::gateway {
namespace {

Config HotAndCold() {
  Config config;
  TierConfig hot;
  hot.name = "hot";
  TierConfig cold;
  cold.name = "cold";
  cold.kind = TierKind::kS3;
  config.tiers = {hot, cold};
  return config;
}

MemberUsage Member(const std::string& node, std::vector<metadata::UsageRow> rows) {
  MemberUsage member{node, "zone-" + node, true};
  member.rows = std::move(rows);
  return member;
}

TEST(UsageMergeTest, LocalCopiesAddUpAndTheUpstreamsCopyCountsOnce) {
  // Three objects of bucket "a" (30 bytes), each on two of three members, all written back.
  const std::vector<MemberUsage> members = {
      Member("a", {{BucketName("a"), "cold", 2, 20}, {BucketName("a"), "hot", 2, 20}}),
      Member("b", {{BucketName("a"), "cold", 2, 20}, {BucketName("a"), "hot", 2, 20}}),
      Member("c", {{BucketName("a"), "cold", 2, 20},
                   {BucketName("a"), "hot", 2, 20},
                   {BucketName("b"), "hot", 1, 7}})};
  const auto rows = AddMemberRows(HotAndCold(), members, 2);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].bucket.str(), "a");
  EXPECT_EQ(rows[0].tier, "cold");
  EXPECT_EQ(rows[0].objects, 3);  // 6 records of the upstream's 3 objects
  EXPECT_EQ(rows[0].bytes, 30);
  EXPECT_EQ(rows[1].tier, "hot");
  EXPECT_EQ(rows[1].objects, 6);  // every copy is stored
  EXPECT_EQ(rows[1].bytes, 60);
  EXPECT_EQ(rows[2].bucket.str(), "b");
  EXPECT_EQ(rows[2].objects, 1);

  MemberUsage counted = members[2];
  CountStored(HotAndCold(), counted);
  EXPECT_EQ(counted.objects, 3);
  EXPECT_EQ(counted.bytes, 27);
}

TEST(UsageMergeTest, AMembersReportReadsBackFromItsJson) {
  const auto json = UsageReportJson(BuildUsageReport(
      HotAndCold(), {{BucketName("a"), "hot", 4, 4096}, {BucketName("b\"q"), "cold", 1, 9}}));
  auto rows = ParseUsageRows(json);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].bucket.str(), "a");
  EXPECT_EQ((*rows)[0].objects, 4);
  EXPECT_EQ((*rows)[0].bytes, 4096);
  EXPECT_EQ((*rows)[1].bucket.str(), "b\"q");
  EXPECT_EQ((*rows)[1].tier, "cold");
}

TEST(UsageMergeTest, AnythingElseAMemberAnswersIsRefused) {
  for (const char* bad : {"", "[]", "{", "{\"buckets\":{}}", "{\"buckets\":[1]}",
                          "{\"buckets\":[{\"bucket\":\"a\",\"tier\":\"hot\",\"objects\":1}]}",
                          "{\"buckets\":[{\"bucket\":\"a\",\"tier\":\"hot\",\"objects\":\"1\","
                          "\"bytes\":2}]}",
                          "{\"buckets\":[{\"bucket\":\"a\",\"tier\":\"hot\",\"objects\":-1,"
                          "\"bytes\":2}]}",
                          "{\"buckets\":[{\"bucket\":\"a\",\"tier\":\"hot\",\"objects\":1.5,"
                          "\"bytes\":2}]}"}) {
    auto rows = ParseUsageRows(bad);
    ASSERT_FALSE(rows.ok()) << bad;
    EXPECT_EQ(rows.error().code, ErrorCode::kCorruption) << bad;
  }
}

TEST(UsageMergeTest, TheClusterPartSaysWhoAnswered) {
  MemberUsage lost{"c", "zone-3", false};
  const std::string json = MembersJson({Member("a", {}), lost}, 2);
  EXPECT_NE(json.find("\"node\":\"c\",\"zone\":\"zone-3\",\"answered\":false"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"copies\":2,\"complete\":false"), std::string::npos) << json;
  EXPECT_NE(MembersJson({Member("a", {})}, 1).find("\"complete\":true"), std::string::npos);
}

}  // namespace
}  // namespace strata::gateway
