// VersionSettingsChange: a change of one version's settings, made in place under the key's
// lock (ObjectIndex::UpdateVersionSettings): its tags, its owner and ACL, its object lock.
// Data, not code, like the index's other writes, so it can be sent to a key's owner; the
// lock rules (metadata/object_lock.h) are checked on the stored record when it applies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "metadata/object_lock.h"
#include "metadata/records.h"

namespace strata::metadata {

struct VersionSettingsChange {
  std::optional<Tags> tags;
  // The ACL, with the owner it is recorded under (a version recorded before owners were
  // gets one with its first ACL change).
  struct OwnedAcl {
    std::string owner;
    Acl acl;
  };
  std::optional<OwnedAcl> acl;
  // The retention: mode "" removes it. Refused (kAccessDenied) when it weakens one in
  // force, as CheckRetentionChange judges by `lock`.
  struct Retention {
    std::string mode;
    std::int64_t until_ms = 0;
  };
  std::optional<Retention> retention;
  std::optional<bool> legal_hold;
  LockCheck lock;
};

// Applies `change` to `record` (a version's, not a delete marker's); Ok or the refusal,
// and then `record` is unchanged.
Result<void> ApplyVersionSettings(const VersionSettingsChange& change, ObjectRecord& record);

}  // namespace strata::metadata
