#include "metadata/version_settings.h"

namespace strata::metadata {

Result<void> ApplyVersionSettings(const VersionSettingsChange& change, ObjectRecord& record) {
  if (change.retention) {
    STRATA_RETURN_IF_ERROR(CheckRetentionChange(record, change.retention->mode,
                                                change.retention->until_ms, change.lock));
  }
  if (change.tags) {
    record.tags = *change.tags;
  }
  if (change.acl) {
    record.owner = change.acl->owner;
    record.acl = change.acl->acl;
  }
  if (change.retention) {
    record.retention_mode = change.retention->mode;
    record.retain_until_ms = change.retention->mode.empty() ? 0 : change.retention->until_ms;
  }
  if (change.legal_hold) {
    record.legal_hold = *change.legal_hold;
  }
  return Ok();
}

}  // namespace strata::metadata
