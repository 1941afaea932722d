#include "storage/local/local_object_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "common/guard.h"
#include "storage/local/repairing_reader.h"

namespace strata::storage {

std::int64_t LocalObjectStore::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
      .count();
}

std::string TimeOrderedId(std::int64_t now_ms) {
  char time_hex[13];
  std::snprintf(time_hex, sizeof(time_hex), "%012llx",
                static_cast<unsigned long long>(now_ms) & 0xffffffffffffULL);
  return std::string(time_hex) + RandomHexId().substr(0, 20);
}

Error LocalObjectStore::NoSuchBucket(const BucketName& name) {
  return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist: " + name.str());
}

namespace {

// A bucket setting changed in the shared catalog (which mirrors it here before answering).
Result<void> UpdateShared(SharedCatalog& catalog, const BucketName& name,
                          const SharedCatalog::Mutation& mutate) {
  return GuardExceptions("update bucket", [&]() -> Result<void> {
    auto updated = catalog.Update(name, mutate);
    if (!updated.ok()) {
      return std::move(updated).error();
    }
    return Ok();
  });
}

}  // namespace

metadata::BucketRecord LocalObjectStore::NewBucket(const BucketName& name, const std::string& owner,
                                                   const std::string& region,
                                                   const std::string& upstream_tier) const {
  metadata::BucketRecord record{name, owner, NowMs(), region, ""};
  record.access.acl = {metadata::AclGrant{metadata::AclGrantee::kUser, owner,
                                          metadata::AclPermission::kFullControl}};
  if (!upstream_tier.empty()) {
    record.upstream_tier = upstream_tier;
    record.upstream_bucket = name.str();  // keys map one to one
  }
  return record;
}

Error LocalObjectStore::Taken(const metadata::BucketRecord& holder, const std::string& owner) {
  if (holder.owner == owner) {
    return Error(ErrorCode::kBucketAlreadyOwnedByYou,
                 "Your previous request to create the named bucket succeeded and you "
                 "already own it.");
  }
  return Error(ErrorCode::kBucketAlreadyExists, "The requested bucket name is not available.");
}

Result<metadata::BucketRecord> LocalObjectStore::CreateBucket(
    const BucketName& name, const std::string& owner, const std::string& region,
    const std::string& upstream_tier, const metadata::BucketAccess& access) {
  if (!IsValidBucketName(name.view())) {
    return Error(ErrorCode::kInvalidBucketName, "The specified bucket is not valid: " + name.str());
  }
  return GuardExceptions("create bucket", [&]() -> Result<metadata::BucketRecord> {
    metadata::BucketRecord record = NewBucket(name, owner, region, upstream_tier);
    const metadata::Acl private_acl = std::move(record.access.acl);
    record.access = access;
    if (record.access.acl.empty()) {  // none given: the owner's private ACL
      record.access.acl = private_acl;
    }
    if (record.access.object_lock.enabled) {
      record.versioning = "Enabled";  // object lock keeps versions
    }
    if (SharedCatalog* catalog = catalog_.load()) {
      // Taken once cluster-wide; the catalog mirrors the holder here before answering.
      auto claimed = catalog->Claim(record);
      if (!claimed.ok()) {
        return std::move(claimed).error();
      }
      if (claimed->created) {
        return record;
      }
      return Taken(claimed->holder, owner);
    }
    auto created = index_.CreateBucket(record);
    if (created.ok()) {
      return record;
    }
    if (created.error().code != ErrorCode::kAlreadyExists) {
      return std::move(created).error();
    }
    auto existing = index_.GetBucket(name);
    if (existing.ok()) {
      return Taken(*existing, owner);
    }
    return Error(ErrorCode::kBucketAlreadyExists, "The requested bucket name is not available.");
  });
}

Result<metadata::BucketRecord> LocalObjectStore::GetBucket(const BucketName& name) {
  auto bucket = index_.GetBucket(name);
  if (!bucket.ok() && bucket.error().code == ErrorCode::kNotFound) {
    return NoSuchBucket(name);
  }
  return bucket;
}

