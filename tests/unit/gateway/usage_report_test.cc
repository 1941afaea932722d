// The usage report: counters grouped per tier in the config's order, priced per GiB-month,
// tiers the config no longer names shown unpriced, and its JSON.
#include "gateway/usage_report.h"

#include <gtest/gtest.h>

namespace strata::gateway {
namespace {

Config TwoTiers() {
  Config config;
  TierConfig hot;
  hot.name = "hot";
  hot.capacity = 1 << 20;
  hot.price_per_gb_month = 2.0;
  TierConfig cold;
  cold.name = "cold";
  cold.kind = TierKind::kS3;
  cold.price_per_gb_month = 0.5;
  config.tiers = {hot, cold};
  return config;
}

TEST(UsageReportTest, PricesEachLineAndSumsPerTier) {
  const std::int64_t gib = 1ll << 30;
  const auto report = BuildUsageReport(TwoTiers(), {{BucketName("a"), "cold", 3, 2 * gib},
                                                    {BucketName("a"), "hot", 1, gib / 2},
                                                    {BucketName("b"), "hot", 2, gib}});
  ASSERT_EQ(report.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(report.buckets[0].cost_per_month, 1.0);  // 2 GiB at 0.5
  EXPECT_DOUBLE_EQ(report.buckets[1].cost_per_month, 1.0);  // 0.5 GiB at 2
  ASSERT_EQ(report.tiers.size(), 2u);
  EXPECT_EQ(report.tiers[0].total.tier, "hot");
  EXPECT_EQ(report.tiers[0].kind, "local");
  EXPECT_EQ(report.tiers[0].capacity, 1u << 20);
  EXPECT_EQ(report.tiers[0].total.objects, 3);
  EXPECT_EQ(report.tiers[0].total.bytes, gib + gib / 2);
  EXPECT_DOUBLE_EQ(report.tiers[0].total.cost_per_month, 3.0);
  EXPECT_EQ(report.tiers[1].kind, "s3");
  EXPECT_DOUBLE_EQ(report.cost_per_month, 4.0);
}

TEST(UsageReportTest, EmptyTiersAreListedAndUnknownOnesUnpriced) {
  const auto report = BuildUsageReport(TwoTiers(), {{BucketName("a"), "old", 1, 100}});
  ASSERT_EQ(report.tiers.size(), 3u);
  EXPECT_EQ(report.tiers[0].total.objects, 0);
  EXPECT_EQ(report.tiers[2].total.tier, "old");
  EXPECT_EQ(report.tiers[2].kind, "unknown");
  EXPECT_DOUBLE_EQ(report.cost_per_month, 0.0);
}

TEST(UsageReportTest, JsonEscapesNamesAndCarriesEveryField) {
  const auto report = BuildUsageReport(TwoTiers(), {{BucketName("a\"b"), "hot", 1, 10}});
  const std::string json = UsageReportJson(report);
  EXPECT_NE(json.find(R"({"bucket":"a\"b","tier":"hot","objects":1,"bytes":10,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("kind":"local","capacity":1048576,"price_per_gb_month":2.000000,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("cost_per_month":)"), std::string::npos);
}

}  // namespace
}  // namespace strata::gateway
