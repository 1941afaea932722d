#include "gateway/usage_report.h"

#include <cstdio>
#include <utility>

#include "common/text.h"

namespace strata::gateway {
namespace {

std::string Number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

void AppendLine(std::string& json, const UsageLine& line) {
  json += "\"tier\":\"" + JsonEscape(line.tier) + "\",\"objects\":" + std::to_string(line.objects) +
          ",\"bytes\":" + std::to_string(line.bytes) +
          ",\"cost_per_month\":" + Number(line.cost_per_month);
}

}  // namespace

UsageReport BuildUsageReport(const Config& config, const std::vector<metadata::UsageRow>& rows) {
  UsageReport report;
  for (const auto& tier : config.tiers) {
    report.tiers.push_back({{"", tier.name, 0, 0, 0},
                            std::string(TierKindName(tier.kind)),
                            tier.capacity,
                            tier.price_per_gb_month});
  }
  auto tier_of = [&](const std::string& name) -> TierUsage& {
    for (auto& tier : report.tiers) {
      if (tier.total.tier == name) {
        return tier;
      }
    }
    // Counted under a name the config no longer has (a renamed tier): shown, priced at 0.
    report.tiers.push_back({{"", name, 0, 0, 0}, "unknown", 0, 0});
    return report.tiers.back();
  };
  for (const auto& row : rows) {
    TierUsage& tier = tier_of(row.tier);
    const double cost =
        static_cast<double>(row.bytes) / kBytesPerPricedGb * tier.price_per_gb_month;
    report.buckets.push_back({row.bucket.str(), row.tier, row.objects, row.bytes, cost});
    tier.total.objects += row.objects;
    tier.total.bytes += row.bytes;
    tier.total.cost_per_month += cost;
    report.cost_per_month += cost;
  }
  return report;
}

Result<UsageReport> ReadUsageReport(const Config& config, metadata::Index& index) {
  auto rows = index.Usage();
  if (!rows.ok()) {
    return std::move(rows).error();
  }
  return BuildUsageReport(config, *rows);
}

std::string UsageReportJson(const UsageReport& report) {
  std::string json = "{\"buckets\":[";
  for (std::size_t i = 0; i < report.buckets.size(); ++i) {
    json += std::string(i == 0 ? "" : ",") + "{\"bucket\":\"" +
            JsonEscape(report.buckets[i].bucket) + "\",";
    AppendLine(json, report.buckets[i]);
    json += "}";
  }
  json += "],\"tiers\":[";
  for (std::size_t i = 0; i < report.tiers.size(); ++i) {
    const TierUsage& tier = report.tiers[i];
    json += std::string(i == 0 ? "" : ",") + "{\"kind\":\"" + tier.kind +
            "\",\"capacity\":" + std::to_string(tier.capacity) +
            ",\"price_per_gb_month\":" + Number(tier.price_per_gb_month) + ",";
    AppendLine(json, tier.total);
    json += "}";
  }
  json += "],\"cost_per_month\":" + Number(report.cost_per_month) + "}";
  return json;
}

}  // namespace strata::gateway
