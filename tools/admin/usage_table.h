// `strata-admin usage`: the admin API's usage report (gateway/usage_report.h) as a table.
#pragma once

#include <optional>
#include <string>

namespace strata::admin {

// The table for the JSON document GET /_strata/admin/usage answers: one line per (bucket,
// tier), then one per tier with its total, capacity and price, then the monthly total.
// nullopt when `json` is not such a document.
std::optional<std::string> UsageTable(const std::string& json);

// 1536 -> "1.5 KiB".
std::string HumanBytes(double bytes);

}  // namespace strata::admin
