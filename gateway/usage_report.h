// The usage report: objects and bytes per bucket and tier (the index's usage counters,
// metadata/usage.h) and what a month of storing them costs at each tier's
// `price_per_gb_month`. Served as JSON by the admin API (GET /_strata/admin/usage, which
// `strata-admin usage` prints as a table) and exported by /metrics. Pure apart from the
// one small read of the counters; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"

namespace strata::gateway {

// Prices are per GiB (2^30 bytes) stored for a month, as S3's bills count a "GB".
inline constexpr double kBytesPerPricedGb = 1024.0 * 1024.0 * 1024.0;

struct UsageLine {
  std::string bucket;  // empty in a tier's total
  std::string tier;
  std::int64_t objects = 0;
  std::int64_t bytes = 0;
  double cost_per_month = 0;
};

struct TierUsage {
  UsageLine total;
  std::string kind;            // "local", "peer", "s3"; "unknown" for a tier no longer configured
  std::uint64_t capacity = 0;  // 0: unlimited
  double price_per_gb_month = 0;
};

struct UsageReport {
  std::vector<UsageLine> buckets;  // (bucket, tier) order
  std::vector<TierUsage> tiers;    // the config's order, then tiers only the counters name
  double cost_per_month = 0;       // every tier's
};

UsageReport BuildUsageReport(const Config& config, const std::vector<metadata::UsageRow>& rows);
Result<UsageReport> ReadUsageReport(const Config& config, metadata::Index& index);

// {"buckets":[{"bucket","tier","objects","bytes","cost_per_month"}...],
//  "tiers":[{"tier","kind","capacity","price_per_gb_month","objects","bytes",
//            "cost_per_month"}...], "cost_per_month": C}
std::string UsageReportJson(const UsageReport& report);

}  // namespace strata::gateway
