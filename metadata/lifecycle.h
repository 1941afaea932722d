// Lifecycle rule evaluation: which of a bucket's rules apply to a version, and when each
// of their actions falls due. Pure functions of the rules, the versions and the clock;
// thread-safe. The index uses them to queue a key when it changes, the lifecycle worker
// (storage/lifecycle) to act on it when the queue says so.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metadata/records.h"

namespace strata::metadata {

enum class LifecycleAction : std::uint8_t {
  kTransition,            // current version -> storage_class
  kExpire,                // current version: delete (a delete marker when versioned)
  kRemoveDeleteMarker,    // a delete marker that is its key's only version
  kNoncurrentTransition,  // noncurrent version -> storage_class
  kNoncurrentExpire,      // noncurrent version: removed for good
};

struct DueAction {
  std::int64_t due_ms = 0;
  LifecycleAction action = LifecycleAction::kExpire;
  std::string storage_class;  // transitions
};

// Whether the rule's filter selects the version (prefix, every tag, sizes). A delete
// marker has no tags and no size, so tag and size filters never select one.
bool RuleSelects(const LifecycleRule& rule, const ObjectRecord& version);

// The storage classes ordered from hot (low) to cold (high); a transition applies only
// to a version whose class ranks lower than its target. Empty: every transition counts.
using ClassRank = std::function<int(std::string_view storage_class)>;

// Every action the enabled rules give versions[index], with its due time, where
// `versions` is one key's history newest first (as the index keeps it). Transitions to a
// class not ranked colder than the version's are left out; so are noncurrent actions
// whose NewerNoncurrentVersions are not there yet (a newer write queues the key again).
// A "day" is `day_ms` long, and a due time counted in days is rounded up to the next day
// boundary since the epoch, as S3 rounds to the next midnight UTC.
std::vector<DueAction> VersionActions(const std::vector<LifecycleRule>& rules,
                                      const std::vector<ObjectRecord>& versions, std::size_t index,
                                      std::int64_t day_ms, const ClassRank& rank);

// The earliest due time after `after_ms` of any action on any of the key's versions.
std::optional<std::int64_t> NextKeyDue(const std::vector<LifecycleRule>& rules,
                                       const std::vector<ObjectRecord>& versions,
                                       std::int64_t after_ms, std::int64_t day_ms,
                                       const ClassRank& rank);

// When an AbortIncompleteMultipartUpload rule aborts `upload` (rules select uploads by
// prefix only, as in S3); nullopt when none does.
std::optional<std::int64_t> UploadAbortDue(const std::vector<LifecycleRule>& rules,
                                           const UploadRecord& upload, std::int64_t day_ms);

}  // namespace strata::metadata
