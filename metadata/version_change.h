// VersionChange: an edit of one stored version's record, as data the index applies under
// the key's lock (ObjectIndex::ChangeVersion), so the cluster can send it to whichever
// node holds the key's partition (metadata/codec.h encodes it). It changes only what
// storage decides about a version: its placements (eviction, restore, read repair, moves
// between local tiers), its storage class (lifecycle transitions) and its restore state
// (RestoreObject); never what identifies the version or its bytes.
//
// A change names the version it expects (id, ETag, time: a version replaced or deleted
// since the caller read it is left alone), guards that must hold on the version as stored,
// and edits applied in order. The index writes the record only when the guards held and
// the edits changed it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/ids.h"
#include "metadata/records.h"

namespace strata::metadata {

// The placement becomes the version's first (the copy reads are served from).
struct AddPlacementFirst {
  Placement placement;
};
// The placement with `old_placement`'s extents (the same data files) is replaced by
// `new_placement` in its slot. A guard too: without such a placement nothing is written.
struct ReplacePlacement {
  Placement old_placement;
  Placement new_placement;
};
// Every placement on one of `tiers` is taken out.
struct RemovePlacementsOn {
  std::vector<std::string> tiers;
};
struct SetStorageClass {
  std::string storage_class;
};
struct SetRestoreState {
  std::int64_t expiry_ms = 0;  // Unix ms; 0: not restored
  bool ongoing = false;        // a restore's fetch is under way
};
using VersionEdit = std::variant<AddPlacementFirst, ReplacePlacement, RemovePlacementsOn,
                                 SetStorageClass, SetRestoreState>;

struct VersionChange {
  // The version expected; a delete marker is never changed.
  VersionId version_id = {};
  std::string etag = {};
  std::int64_t last_modified_ms = 0;

  // Guards on the version as stored: any that fails leaves it alone.
  // A placement on this tier (on the upstream tier: the version is clean).
  std::optional<std::string> requires_placement_on = {};
  // No placement on any of these tiers (e.g. no local copy).
  std::vector<std::string> refuses_placements_on = {};
  // Not of this storage class already.
  std::optional<std::string> refuses_storage_class = {};
  // Not restored into `storage_class` with its pin still running at `now_ms`
  // (restore_expiry_ms > now_ms): a restored copy stays until its expiry.
  struct Pin {
    std::string storage_class = {};
    std::int64_t now_ms = 0;
  };
  std::optional<Pin> refuses_pinned = {};

  std::vector<VersionEdit> edits = {};
};

struct VersionChangeResult {
  // The version was there and the guards held: the edits apply (a record they leave as it
  // was is not written again).
  bool applied = false;
  // ...and they changed the record: written.
  bool written = false;
  // The placements the edits took out (RemovePlacementsOn, ReplacePlacement), whose bytes
  // the caller frees once written.
  std::vector<Placement> removed;
  // The version as stored now, when it is there (changed or not).
  std::optional<ObjectRecord> record;
};

// Whether the placements hold the same data: the same tier and extents, in order.
bool SameExtents(const Placement& a, const Placement& b);

// Checks `change`'s guards on `version` (the stored record, which must be the version the
// change names) and applies its edits to it: false, changing nothing, when a guard fails.
// Appends what the edits took out to `removed`. Pure; the index calls it under the key's
// lock.
bool ApplyVersionChange(const VersionChange& change, ObjectRecord& version,
                        std::vector<Placement>& removed);

}  // namespace strata::metadata