Result<void> LocalObjectStore::DeleteBucket(const BucketName& name) {
  if (SharedCatalog* catalog = catalog_.load()) {
    // Removed in etcd first (after its emptiness check); the mirrors follow.
    return GuardExceptions("delete bucket", [&] { return catalog->Remove(name); });
  }
  return DropLocalBucket(name);
}

Result<std::vector<metadata::BucketRecord>> LocalObjectStore::ListBuckets() {
  return index_.ListBuckets();
}

Result<void> LocalObjectStore::SetBucketVersioning(const BucketName& name,
                                                   const std::string& state) {
  if (SharedCatalog* catalog = catalog_.load()) {
    return UpdateShared(*catalog, name, [&state](metadata::BucketRecord& bucket) -> Result<void> {
      bucket.versioning = state;
      return Ok();
    });
  }
  return index_.SetBucketVersioning(name, state);
}

Result<void> LocalObjectStore::SetBucketTags(const BucketName& name, const metadata::Tags& tags) {
  if (SharedCatalog* catalog = catalog_.load()) {
    return UpdateShared(*catalog, name, [&tags](metadata::BucketRecord& bucket) -> Result<void> {
      bucket.tags = tags;
      return Ok();
    });
  }
  return index_.SetBucketTags(name, tags);
}

Result<void> LocalObjectStore::UpdateBucketAccess(const BucketName& name,
                                                  const AccessChange& change) {
  if (SharedCatalog* catalog = catalog_.load()) {
    return UpdateShared(*catalog, name, [&change](metadata::BucketRecord& bucket) {
      return change(bucket.access);
    });
  }
  return index_.UpdateBucketAccess(name, change);
}

Result<void> LocalObjectStore::SetBucketLifecycle(
    const BucketName& name, const std::vector<metadata::LifecycleRule>& rules) {
  if (SharedCatalog* catalog = catalog_.load()) {
    return UpdateShared(*catalog, name, [&rules](metadata::BucketRecord& bucket) -> Result<void> {
      bucket.lifecycle = rules;
      return Ok();
    });
  }
  return index_.SetBucketLifecycle(name, rules);
}

Result<VersionId> LocalObjectStore::NextVersionId(const BucketName& bucket) {
  auto record = GetBucket(bucket);
  if (!record.ok()) {
    return std::move(record).error();
  }
  return VersionIdFor(*record, NowMs());
}

VersionId VersionIdFor(const metadata::BucketRecord& bucket, std::int64_t now_ms) {
  if (bucket.versioning != "Enabled") {
    return VersionId("null");
  }
  return VersionId(TimeOrderedId(now_ms));
}

namespace {

// The delete marker a DELETE without a version id adds to a versioned bucket: a new id
// when versioning is Enabled, "null" (replacing the null version) when Suspended.
metadata::ObjectRecord NewDeleteMarker(const metadata::BucketRecord& bucket, const ObjectKey& key,
                                       std::int64_t now_ms) {
  metadata::ObjectRecord marker;
  marker.bucket = bucket.name;
  marker.key = key;
  marker.delete_marker = true;
  marker.last_modified_ms = now_ms;
  marker.version_id = VersionIdFor(bucket, now_ms);
  return marker;
}

}  // namespace

Result<void> LocalObjectStore::CommitVersion(const metadata::ObjectRecord& record,
                                             const metadata::WriteCondition& condition,
                                             const std::string& keep) {
  auto replaced = index_.PutObject(record, condition);
  if (!replaced.ok()) {
    return std::move(replaced).error();
  }
  if (replaced->has_value()) {
    RemoveData(**replaced, keep);
  }
  return Ok();
}

Result<std::unique_ptr<PendingWrite>> LocalObjectStore::BeginWrite(
    const BucketName& bucket, const std::vector<ChecksumAlgorithm>& checksums) {
  return GuardExceptions("begin write", [&]() -> Result<std::unique_ptr<PendingWrite>> {
    auto exists = GetBucket(bucket);
    if (!exists.ok()) {
      return std::move(exists).error();
    }
    auto file = tier_->CreateTemp();
    if (!file.ok()) {
      return std::move(file).error();
    }
    return std::unique_ptr<PendingWrite>(std::make_unique<LocalPendingWrite>(
        bucket, std::move(file).value(), checksums, VersionIdFor(*exists, NowMs())));
  });
}

