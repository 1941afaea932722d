// The usage of a whole cluster, from each member's own (gateway/usage_report.h): GET
// /_strata/admin/usage on any member (and so `strata-admin usage`) asks every other member
// for its report as a fan-out over the peer transport and adds them up here. Pure; any
// thread.
//
// What a line counts: a member's counters count the copies it holds. On a local (or peer)
// tier every copy is stored and paid for, so the cluster's line is the members' sum: with
// replicas = 3, a 1 GiB object counts 3 GiB of NVMe. An `s3` tier holds one copy of an
// object however many owners record it, so its line is the members' sum divided by the
// copies a key has (`replicas`, or the members when fewer): exact once every key has its
// copies, an estimate while a repair or a join moves them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"

namespace strata::gateway {

// One member's part of the cluster's report.
struct MemberUsage {
  std::string node;
  std::string zone;
  bool answered = false;  // false: unreachable, or its answer was not a usage report
  std::int64_t objects = 0;
  std::int64_t bytes = 0;
  std::vector<metadata::UsageRow> rows = {};
};

// The rows of a member's usage report (UsageReportJson's "buckets"). kCorruption for
// anything else: a member's answer is outside input. At most kMaxUsageRows rows.
inline constexpr std::size_t kMaxUsageRows = 100'000;
Result<std::vector<metadata::UsageRow>> ParseUsageRows(std::string_view json);

// Sets `member`'s objects and bytes: its rows on the tiers it stores itself (every tier
// but an `s3` one).
void CountStored(const Config& config, MemberUsage& member);

// The members' rows added up per (bucket, tier), in that order, the `s3` tiers' divided
// by `copies` (rounded to the nearest).
std::vector<metadata::UsageRow> AddMemberRows(const Config& config,
                                              const std::vector<MemberUsage>& members, int copies);

// The "cluster" part of the report: {"members":[{"node","zone","answered","objects",
// "bytes"}...],"copies":N,"complete":true|false}.
std::string MembersJson(const std::vector<MemberUsage>& members, int copies);

}  // namespace strata::gateway
