// A member's usage report (gateway/usage_merge.h's ParseUsageRows), as a broken or
// hostile member would answer a cluster-wide `strata-admin usage`. Properties: no crash
// or leak; accepted rows are within their limits (no negative count, at most
// kMaxUsageRows) and read back the same from the report this gateway would make of them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/usage_merge.h"
#include "gateway/usage_report.h"
#include "tests/fuzz/fuzz_check.h"

using strata::gateway::BuildUsageReport;
using strata::gateway::kMaxUsageRows;
using strata::gateway::ParseUsageRows;
using strata::gateway::UsageReportJson;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  auto rows = ParseUsageRows(all);
  if (!rows.ok()) {
    return 0;
  }
  FUZZ_CHECK(rows->size() <= kMaxUsageRows, all);
  for (const auto& row : *rows) {
    FUZZ_CHECK(row.objects >= 0 && row.bytes >= 0, all);
  }
  // Unpriced (no tiers configured): each row is a line of its own, in the rows' order.
  const strata::Config none;
  auto again = ParseUsageRows(UsageReportJson(BuildUsageReport(none, *rows)));
  FUZZ_CHECK(again.ok() && again->size() == rows->size(), all);
  for (std::size_t i = 0; i < rows->size(); ++i) {
    FUZZ_CHECK((*again)[i].bucket == (*rows)[i].bucket && (*again)[i].tier == (*rows)[i].tier &&
                   (*again)[i].objects == (*rows)[i].objects &&
                   (*again)[i].bytes == (*rows)[i].bytes,
               all);
  }
  return 0;
}
