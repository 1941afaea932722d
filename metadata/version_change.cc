#include "metadata/version_change.h"

#include <algorithm>

namespace strata::metadata {
namespace {

bool HasPlacementOn(const ObjectRecord& version, const std::string& tier) {
  return std::any_of(version.placements.begin(), version.placements.end(),
                     [&](const Placement& p) { return p.tier == tier; });
}

bool GuardsHold(const VersionChange& change, const ObjectRecord& version) {
  if (version.delete_marker) {
    return false;
  }
  if (change.requires_placement_on && !HasPlacementOn(version, *change.requires_placement_on)) {
    return false;
  }
  for (const auto& tier : change.refuses_placements_on) {
    if (HasPlacementOn(version, tier)) {
      return false;
    }
  }
  if (change.refuses_storage_class && version.storage_class == *change.refuses_storage_class) {
    return false;
  }
  if (change.refuses_pinned && version.storage_class == change.refuses_pinned->storage_class &&
      version.restore_expiry_ms > change.refuses_pinned->now_ms) {
    return false;
  }
  return true;
}

// Applies one edit; false when it cannot apply (a ReplacePlacement finding nothing).
struct EditApplier {
  ObjectRecord& version;
  std::vector<Placement>& removed;

  bool operator()(const AddPlacementFirst& edit) {
    version.placements.insert(version.placements.begin(), edit.placement);
    return true;
  }
  bool operator()(const ReplacePlacement& edit) {
    auto it = std::find_if(version.placements.begin(), version.placements.end(),
                           [&](const Placement& p) { return SameExtents(p, edit.old_placement); });
    if (it == version.placements.end()) {
      return false;
    }
    removed.push_back(std::move(*it));
    *it = edit.new_placement;
    return true;
  }
  bool operator()(const RemovePlacementsOn& edit) {
    auto& placements = version.placements;
    for (auto it = placements.begin(); it != placements.end();) {
      if (std::find(edit.tiers.begin(), edit.tiers.end(), it->tier) != edit.tiers.end()) {
        removed.push_back(std::move(*it));
        it = placements.erase(it);
      } else {
        ++it;
      }
    }
    return true;
  }
  bool operator()(const SetStorageClass& edit) {
    version.storage_class = edit.storage_class;
    return true;
  }
  bool operator()(const SetRestoreState& edit) {
    version.restore_expiry_ms = edit.expiry_ms;
    version.restore_ongoing = edit.ongoing;
    return true;
  }
};

}  // namespace

bool SameExtents(const Placement& a, const Placement& b) {
  return a.tier == b.tier && a.extents.size() == b.extents.size() &&
         std::equal(a.extents.begin(), a.extents.end(), b.extents.begin(),
                    [](const Extent& x, const Extent& y) {
                      return x.location == y.location && x.size == y.size;
                    });
}

bool ApplyVersionChange(const VersionChange& change, ObjectRecord& version,
                        std::vector<Placement>& removed) {
  if (!GuardsHold(change, version)) {
    return false;
  }
  ObjectRecord edited = version;
  std::vector<Placement> taken;
  EditApplier apply{edited, taken};
  for (const auto& edit : change.edits) {
    if (!std::visit(apply, edit)) {
      return false;
    }
  }
  version = std::move(edited);
  removed.insert(removed.end(), std::make_move_iterator(taken.begin()),
                 std::make_move_iterator(taken.end()));
  return true;
}

}  // namespace strata::metadata