Result<metadata::ObjectRecord> LocalObjectStore::CommitWrite(
    std::unique_ptr<PendingWrite> write, metadata::ObjectRecord record,
    const metadata::WriteCondition& condition) {
  return GuardExceptions("commit write", [&]() -> Result<metadata::ObjectRecord> {
    auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
    if (pending == nullptr) {
      return Error(ErrorCode::kInternal, "CommitWrite of a foreign PendingWrite");
    }
    if (pending->failed()) {
      return Error(ErrorCode::kInternal, "CommitWrite of a failed write");
    }
    if (record.bucket.empty()) {
      record.bucket = pending->bucket();
    } else if (record.bucket != pending->bucket()) {
      return Error(ErrorCode::kInternal, "CommitWrite into another bucket than BeginWrite's");
    }
    record.size = pending->size();
    record.etag = pending->Md5Hex();
    record.last_modified_ms = NowMs();
    // Chosen when the write began, from the bucket record read then: no second lookup.
    record.version_id = pending->version_id();
    record.delete_marker = false;
    record.checksums = pending->AllChecksums();
    record.checksum_type = "FULL_OBJECT";
    record.parts.clear();
    LocalTempFile& file = pending->file();
    record.placements = {metadata::Placement{tier_->name(), {{file.id(), record.size}}}};

    STRATA_RETURN_IF_ERROR(tier_->Promote(file));
    auto committed = CommitVersion(record, condition, file.id());
    if (!committed.ok()) {
      RemoveQuietly(file.id());
      return std::move(committed).error();
    }
    PlaceByClass(record);
    return record;
  });
}

Result<metadata::ObjectRecord> LocalObjectStore::CommitCachedCopy(
    std::unique_ptr<PendingWrite> write, metadata::ObjectRecord record) {
  return GuardExceptions("commit cached copy", [&]() -> Result<metadata::ObjectRecord> {
    auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
    if (pending == nullptr || pending->failed() || record.bucket != pending->bucket()) {
      return Error(ErrorCode::kInternal, "CommitCachedCopy of a foreign or failed write");
    }
    record.size = pending->size();
    record.version_id = VersionId("null");
    record.delete_marker = false;
    record.checksums = pending->AllChecksums();
    record.checksum_type = "FULL_OBJECT";
    record.parts.clear();
    LocalTempFile& file = pending->file();
    record.placements.insert(record.placements.begin(),
                             metadata::Placement{tier_->name(), {{file.id(), record.size}}});
    STRATA_RETURN_IF_ERROR(tier_->Promote(file));
    auto committed = CommitVersion(
        record, metadata::WriteCondition{.if_absent = true, .if_etag = std::nullopt}, file.id());
    if (!committed.ok()) {
      RemoveQuietly(file.id());
      return std::move(committed).error();
    }
    NotifyResident(record);
    return record;
  });
}

Result<bool> LocalObjectStore::DropCachedCopy(const BucketName& bucket, const ObjectKey& key,
                                              const metadata::UpstreamCopy& copy) {
  return GuardExceptions("drop cached copy", [&]() -> Result<bool> {
    auto dropped = index_.DropCleanVersion(bucket, key, copy);
    if (!dropped.ok()) {
      return std::move(dropped).error();
    }
    if (!dropped->has_value()) {
      return false;
    }
    RemoveData(**dropped, "");
    return true;
  });
}

Result<bool> LocalObjectStore::EvictLocalCopy(const metadata::ObjectRecord& record,
                                              const std::string& upstream_tier) {
  return MoveToUpstream(record, upstream_tier, record.storage_class);
}

