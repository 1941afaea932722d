// The write-back queue of RocksIndex: one row per key of an upstream-bound bucket whose
// latest change is not upstream yet (metadata/README.md). Rows are staged in the batch
// of the change itself, so a change and its item commit together or not at all.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>

#include "common/clock.h"
#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/keys.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {
namespace {

std::int64_t WallClockMs(const Clock* clock) {
  const Clock& c = clock != nullptr ? *clock : Clock::System();
  return std::chrono::duration_cast<std::chrono::milliseconds>(c.Now().time_since_epoch()).count();
}

// The version `copy` names: same id, ETag, time and kind (an unversioned key reuses
// "null", and so does a delete marker made while versioning is suspended).
bool IsVersion(const ObjectRecord& record, const UpstreamCopy& copy) {
  return record.version_id == copy.version_id && record.etag == copy.etag &&
         record.last_modified_ms == copy.last_modified_ms &&
         record.delete_marker == copy.delete_marker;
}

}  // namespace

Result<RocksIndex::StagedWriteback> RocksIndex::StageWriteback(
    const BucketRecord& bucket, const ObjectKey& key, std::uint64_t bytes,
    rocksdb::WriteBatch& batch, const std::optional<std::string>& upstream_delete) {
  StagedWriteback staged;
  if (bucket.upstream_tier.empty()) {
    return staged;
  }
  auto waiting = GetWriteback(bucket.name, key);
  if (!waiting.ok()) {
    return std::move(waiting).error();
  }
  WritebackItem item;
  // A versioned bucket pushes every version: its item counts them all.
  const bool whole_history = !bucket.versioning.empty();
  if (waiting->has_value()) {
    // Coalesce: the push that comes will carry the newest state; keep the first time.
    item = std::move(**waiting);
    if (whole_history) {
      bytes += item.bytes;
    }
    staged.bytes = static_cast<std::int64_t>(bytes) - static_cast<std::int64_t>(item.bytes);
    item.attempts = 0;
    item.retry_ms = 0;
    item.last_error.clear();
  } else {
    item.enqueued_ms = WallClockMs(options_.clock);
    staged.objects = 1;
    staged.bytes = static_cast<std::int64_t>(bytes);
  }
  // Under the key's lock every committed write advances the sequence, so the value
  // grows with each change of this key.
  item.sequence = db_->GetLatestSequenceNumber() + 1;
  item.bytes = bytes;
  if (upstream_delete) {
    item.upstream_deletes.push_back(*upstream_delete);
  }
  rocksdb::Status s =
      batch.Put(queues_, WritebackRowKey(bucket.name.view(), key.view()), EncodeWriteback(item));
  if (!s.ok()) {
    return FromStatus(s, "queue write-back");
  }
  return staged;
}

Result<RocksIndex::StagedWriteback> RocksIndex::StageMirroredWriteback(
    const BucketRecord& bucket, const ObjectKey& key, const std::optional<WritebackItem>& item,
    rocksdb::WriteBatch& batch) {
  StagedWriteback staged;
  if (bucket.upstream_tier.empty()) {
    return staged;  // an unbound bucket never has an item: no read on its replicas' writes
  }
  auto waiting = GetWriteback(bucket.name, key);
  if (!waiting.ok()) {
    return std::move(waiting).error();
  }
  if (waiting->has_value()) {
    staged.objects -= 1;
    staged.bytes -= static_cast<std::int64_t>((*waiting)->bytes);
  }
  const std::string row = WritebackRowKey(bucket.name.view(), key.view());
  rocksdb::Status s;
  if (item) {
    WritebackItem mirrored = *item;
    // The primary's sequence means nothing here: this index's next one marks the change,
    // as StageWriteback's does. Its failures were the primary's.
    mirrored.sequence = db_->GetLatestSequenceNumber() + 1;
    mirrored.attempts = 0;
    mirrored.retry_ms = 0;
    mirrored.last_error.clear();
    staged.objects += 1;
    staged.bytes += static_cast<std::int64_t>(mirrored.bytes);
    s = batch.Put(queues_, row, EncodeWriteback(mirrored));
  } else if (waiting->has_value()) {
    s = batch.Delete(queues_, row);
  }
  if (!s.ok()) {
    return FromStatus(s, "mirror write-back");
  }
  return staged;
}

void RocksIndex::ApplyWriteback(const StagedWriteback& staged) {
  if (staged.objects == 0 && staged.bytes == 0) {
    return;
  }
  std::lock_guard lock(writeback_totals_lock_);
  writeback_totals_.objects += staged.objects;
  writeback_totals_.bytes += staged.bytes;
}

WritebackTotals RocksIndex::WritebackBacklog() const {
  std::lock_guard lock(writeback_totals_lock_);
  return writeback_totals_;
}

