// LocalObjectStore: which local tier holds a version, and moving versions between them
// (a storage class that names the warm tier, lifecycle transitions). A move gives the
// bytes a name on the target tier first (a hard link on one file system, a copy across
// two), then switches the record in one index write, then frees the old names: a crash
// at any point leaves the record naming whole, durable files (the orphan sweep takes
// whichever names no record holds).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "common/guard.h"
#include "storage/local/local_object_store.h"

namespace strata::storage {

const LocalTier* LocalObjectStore::LocalTierNamed(std::string_view name) const {
  if (name == tier_->name()) {
    return tier_.get();
  }
  for (const auto& t : others_) {
    if (name == t->name()) {
      return t.get();
    }
  }
  return nullptr;
}

std::vector<std::string> LocalObjectStore::LocalTierNames(std::string_view except) const {
  std::vector<std::string> names;
  if (tier_->name() != except) {
    names.push_back(tier_->name());
  }
  for (const auto& t : others_) {
    if (t->name() != except) {
      names.push_back(t->name());
    }
  }
  return names;
}

const metadata::Placement* LocalObjectStore::LocalPlacement(
    const metadata::ObjectRecord& record) const {
  for (const auto& p : record.placements) {
    if (LocalTierNamed(p.tier) != nullptr) {
      return &p;
    }
  }
  return nullptr;
}

Result<metadata::Placement> LocalObjectStore::AdoptPlacement(const metadata::Placement& from,
                                                             const LocalTier& to) {
  const LocalTier* source = LocalTierNamed(from.tier);
  if (source == nullptr) {
    return Error(ErrorCode::kInternal, "no local tier " + from.tier);
  }
  metadata::Placement adopted{to.name(), {}};
  for (const auto& extent : from.extents) {
    auto id = to.Adopt(*source, extent.location);
    if (!id.ok()) {
      for (const auto& made : adopted.extents) {
        RemoveQuietly(to, made.location);
      }
      return std::move(id).error();
    }
    adopted.extents.push_back({*id, extent.size});
  }
  return adopted;
}

Result<bool> LocalObjectStore::MoveToLocalTier(const metadata::ObjectRecord& record,
                                               const std::string& tier,
                                               const std::string& storage_class) {
  return GuardExceptions("move to local tier", [&]() -> Result<bool> {
    const LocalTier* to = LocalTierNamed(tier);
    if (to == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "no local tier " + tier);
    }
    const metadata::Placement* from = LocalPlacement(record);
    std::optional<metadata::Placement> adopted;
    if (from != nullptr && from->tier != tier) {
      auto made = AdoptPlacement(*from, *to);
      if (!made.ok()) {
        if (made.error().code == ErrorCode::kNotFound) {
          return false;  // the version was replaced or deleted since it was read
        }
        return std::move(made).error();
      }
      adopted = std::move(*made);
    }
    metadata::VersionChange change{
        .version_id = record.version_id,
        .etag = record.etag,
        .last_modified_ms = record.last_modified_ms,
    };
    if (adopted) {
      // Swap the local copy the bytes came from (gone if it changed meanwhile: evicted,
      // restored); any other placement stays.
      change.edits.push_back(metadata::ReplacePlacement{*from, *adopted});
    } else {
      // Not if of that class already, or if a local copy came back (read through) since
      // the caller looked: its bytes would stay on the wrong tier.
      change.refuses_storage_class = storage_class;
      change.refuses_placements_on = LocalTierNames(tier);
    }
    change.edits.push_back(metadata::SetStorageClass{storage_class});
    auto changed = index_.ChangeVersion(record.bucket, record.key, change);
    if (!changed.ok() || !changed->written) {
      if (adopted) {
        for (const auto& extent : adopted->extents) {
          RemoveQuietly(*to, extent.location);
        }
      }
      if (!changed.ok()) {
        return std::move(changed).error();
      }
      return false;
    }
    metadata::ObjectRecord old;
    old.placements = std::move(changed->removed);
    RemoveData(old, "");
    metadata::ObjectRecord moved = std::move(*changed->record);
    moved.bucket = record.bucket;
    moved.key = record.key;
    NotifyResident(moved);
    return true;
  });
}

void LocalObjectStore::PlaceByClass(metadata::ObjectRecord& record) {
  const auto named = class_tiers_.find(record.storage_class);
  const metadata::Placement* local = LocalPlacement(record);
  if (named == class_tiers_.end() || local == nullptr || local->tier == named->second) {
    NotifyResident(record);
    return;
  }
  auto moved = MoveToLocalTier(record, named->second, record.storage_class);
  if (!moved.ok() || !*moved) {
    spdlog::warn("storage: {}/{} stays on tier {}, not moved to {} ({}): {}", record.bucket.str(),
                 record.key.str(), local->tier, named->second, record.storage_class,
                 moved.ok() ? "it changed meanwhile" : moved.error().message);
    NotifyResident(record);
    return;
  }
  auto placed = index_.GetVersion(record.bucket, record.key, record.version_id);
  if (placed.ok()) {
    record.placements = std::move(placed->placements);
  }
}

void LocalObjectStore::NotifyResident(const metadata::ObjectRecord& record) const {
  if (residency_ && LocalPlacement(record) != nullptr) {
    residency_(record);
  }
}

}  // namespace strata::storage
