#include "storage/local/local_object_store.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "common/guard.h"

namespace strata::storage {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Error LocalObjectStore::NoSuchBucket(const BucketName& name) {
  return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist: " + name.str());
}

Result<metadata::BucketRecord> LocalObjectStore::CreateBucket(const BucketName& name,
                                                              const std::string& owner,
                                                              const std::string& region) {
  if (!IsValidBucketName(name.view())) {
    return Error(ErrorCode::kInvalidBucketName, "The specified bucket is not valid: " + name.str());
  }
  return GuardExceptions("create bucket", [&]() -> Result<metadata::BucketRecord> {
    metadata::BucketRecord record{name, owner, NowMs(), region};
    auto created = index_.CreateBucket(record);
    if (created.ok()) {
      return record;
    }
    if (created.error().code != ErrorCode::kAlreadyExists) {
      return std::move(created).error();
    }
    auto existing = index_.GetBucket(name);
    if (existing.ok() && existing->owner == owner) {
      return Error(ErrorCode::kBucketAlreadyOwnedByYou,
                   "Your previous request to create the named bucket succeeded and you "
                   "already own it.");
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
  return GuardExceptions("delete bucket", [&]() -> Result<void> {
    auto deleted = index_.DeleteBucket(name);
    if (!deleted.ok()) {
      if (deleted.error().code == ErrorCode::kNotFound) {
        return NoSuchBucket(name);
      }
      return std::move(deleted).error();
    }
    RemoveParts(*deleted);  // of uploads discarded with the bucket
    return Ok();
  });
}

Result<std::vector<metadata::BucketRecord>> LocalObjectStore::ListBuckets() {
  return index_.ListBuckets();
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
    return std::unique_ptr<PendingWrite>(
        std::make_unique<LocalPendingWrite>(bucket, std::move(file).value(), checksums));
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
    record.version_id = VersionId("null");
    record.checksums = pending->AllChecksums();
    record.checksum_type = "FULL_OBJECT";
    record.parts.clear();
    LocalTempFile& file = pending->file();
    record.placements = {metadata::Placement{tier_->name(), {{file.id(), record.size}}}};

    STRATA_RETURN_IF_ERROR(tier_->Promote(file));
    auto replaced = index_.PutObject(record, condition);
    if (!replaced.ok()) {
      RemoveQuietly(file.id());
      return std::move(replaced).error();
    }
    if (replaced->has_value()) {
      RemoveData(**replaced, file.id());
    }
    return record;
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

const metadata::Placement* LocalObjectStore::LocalPlacement(
    const metadata::ObjectRecord& record) const {
  for (const auto& p : record.placements) {
    if (p.tier == tier_->name()) {
      return &p;
    }
  }
  return nullptr;
}

Result<std::unique_ptr<ObjectReader>> LocalObjectStore::OpenObject(
    const metadata::ObjectRecord& record) {
  return GuardExceptions("open object", [&]() -> Result<std::unique_ptr<ObjectReader>> {
    const metadata::Placement* placement = LocalPlacement(record);
    if (placement == nullptr) {
      return Error(ErrorCode::kUnavailable, "object has no copy on tier " + tier_->name());
    }
    auto reader = ExtentReader::Open(*tier_, placement->extents);
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

Result<void> LocalObjectStore::DeleteObject(const BucketName& bucket, const ObjectKey& key) {
  return GuardExceptions("delete object", [&]() -> Result<void> {
    auto removed = index_.DeleteObject(bucket, key);
    if (!removed.ok()) {
      return std::move(removed).error();
    }
    if (removed->has_value()) {
      RemoveData(**removed, "");
    }
    return Ok();
  });
}

void LocalObjectStore::RemoveData(const metadata::ObjectRecord& old, const std::string& keep) {
  for (const auto& p : old.placements) {
    if (p.tier != tier_->name()) {
      continue;
    }
    for (const auto& extent : p.extents) {
      if (extent.location != keep) {
        RemoveQuietly(extent.location);
      }
    }
  }
}

void LocalObjectStore::RemoveParts(const std::vector<metadata::PartRecord>& parts) {
  for (const auto& part : parts) {
    if (part.tier == tier_->name()) {
      RemoveQuietly(part.location);
    }
  }
}

void LocalObjectStore::RemoveQuietly(const std::string& id) {
  auto removed = tier_->Remove(id);
  if (!removed.ok()) {
    spdlog::warn("storage: could not remove data file {} on tier {}: {}", id, tier_->name(),
                 removed.error().message);
  }
}

}  // namespace strata::storage
