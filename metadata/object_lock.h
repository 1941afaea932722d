// Object lock (WORM) rules on a version's record (issue 20), kept beside the records so
// the index enforces them under the key's lock: a locked version is never removed, and
// its lock never weakened, whoever asks. Pure functions; thread-safe.
//
// S3's rules: a legal hold keeps a version until it is lifted; a COMPLIANCE retention
// keeps it until its date, and can only be extended; a GOVERNANCE retention does too,
// unless the caller bypasses it (x-amz-bypass-governance-retention with the
// s3:BypassGovernanceRetention permission).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::metadata {

inline constexpr std::string_view kGovernance = "GOVERNANCE";
inline constexpr std::string_view kCompliance = "COMPLIANCE";

// What a removal or a change of a version's lock is judged by: the time (Unix ms; 0
// counts every retention as in force) and whether the caller bypasses GOVERNANCE.
struct LockCheck {
  std::int64_t now_ms = 0;
  bool bypass_governance = false;
};

// Whether the version has a retention in force or a legal hold.
bool IsLocked(const ObjectRecord& version, std::int64_t now_ms);

// Ok, or kAccessDenied when `version` may not be removed.
Result<void> CheckRemovable(const ObjectRecord& version, const LockCheck& check);

// Ok, or kAccessDenied when replacing the version's retention by (`mode`, `until_ms`)
// (mode empty: none) weakens one in force: a COMPLIANCE retention shortened, removed or
// turned to GOVERNANCE; a GOVERNANCE one shortened, removed or turned to COMPLIANCE
// without the bypass.
Result<void> CheckRetentionChange(const ObjectRecord& version, std::string_view mode,
                                  std::int64_t until_ms, const LockCheck& check);

}  // namespace strata::metadata