Result<void> RocksIndex::LoadWritebackTotals() {
  WritebackTotals totals;
  auto scanned = ScanWriteback([&](const WritebackItem& item) {
    ++totals.objects;
    totals.bytes += item.bytes;
    return true;
  });
  if (!scanned.ok()) {
    return scanned;
  }
  std::lock_guard lock(writeback_totals_lock_);
  writeback_totals_ = totals;
  return Ok();
}

Result<void> RocksIndex::ScanWriteback(const std::function<bool(const WritebackItem&)>& fn) {
  return GuardExceptions("scan write-back", [&]() -> Result<void> {
    const std::string prefix(kWritebackRowPrefix);
    PrefixScan it(db_, queues_, prefix, prefix);
    for (; it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
      auto row = ParseWritebackRowKey(View(it->key()));
      auto item = DecodeWriteback(View(it->value()));
      if (!row || !item.ok()) {
        return Error(ErrorCode::kCorruption, "malformed write-back row");
      }
      item->bucket = BucketName(std::string(row->bucket));
      item->key = ObjectKey(std::string(row->key));
      if (!fn(*item)) {
        return Ok();
      }
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "scan write-back");
    }
    return Ok();
  });
}

Result<std::optional<WritebackItem>> RocksIndex::GetWriteback(const BucketName& bucket,
                                                              const ObjectKey& key) {
  return GuardExceptions("get write-back", [&]() -> Result<std::optional<WritebackItem>> {
    std::string value;
    rocksdb::Status s =
        db_->Get(ThreadReadOptions(), queues_, WritebackRowKey(bucket.view(), key.view()), &value);
    if (s.IsNotFound()) {
      return std::optional<WritebackItem>();
    }
    if (!s.ok()) {
      return FromStatus(s, "get write-back");
    }
    auto item = DecodeWriteback(value);
    if (!item.ok()) {
      return std::move(item).error();
    }
    item->bucket = bucket;
    item->key = key;
    return std::optional<WritebackItem>(std::move(item).value());
  });
}

Result<bool> RocksIndex::FinishWriteback(const WritebackItem& item,
                                         const std::optional<UpstreamCopy>& copy) {
  return GuardExceptions("finish write-back", [&]() -> Result<bool> {
    std::shared_lock bucket_lock(BucketLock(item.bucket));
    std::lock_guard key_lock(KeyLock(item.bucket, item.key));
    rocksdb::WriteBatch batch;
    if (copy) {
      auto staged = StageUpstreamCopy(item.bucket, item.key, *copy, batch);
      if (!staged.ok()) {
        return std::move(staged).error();
      }
    }
    auto waiting = GetWriteback(item.bucket, item.key);
    if (!waiting.ok()) {
      return std::move(waiting).error();
    }
    const bool done = waiting->has_value() && (*waiting)->sequence == item.sequence;
    if (done) {
      rocksdb::Status s =
          batch.Delete(queues_, WritebackRowKey(item.bucket.view(), item.key.view()));
      if (!s.ok()) {
        return FromStatus(s, "finish write-back");
      }
    }
    if (batch.Count() > 0) {
      rocksdb::Status s = db_->Write(SyncedWrites(), &batch);
      if (!s.ok()) {
        return FromStatus(s, "finish write-back");
      }
    }
    if (done) {
      ApplyWriteback({-1, -static_cast<std::int64_t>((*waiting)->bytes)});
    }
    return done;
  });
}

Result<bool> RocksIndex::StageUpstreamCopy(const BucketName& bucket, const ObjectKey& key,
                                           const UpstreamCopy& copy, rocksdb::WriteBatch& batch) {
  auto row = FindVersion(bucket, key, copy.version_id);
  if (!row.ok()) {
    return std::move(row).error();
  }
  // Gone or replaced meanwhile: the newer change has its own item.
  if (!row->has_value() || !IsVersion((*row)->record, copy)) {
    return false;
  }
  // Rewritten in place (same row key), like SetObjectTags: the version keeps its place.
  ObjectRecord& record = (*row)->record;
  const ObjectRecord before = record;
  std::erase_if(record.placements,
                [&](const Placement& p) { return p.tier == copy.placement.tier; });
  record.placements.push_back(copy.placement);
  rocksdb::Status s = batch.Put(objects_, (*row)->row_key, EncodeObject(record));
  if (s.ok()) {
    s = StageVersionUsage(bucket, &before, &record, batch);
  }
  if (!s.ok()) {
    return FromStatus(s, "record upstream copy");
  }
  return true;
}

