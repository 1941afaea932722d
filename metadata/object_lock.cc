#include "metadata/object_lock.h"

namespace strata::metadata {
namespace {

Error Locked() {
  return Error(ErrorCode::kAccessDenied, "Access Denied because object protected by object lock.");
}

bool RetentionInForce(const ObjectRecord& version, std::int64_t now_ms) {
  return !version.retention_mode.empty() && version.retain_until_ms > now_ms;
}

}  // namespace

bool IsLocked(const ObjectRecord& version, std::int64_t now_ms) {
  return version.legal_hold || RetentionInForce(version, now_ms);
}

Result<void> CheckRemovable(const ObjectRecord& version, const LockCheck& check) {
  if (version.legal_hold) {
    return Locked();
  }
  if (!RetentionInForce(version, check.now_ms)) {
    return Ok();
  }
  if (version.retention_mode == kGovernance && check.bypass_governance) {
    return Ok();
  }
  return Locked();
}

Result<void> CheckRetentionChange(const ObjectRecord& version, std::string_view mode,
                                  std::int64_t until_ms, const LockCheck& check) {
  if (!RetentionInForce(version, check.now_ms)) {
    return Ok();
  }
  // Only extended in the mode it has: a GOVERNANCE retention made COMPLIANCE is a change of
  // its lock settings, which S3 (and Ceph RGW) allow only with the bypass.
  const bool extended = mode == version.retention_mode && until_ms >= version.retain_until_ms;
  if (version.retention_mode == kCompliance) {
    return extended ? Ok() : Result<void>(Locked());
  }
  return extended || check.bypass_governance ? Ok() : Result<void>(Locked());
}

}  // namespace strata::metadata
