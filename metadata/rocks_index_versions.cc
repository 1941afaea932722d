// RocksIndex: versions other than the newest (S3 versioning).
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/keys.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {

Result<void> RocksIndex::ForEachVersionRow(const BucketName& bucket, const ObjectKey& key,
                                           const std::function<bool(CurrentRow&)>& fn) {
  const std::string prefix = ObjectKeyPrefix(bucket.view(), key.view());
  PrefixScan it(db_, objects_, prefix, prefix);
  for (; it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    auto record = DecodeObject(View(it->value()));
    if (!record.ok()) {
      return std::move(record).error();
    }
    CurrentRow row{it->key().ToString(), std::move(record).value()};
    row.record.bucket = bucket;
    row.record.key = key;
    if (!fn(row)) {
      return Ok();
    }
  }
  if (!it->status().ok()) {
    return FromStatus(it->status(), "read versions");
  }
  return Ok();
}

Result<std::optional<RocksIndex::CurrentRow>> RocksIndex::FindVersion(const BucketName& bucket,
                                                                      const ObjectKey& key,
                                                                      const VersionId& version_id) {
  std::optional<CurrentRow> found;
  STRATA_RETURN_IF_ERROR(ForEachVersionRow(bucket, key, [&](CurrentRow& row) {
    if (row.record.version_id != version_id) {
      return true;
    }
    found = std::move(row);
    return false;
  }));
  return found;
}

Result<ObjectRecord> RocksIndex::GetVersion(const BucketName& bucket, const ObjectKey& key,
                                            const VersionId& version_id) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("get version", [&]() -> Result<ObjectRecord> {
    auto row = FindVersion(bucket, key, version_id);
    if (!row.ok()) {
      return std::move(row).error();
    }
    if (!row->has_value()) {
      return Error(ErrorCode::kNotFound, "no version " + version_id.str() + " of " + key.str());
    }
    return std::move((*row)->record);
  });
}

Result<ObjectRecord> RocksIndex::DeleteVersion(
    const BucketName& bucket, const ObjectKey& key, const VersionId& version_id,
    const std::optional<std::int64_t>& if_last_modified_ms, const LockCheck& lock) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("delete version", [&]() -> Result<ObjectRecord> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto bucket_record = RequireBucket(bucket);
    if (!bucket_record.ok()) {
      return std::move(bucket_record).error();
    }
    auto row = FindVersion(bucket, key, version_id);
    if (!row.ok()) {
      return std::move(row).error();
    }
    if (!row->has_value() ||
        (if_last_modified_ms && (*row)->record.last_modified_ms != *if_last_modified_ms)) {
      return Error(ErrorCode::kNotFound, "no version " + version_id.str() + " of " + key.str());
    }
    STRATA_RETURN_IF_ERROR(CheckRemovable((*row)->record, lock));
    rocksdb::WriteBatch batch;
    // In a bound bucket the key's state changed (its newest version may be another now):
    // it is pushed again, and a version the upstream has goes there too.
    std::optional<std::string> upstream_delete;
    for (const auto& p : (*row)->record.placements) {
      if (!bucket_record->versioning.empty() && p.tier == bucket_record->upstream_tier &&
          !p.extents.empty()) {
        const auto id = DecodeUpstreamLocation(p.extents.front().location).version_id;
        // An object pushed before the upstream kept versions is its "null" version. A
        // marker without an id made none upstream: there is nothing to delete.
        if (!id.empty()) {
          upstream_delete = id;
        } else if (!(*row)->record.delete_marker) {
          upstream_delete = "null";
        }
      }
    }
    auto staged = StageWriteback(*bucket_record, key, 0, batch, upstream_delete);
    if (!staged.ok()) {
      return std::move(staged).error();
    }
    // Another version may be current now, or a delete marker the only one left.
    STRATA_RETURN_IF_ERROR(
        StageLifecycleKey(*bucket_record, key, std::nullopt, (*row)->row_key, std::nullopt, batch));
    rocksdb::Status s = batch.Delete(objects_, (*row)->row_key);
    if (s.ok()) {
      s = StageVersionUsage(bucket, &(*row)->record, nullptr, batch);
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "delete version");
    }
    ApplyWriteback(*staged);
    return std::move((*row)->record);
  });
}

Result<ObjectRecord> RocksIndex::UpdateVersionSettings(const BucketName& bucket,
                                                       const ObjectKey& key,
                                                       const std::optional<VersionId>& version_id,
                                                       const VersionSettingsChange& change) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("update version settings", [&]() -> Result<ObjectRecord> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto bucket_record = RequireBucket(bucket);
    if (!bucket_record.ok()) {
      return std::move(bucket_record).error();
    }
    auto row = version_id ? FindVersion(bucket, key, *version_id) : FindCurrent(bucket, key);
    if (!row.ok()) {
      return std::move(row).error();
    }
    if (!row->has_value()) {
      return Error(ErrorCode::kNotFound, "no such version of " + key.str());
    }
    ObjectRecord& record = (*row)->record;
    if (record.delete_marker) {
      return Error(ErrorCode::kMethodNotAllowed,
                   "The specified method is not allowed against this resource.");
    }
    STRATA_RETURN_IF_ERROR(ApplyVersionSettings(change, record));
    // Tag filters may select the version now (or no longer).
    rocksdb::WriteBatch batch;
    STRATA_RETURN_IF_ERROR(
        StageLifecycleKey(*bucket_record, key, std::nullopt, (*row)->row_key, record, batch));
    // The same row key: the version keeps its place in the key's stack.
    rocksdb::Status s = batch.Put(objects_, (*row)->row_key, EncodeObject(record));
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "update version settings");
    }
    return std::move(record);
  });
}