Result<bool> LocalObjectStore::ExpireVersion(const metadata::ObjectRecord& version,
                                             bool as_current) {
  return GuardExceptions("expire version", [&]() -> Result<bool> {
    auto bucket = GetBucket(version.bucket);
    if (!bucket.ok()) {
      return std::move(bucket).error();
    }
    if (as_current && !bucket->versioning.empty()) {
      const metadata::ObjectRecord marker = NewDeleteMarker(*bucket, version.key, NowMs());
      metadata::WriteCondition condition;
      condition.if_newest = {version.version_id, version.last_modified_ms};
      auto committed = CommitVersion(marker, condition, "");
      if (!committed.ok() && committed.error().code == ErrorCode::kPreconditionFailed) {
        return false;
      }
      STRATA_RETURN_IF_ERROR(committed);
      return true;
    }
    auto removed = index_.DeleteVersion(version.bucket, version.key, version.version_id,
                                        std::optional<std::int64_t>(version.last_modified_ms),
                                        metadata::LockCheck{NowMs(), false});
    if (!removed.ok()) {
      // Replaced since, or kept by its object lock: lifecycle never expires a locked one.
      if (removed.error().code == ErrorCode::kNotFound ||
          removed.error().code == ErrorCode::kAccessDenied) {
        return false;
      }
      return std::move(removed).error();
    }
    RemoveData(*removed, "");
    return true;
  });
}

Result<bool> LocalObjectStore::MoveToUpstream(const metadata::ObjectRecord& record,
                                              const std::string& upstream_tier,
                                              const std::string& storage_class) {
  return GuardExceptions("move to upstream", [&]() -> Result<bool> {
    metadata::VersionChange change{
        .version_id = record.version_id,
        .etag = record.etag,
        .last_modified_ms = record.last_modified_ms,
        // Dirty, these bytes exist nowhere else.
        .requires_placement_on = upstream_tier,
        // An eviction of a restored copy waits for its expiry.
        .refuses_pinned = metadata::VersionChange::Pin{storage_class, NowMs()},
        .edits = {metadata::RemovePlacementsOn{LocalTierNames()},
                  metadata::SetStorageClass{storage_class}},
    };
    auto changed = index_.ChangeVersion(record.bucket, record.key, change);
    if (!changed.ok()) {
      return std::move(changed).error();
    }
    if (changed->written) {
      metadata::ObjectRecord freed;
      freed.placements = std::move(changed->removed);
      RemoveData(freed, "");
    }
    return changed->written;
  });
}

Result<bool> LocalObjectStore::RestoreLocalCopy(std::unique_ptr<PendingWrite> write,
                                                const metadata::ObjectRecord& record) {
  return GuardExceptions("restore local copy", [&]() -> Result<bool> {
    auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
    if (pending == nullptr || pending->failed() || pending->size() != record.size) {
      return Error(ErrorCode::kInternal, "RestoreLocalCopy of a foreign, failed or short write");
    }
    LocalTempFile& file = pending->file();
    STRATA_RETURN_IF_ERROR(tier_->Promote(file));
    const metadata::Placement local{tier_->name(), {{file.id(), record.size}}};
    metadata::VersionChange change{
        .version_id = record.version_id,
        .etag = record.etag,
        .last_modified_ms = record.last_modified_ms,
        .refuses_placements_on = LocalTierNames(),  // restored already
        .edits = {metadata::AddPlacementFirst{local}},
    };
    auto changed = index_.ChangeVersion(record.bucket, record.key, change);
    if (!changed.ok() || !changed->written) {
      RemoveQuietly(file.id());
      if (!changed.ok()) {
        return std::move(changed).error();
      }
      return false;
    }
    // Read back onto hot; a version whose class names another local tier goes there.
    const auto named = class_tiers_.find(record.storage_class);
    if (named != class_tiers_.end() && named->second != tier_->name()) {
      auto restored = index_.GetVersion(record.bucket, record.key, record.version_id);
      if (restored.ok()) {
        PlaceByClass(*restored);
      }
    } else {
      metadata::ObjectRecord restored = record;
      restored.placements.insert(restored.placements.begin(), local);
      NotifyResident(restored);
    }
    return true;
  });
}

Result<metadata::ObjectRecord> LocalObjectStore::HeadObject(const BucketName& bucket,
                                                            const ObjectKey& key) {
  auto record = index_.GetObject(bucket, key);
  if (!record.ok() && record.error().code == ErrorCode::kNotFound) {
    auto b = GetBucket(bucket);
    if (!b.ok()) {
      return std::move(b).error();
    }
    return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
  }
  return record;
}

