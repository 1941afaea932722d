#include "metadata/lifecycle.h"

#include <algorithm>

namespace strata::metadata {
namespace {

// `start` plus `days` lifecycle days, rounded up to the next day boundary.
std::int64_t DaysAfter(std::int64_t start_ms, std::int64_t days, std::int64_t day_ms) {
  const std::int64_t at = start_ms + days * day_ms;
  const std::int64_t rem = at % day_ms;
  return rem == 0 ? at : at + (day_ms - rem);
}

bool HasTag(const ObjectRecord& version, const std::pair<std::string, std::string>& tag) {
  return std::find(version.tags.begin(), version.tags.end(), tag) != version.tags.end();
}

// Whether a transition to `target` would move `version` colder.
bool Colder(const ClassRank& rank, const ObjectRecord& version, const std::string& target) {
  return !rank || rank(target) > rank(version.storage_class);
}

void CurrentActions(const LifecycleRule& rule, const std::vector<ObjectRecord>& versions,
                    std::int64_t day_ms, const ClassRank& rank, std::vector<DueAction>& out) {
  const ObjectRecord& v = versions.front();
  if (v.delete_marker) {
    if (versions.size() == 1 && rule.expired_object_delete_marker) {
      out.push_back({v.last_modified_ms, LifecycleAction::kRemoveDeleteMarker, {}});
    } else if (versions.size() == 1 && rule.expiration_days) {
      out.push_back({DaysAfter(v.last_modified_ms, *rule.expiration_days, day_ms),
                     LifecycleAction::kRemoveDeleteMarker,
                     {}});
    }
    return;
  }
  if (rule.expiration_days) {
    out.push_back({DaysAfter(v.last_modified_ms, *rule.expiration_days, day_ms),
                   LifecycleAction::kExpire,
                   {}});
  }
  if (rule.expiration_date_ms) {
    out.push_back(
        {std::max(*rule.expiration_date_ms, v.last_modified_ms), LifecycleAction::kExpire, {}});
  }
  for (const auto& t : rule.transitions) {
    if (!Colder(rank, v, t.storage_class)) {
      continue;
    }
    const std::int64_t due = t.days ? DaysAfter(v.last_modified_ms, *t.days, day_ms)
                                    : std::max(t.date_ms.value_or(0), v.last_modified_ms);
    out.push_back({due, LifecycleAction::kTransition, t.storage_class});
  }
}

void NoncurrentActions(const LifecycleRule& rule, const std::vector<ObjectRecord>& versions,
                       std::size_t index, std::int64_t day_ms, const ClassRank& rank,
                       std::vector<DueAction>& out) {
  const ObjectRecord& v = versions[index];
  // It became noncurrent when the next newer version was written.
  const std::int64_t since = versions[index - 1].last_modified_ms;
  // Noncurrent versions newer than this one (the newest version is current).
  const auto newer = static_cast<std::int64_t>(index - 1);
  if (rule.noncurrent_expiration_days && newer >= rule.noncurrent_newer_versions.value_or(0)) {
    out.push_back({DaysAfter(since, *rule.noncurrent_expiration_days, day_ms),
                   LifecycleAction::kNoncurrentExpire,
                   {}});
  }
  if (v.delete_marker) {
    return;  // a marker has no bytes to move
  }
  for (const auto& t : rule.noncurrent_transitions) {
    if (newer < t.newer_noncurrent_versions.value_or(0) || !Colder(rank, v, t.storage_class)) {
      continue;
    }
    out.push_back({DaysAfter(since, t.noncurrent_days, day_ms),
                   LifecycleAction::kNoncurrentTransition, t.storage_class});
  }
}

}  // namespace

bool RuleSelects(const LifecycleRule& rule, const ObjectRecord& version) {
  const LifecycleFilter& f = rule.filter;
  if (f.prefix && !version.key.view().starts_with(*f.prefix)) {
    return false;
  }
  const bool sized = f.size_greater_than || f.size_less_than;
  if (version.delete_marker && (!f.tags.empty() || sized)) {
    return false;
  }
  if (f.size_greater_than && version.size <= *f.size_greater_than) {
    return false;
  }
  if (f.size_less_than && version.size >= *f.size_less_than) {
    return false;
  }
  return std::all_of(f.tags.begin(), f.tags.end(),
                     [&](const auto& tag) { return HasTag(version, tag); });
}

std::vector<DueAction> VersionActions(const std::vector<LifecycleRule>& rules,
                                      const std::vector<ObjectRecord>& versions, std::size_t index,
                                      std::int64_t day_ms, const ClassRank& rank) {
  std::vector<DueAction> out;
  if (index >= versions.size() || day_ms <= 0) {
    return out;
  }
  for (const auto& rule : rules) {
    if (!rule.enabled || !RuleSelects(rule, versions[index])) {
      continue;
    }
    if (index == 0) {
      CurrentActions(rule, versions, day_ms, rank, out);
    } else {
      NoncurrentActions(rule, versions, index, day_ms, rank, out);
    }
  }
  return out;
}

std::optional<std::int64_t> NextKeyDue(const std::vector<LifecycleRule>& rules,
                                       const std::vector<ObjectRecord>& versions,
                                       std::int64_t after_ms, std::int64_t day_ms,
                                       const ClassRank& rank) {
  std::optional<std::int64_t> next;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    for (const auto& action : VersionActions(rules, versions, i, day_ms, rank)) {
      if (action.due_ms > after_ms && (!next || action.due_ms < *next)) {
        next = action.due_ms;
      }
    }
  }
  return next;
}

std::optional<std::int64_t> UploadAbortDue(const std::vector<LifecycleRule>& rules,
                                           const UploadRecord& upload, std::int64_t day_ms) {
  std::optional<std::int64_t> due;
  if (day_ms <= 0) {
    return due;
  }
  for (const auto& rule : rules) {
    const auto& prefix = rule.filter.prefix;
    if (!rule.enabled || !rule.abort_incomplete_days ||
        (prefix && !upload.object.key.view().starts_with(*prefix))) {
      continue;
    }
    const std::int64_t at = DaysAfter(upload.initiated_ms, *rule.abort_incomplete_days, day_ms);
    if (!due || at < *due) {
      due = at;
    }
  }
  return due;
}

}  // namespace strata::metadata