Result<bool> RocksIndex::RecordUpstreamCopy(const BucketName& bucket, const ObjectKey& key,
                                            const UpstreamCopy& copy) {
  return GuardExceptions("record upstream copy", [&]() -> Result<bool> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    rocksdb::WriteBatch batch;
    auto staged = StageUpstreamCopy(bucket, key, copy, batch);
    if (!staged.ok() || !*staged) {
      return staged;
    }
    rocksdb::Status s = db_->Write(SyncedWrites(), &batch);
    if (!s.ok()) {
      return FromStatus(s, "record upstream copy");
    }
    return true;
  });
}

Result<std::vector<ObjectRecord>> RocksIndex::UnpushedVersions(const BucketName& bucket,
                                                               const ObjectKey& key,
                                                               std::string_view tier,
                                                               std::size_t max) {
  return GuardExceptions("unpushed versions", [&]() -> Result<std::vector<ObjectRecord>> {
    // Rows run newest first: keep the last `max` seen, so memory stays bounded however
    // long the key's history is.
    std::deque<ObjectRecord> oldest;
    STRATA_RETURN_IF_ERROR(ForEachVersionRow(bucket, key, [&](CurrentRow& row) {
      if (max > 0 && !HasCopyOn(row.record, tier)) {
        oldest.push_front(std::move(row.record));
        if (oldest.size() > max) {
          oldest.pop_back();
        }
      }
      return true;
    }));
    return std::vector<ObjectRecord>(std::make_move_iterator(oldest.begin()),
                                     std::make_move_iterator(oldest.end()));
  });
}

Result<std::optional<ObjectRecord>> RocksIndex::DropCleanVersion(const BucketName& bucket,
                                                                 const ObjectKey& key,
                                                                 const UpstreamCopy& copy) {
  return GuardExceptions("drop clean version", [&]() -> Result<std::optional<ObjectRecord>> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto current = FindCurrent(bucket, key);
    if (!current.ok()) {
      return std::move(current).error();
    }
    if (!current->has_value() || !IsVersion((*current)->record, copy)) {
      return std::optional<ObjectRecord>();
    }
    if (!HasCopyOn((*current)->record, copy.placement.tier)) {
      return std::optional<ObjectRecord>();  // dirty: the only copy of its bytes
    }
    if (IsLocked((*current)->record, 0)) {
      // Its lock lives in this record only (the upstream knows nothing of it): it stays.
      return std::optional<ObjectRecord>();
    }
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.Delete(objects_, (*current)->row_key);
    if (s.ok()) {
      s = StageVersionUsage(bucket, &(*current)->record, nullptr, batch);
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "drop clean version");
    }
    return std::optional<ObjectRecord>(std::move((*current)->record));
  });
}

Result<VersionChangeResult> RocksIndex::ChangeVersion(const BucketName& bucket,
                                                      const ObjectKey& key,
                                                      const VersionChange& change) {
  return GuardExceptions("change version", [&]() -> Result<VersionChangeResult> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto row = FindVersion(bucket, key, change.version_id);
    if (!row.ok()) {
      return std::move(row).error();
    }
    VersionChangeResult result;
    if (!row->has_value() ||
        !IsVersion((*row)->record, {change.version_id, change.etag, change.last_modified_ms, {}})) {
      return result;
    }
    const ObjectRecord& before = (*row)->record;
    ObjectRecord changed = before;
    result.applied = ApplyVersionChange(change, changed, result.removed);
    if (!result.applied || EncodeObject(changed) == EncodeObject(before)) {
      result.removed.clear();
      result.record = before;
      return result;
    }
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.Put(objects_, (*row)->row_key, EncodeObject(changed));
    if (s.ok()) {
      s = StageVersionUsage(bucket, &before, &changed, batch);
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "change version");
    }
    result.written = true;
    result.record = std::move(changed);
    return result;
  });
}

Result<void> RocksIndex::DeferWriteback(const WritebackItem& item, std::int64_t retry_ms,
                                        const std::string& error) {
  return GuardExceptions("defer write-back", [&]() -> Result<void> {
    std::lock_guard key_lock(KeyLock(item.bucket, item.key));
    auto waiting = GetWriteback(item.bucket, item.key);
    if (!waiting.ok()) {
      return std::move(waiting).error();
    }
    if (!waiting->has_value() || (*waiting)->sequence != item.sequence) {
      return Ok();  // a newer change replaced the item: it starts afresh
    }
    WritebackItem updated = std::move(**waiting);
    ++updated.attempts;
    updated.retry_ms = retry_ms;
    updated.last_error = error;
    rocksdb::Status s =
        db_->Put(SyncedWrites(), queues_, WritebackRowKey(item.bucket.view(), item.key.view()),
                 EncodeWriteback(updated));
    if (!s.ok()) {
      return FromStatus(s, "defer write-back");
    }
    return Ok();
  });
}

}  // namespace strata::metadata