Result<std::unique_ptr<ObjectReader>> LocalObjectStore::OpenObject(
    const metadata::ObjectRecord& record) {
  auto opened = OpenLocal(record);
  CopyRepairer* repairer = repairer_.load();
  if (repairer == nullptr) {
    return opened;
  }
  if (opened.ok()) {
    return MakeRepairingReader(*this, *repairer, record, std::move(opened).value());
  }
  if (opened.error().code == ErrorCode::kCorruption) {
    // A damaged trailer or a file of the wrong size: the first read repairs it.
    return MakeRepairingReader(*this, *repairer, record, std::move(opened).error());
  }
  return opened;
}

Result<void> LocalObjectStore::VerifyLocalTrailers(const metadata::ObjectRecord& record) {
  return GuardExceptions("verify trailers", [&]() -> Result<void> {
    const metadata::Placement* placement = LocalPlacement(record);
    if (placement == nullptr) {
      return Error(ErrorCode::kUnavailable, "object has no local copy");
    }
    const LocalTier* tier = LocalTierNamed(placement->tier);
    if (tier == nullptr) {
      return Error(ErrorCode::kUnavailable, "no local tier " + placement->tier);
    }
    for (const auto& extent : placement->extents) {
      STRATA_RETURN_IF_ERROR(tier->VerifyTrailer(extent.location, extent.size));
    }
    return Ok();
  });
}

Result<bool> LocalObjectStore::ReplaceLocalCopy(std::unique_ptr<PendingWrite> write,
                                                const metadata::ObjectRecord& record) {
  return GuardExceptions("replace local copy", [&]() -> Result<bool> {
    auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
    const metadata::Placement* damaged = LocalPlacement(record);
    if (pending == nullptr || pending->failed() || pending->size() != record.size ||
        damaged == nullptr) {
      return Error(ErrorCode::kInternal,
                   "ReplaceLocalCopy of a foreign, failed or short write, or of no local copy");
    }
    LocalTempFile& file = pending->file();
    STRATA_RETURN_IF_ERROR(tier_->Promote(file));
    const metadata::Placement local{tier_->name(), {{file.id(), record.size}}};
    // In the damaged copy's slot: the local copy stays the first one read. Repaired (or
    // evicted) meanwhile: nothing of ours to replace, nothing written.
    metadata::VersionChange change{
        .version_id = record.version_id,
        .etag = record.etag,
        .last_modified_ms = record.last_modified_ms,
        .edits = {metadata::ReplacePlacement{*damaged, local}},
    };
    auto changed = index_.ChangeVersion(record.bucket, record.key, change);
    if (!changed.ok() || !changed->written) {
      RemoveQuietly(file.id());
      if (!changed.ok()) {
        return std::move(changed).error();
      }
      return false;
    }
    metadata::ObjectRecord old;
    old.placements = std::move(changed->removed);
    RemoveData(old, "");
    // Fetched onto hot; a version whose class names another local tier goes back there.
    auto repaired = index_.GetVersion(record.bucket, record.key, record.version_id);
    if (repaired.ok()) {
      PlaceByClass(*repaired);
    }
    return true;
  });
}

Result<std::unique_ptr<ObjectReader>> LocalObjectStore::OpenLocal(
    const metadata::ObjectRecord& record) {
  return GuardExceptions("open object", [&]() -> Result<std::unique_ptr<ObjectReader>> {
    const metadata::Placement* placement = LocalPlacement(record);
    if (placement == nullptr) {
      return Error(ErrorCode::kUnavailable, "object has no local copy");
    }
    auto reader = ExtentReader::Open(*LocalTierNamed(placement->tier), placement->extents);
    if (!reader.ok()) {
      return std::move(reader).error();
    }
    if ((*reader)->size() != record.size) {
      return Error(ErrorCode::kCorruption, "extents of " + record.key.str() + " hold " +
                                               std::to_string((*reader)->size()) +
                                               " bytes, record " + std::to_string(record.size));
    }
    return std::unique_ptr<ObjectReader>(std::move(reader).value());
  });
}