Result<ListVersionsPage> RocksIndex::ListVersions(const BucketName& bucket,
                                                  const std::string& prefix,
                                                  const std::string& key_marker,
                                                  const std::string& version_id_marker,
                                                  std::size_t max_versions) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  return GuardExceptions("list versions", [&]() -> Result<ListVersionsPage> {
    STRATA_RETURN_IF_ERROR(RequireBucket(bucket));
    ListVersionsPage page;
    const std::string bucket_prefix = ObjectBucketPrefix(bucket.view());
    const std::string scan_prefix = bucket_prefix + prefix;
    std::string seek = scan_prefix;
    // The row before the page's first, when the page starts inside a key.
    std::string resume_key;
    if (!key_marker.empty()) {
      std::string after = bucket_prefix + key_marker + '\x01';  // past all of key_marker
      if (!version_id_marker.empty() && key_marker.find('\0') == std::string::npos) {
        auto marked = FindVersion(bucket, ObjectKey(key_marker), VersionId(version_id_marker));
        if (!marked.ok()) {
          return std::move(marked).error();
        }
        if (marked->has_value()) {
          after = (*marked)->row_key + '\0';  // the next row, of this key or the next
          resume_key = key_marker;
        }
      }
      seek = std::max(seek, after);
    }
    PrefixScan it(db_, objects_, scan_prefix, seek);
    std::string last_key = resume_key;
    bool have_last = !resume_key.empty();
    for (; it->Valid() && StartsWith(it->key(), scan_prefix); it->Next()) {
      auto parsed = ParseObjectRowKey(View(it->key()));
      if (!parsed || parsed->bucket != bucket.view()) {
        return Error(ErrorCode::kCorruption, "malformed object row key");
      }
      if (page.versions.size() == max_versions) {
        page.truncated = true;
        break;
      }
      auto record = DecodeObject(View(it->value()));
      if (!record.ok()) {
        return std::move(record).error();
      }
      const bool latest = !(have_last && parsed->key == last_key);
      last_key.assign(parsed->key);
      have_last = true;
      record->bucket = bucket;
      record->key = ObjectKey(last_key);
      page.versions.push_back({std::move(record).value(), latest});
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "list versions");
    }
    return page;
  });
}

}  // namespace strata::metadata

namespace strata::metadata {

Result<std::vector<ObjectRecord>> RocksIndex::ReplaceKeyVersions(
    const BucketName& bucket, const ObjectKey& key, const std::vector<ObjectRecord>& newest_first,
    const std::optional<WritebackItem>& writeback) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  for (std::size_t i = 0; i < newest_first.size(); ++i) {
    const ObjectRecord& record = newest_first[i];
    if (record.bucket != bucket || record.key != key || record.version_id.empty()) {
      return Error(ErrorCode::kInvalidArgument, "a replica's version of another key");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (newest_first[j].version_id == record.version_id) {
        return Error(ErrorCode::kInvalidArgument,
                     "a replica's versions name " + record.version_id.str() + " twice");
      }
    }
  }
  return GuardExceptions("replace key versions", [&]() -> Result<std::vector<ObjectRecord>> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto bucket_record = RequireBucket(bucket);
    if (!bucket_record.ok()) {
      return std::move(bucket_record).error();
    }
    rocksdb::WriteBatch batch;
    std::vector<ObjectRecord> replaced;
    rocksdb::Status s;
    STRATA_RETURN_IF_ERROR(ForEachVersionRow(bucket, key, [&](CurrentRow& row) {
      s = batch.Delete(objects_, row.row_key);
      if (s.ok()) {
        s = StageVersionUsage(bucket, &row.record, nullptr, batch);
      }
      replaced.push_back(std::move(row.record));
      return s.ok();
    }));
    // Fresh sequences above every row written so far, the newest highest, so the stack
    // keeps the primary's order and later writes still sort before it.
    const std::uint64_t base = db_->GetLatestSequenceNumber() + 1;
    for (std::size_t i = 0; s.ok() && i < newest_first.size(); ++i) {
      const std::uint64_t sequence = base + (newest_first.size() - 1 - i);
      s = batch.Put(objects_, ObjectRowKey(bucket.view(), key.view(), sequence),
                    EncodeObject(newest_first[i]));
      if (s.ok()) {
        s = StageVersionUsage(bucket, nullptr, &newest_first[i], batch);
      }
    }
    if (!s.ok()) {
      return FromStatus(s, "replace key versions");
    }
    auto queued = StageMirroredWriteback(*bucket_record, key, writeback, batch);
    if (!queued.ok()) {
      return std::move(queued).error();
    }
    STRATA_RETURN_IF_ERROR(StageLifecycleDue(*bucket_record, key, newest_first, batch));
    s = db_->Write(SyncedWrites(), &batch);
    if (!s.ok()) {
      return FromStatus(s, "replace key versions");
    }
    ApplyWriteback(*queued);
    return replaced;
  });
}

}  // namespace strata::metadata