Result<metadata::ObjectRecord> LocalObjectStore::HeadVersion(const BucketName& bucket,
                                                             const ObjectKey& key,
                                                             const VersionId& version_id) {
  auto record = index_.GetVersion(bucket, key, version_id);
  if (!record.ok() && record.error().code == ErrorCode::kNotFound) {
    auto any = HeadObject(bucket, key);
    if (!any.ok()) {
      return std::move(any).error();
    }
    return Error(ErrorCode::kNoSuchVersion,
                 "The specified version does not exist: " + version_id.str());
  }
  return record;
}

Result<metadata::ObjectRecord> LocalObjectStore::UpdateVersionSettings(
    const BucketName& bucket, const ObjectKey& key, const std::optional<VersionId>& version_id,
    const metadata::VersionSettingsChange& change) {
  auto updated = index_.UpdateVersionSettings(bucket, key, version_id, change);
  if (!updated.ok() && updated.error().code == ErrorCode::kNotFound) {
    if (!version_id) {
      return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
    }
    // Which answer: NoSuchKey when the key is gone altogether, else NoSuchVersion.
    auto any = HeadObject(bucket, key);
    if (!any.ok()) {
      return std::move(any).error();
    }
    return Error(ErrorCode::kNoSuchVersion,
                 "The specified version does not exist: " + version_id->str());
  }
  return updated;
}

Result<ObjectStore::Deleted> LocalObjectStore::DeleteObject(const BucketName& bucket,
                                                            const ObjectKey& key) {
  return GuardExceptions("delete object", [&]() -> Result<Deleted> {
    auto b = GetBucket(bucket);
    if (!b.ok()) {
      return std::move(b).error();
    }
    if (b->versioning.empty()) {
      auto removed = index_.DeleteObject(bucket, key);
      if (!removed.ok()) {
        return std::move(removed).error();
      }
      if (removed->has_value()) {
        RemoveData(**removed, "");
      }
      return Deleted{};
    }
    const metadata::ObjectRecord marker = NewDeleteMarker(*b, key, NowMs());
    STRATA_RETURN_IF_ERROR(CommitVersion(marker, metadata::WriteCondition{}, ""));
    return Deleted{marker.version_id, true};
  });
}

Result<ObjectStore::Deleted> LocalObjectStore::DeleteVersion(const BucketName& bucket,
                                                             const ObjectKey& key,
                                                             const VersionId& version_id,
                                                             bool bypass_governance) {
  return GuardExceptions("delete version", [&]() -> Result<Deleted> {
    auto removed = index_.DeleteVersion(bucket, key, version_id, std::nullopt,
                                        metadata::LockCheck{NowMs(), bypass_governance});
    if (!removed.ok()) {
      if (removed.error().code == ErrorCode::kNotFound) {
        return Deleted{version_id, false};
      }
      if (removed.error().code == ErrorCode::kNoSuchBucket) {
        return NoSuchBucket(bucket);
      }
      return std::move(removed).error();
    }
    RemoveData(*removed, "");
    return Deleted{version_id, removed->delete_marker};
  });
}

void LocalObjectStore::RemoveData(const metadata::ObjectRecord& old, const std::string& keep) {
  for (const auto& p : old.placements) {
    const LocalTier* tier = LocalTierNamed(p.tier);
    if (tier == nullptr) {
      continue;
    }
    for (const auto& extent : p.extents) {
      if (extent.location != keep) {
        RemoveQuietly(*tier, extent.location);
      }
    }
  }
}

void LocalObjectStore::RemoveParts(const std::vector<metadata::PartRecord>& parts) {
  for (const auto& part : parts) {
    if (const LocalTier* tier = LocalTierNamed(part.tier)) {
      RemoveQuietly(*tier, part.location);
    }
  }
}

void LocalObjectStore::RemoveQuietly(const std::string& id) { RemoveQuietly(*tier_, id); }

void LocalObjectStore::RemoveQuietly(const LocalTier& tier, const std::string& id) {
  auto removed = tier.Remove(id);
  if (!removed.ok()) {
    spdlog::warn("storage: could not remove data file {} on tier {}: {}", id, tier.name(),
                 removed.error().message);
  }
}

}  // namespace strata::storage
