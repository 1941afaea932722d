// Lifecycle rules and the due-time queue of RocksIndex (metadata/README.md). A key's due
// row is staged in the batch of the change that makes it due, so the queue never misses a
// committed change, and the worker reads only the rows due now: its lag does not grow
// with the number of objects.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <limits>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/keys.h"
#include "metadata/lifecycle.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {
namespace {

// Versions of one key read to queue it when it changes. NewerNoncurrentVersions counts
// at most 100 in S3, so older ones never decide a due time the newer ones do not.
constexpr std::size_t kVersionsPerKeyDue = 102;

}  // namespace

Result<void> RocksIndex::StageLifecycleKey(const BucketRecord& bucket, const ObjectKey& key,
                                           const std::optional<ObjectRecord>& newest,
                                           const std::string& changed_row,
                                           const std::optional<ObjectRecord>& changed_to,
                                           rocksdb::WriteBatch& batch) {
  if (bucket.lifecycle.empty()) {
    return Ok();
  }
  std::vector<ObjectRecord> versions;
  if (newest) {
    versions.push_back(*newest);
  }
  STRATA_RETURN_IF_ERROR(ForEachVersionRow(bucket.name, key, [&](CurrentRow& row) {
    if (row.row_key != changed_row) {
      versions.push_back(std::move(row.record));
    } else if (changed_to) {
      versions.push_back(*changed_to);
    }
    return versions.size() < kVersionsPerKeyDue;
  }));
  return StageLifecycleDue(bucket, key, versions, batch);
}

Result<void> RocksIndex::StageLifecycleDue(const BucketRecord& bucket, const ObjectKey& key,
                                           const std::vector<ObjectRecord>& newest_first,
                                           rocksdb::WriteBatch& batch) {
  if (bucket.lifecycle.empty() || newest_first.empty()) {
    return Ok();
  }
  // Every action counts, even one due already: the worker decides what still applies.
  auto due = NextKeyDue(bucket.lifecycle, newest_first, std::numeric_limits<std::int64_t>::min(),
                        options_.lifecycle_day_ms, ClassRank());
  if (!due) {
    return Ok();
  }
  LifecycleRow row{*due, bucket.name.str(), key.str(), {}};
  rocksdb::Status s = batch.Put(queues_, LifecycleRowKey(row), rocksdb::Slice());
  if (!s.ok()) {
    return FromStatus(s, "queue lifecycle");
  }
  return Ok();
}

Result<void> RocksIndex::SetBucketLifecycle(const BucketName& name,
                                            const std::vector<LifecycleRule>& rules) {
  return GuardExceptions("set lifecycle", [&]() -> Result<void> {
    std::unique_lock lock(BucketLock(name));
    auto bucket = RequireBucket(name);
    if (!bucket.ok()) {
      return std::move(bucket).error();
    }
    bucket->lifecycle = rules;
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.Put(buckets_, name.str(), EncodeBucket(*bucket));
    if (s.ok() && !rules.empty()) {
      // The sequence this batch will commit at tells this change from any later one.
      const std::string token = std::to_string(db_->GetLatestSequenceNumber() + 1);
      s = batch.Put(queues_, ReseedRowKey(name.view()), token);
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    ForgetBucket(name);
    if (!s.ok()) {
      return FromStatus(s, "set lifecycle");
    }
    return Ok();
  });
}

Result<std::vector<LifecycleRow>> RocksIndex::DueLifecycleRows(std::int64_t now_ms,
                                                               std::size_t max) {
  return GuardExceptions("due lifecycle rows", [&]() -> Result<std::vector<LifecycleRow>> {
    std::vector<LifecycleRow> rows;
    const std::string prefix(kLifecycleRowPrefix);
    PrefixScan it(db_, queues_, prefix, prefix);
    for (; it->Valid() && StartsWith(it->key(), prefix) && rows.size() < max; it->Next()) {
      auto row = ParseLifecycleRowKey(View(it->key()));
      if (!row) {
        return Error(ErrorCode::kCorruption, "malformed lifecycle row");
      }
      if (row->due_ms > now_ms) {
        break;
      }
      rows.push_back(std::move(*row));
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "due lifecycle rows");
    }
    return rows;
  });
}

Result<void> RocksIndex::UpdateLifecycleRows(const std::vector<LifecycleRow>& add,
                                             const std::vector<LifecycleRow>& remove) {
  return GuardExceptions("update lifecycle rows", [&]() -> Result<void> {
    rocksdb::WriteBatch batch;
    rocksdb::Status s;
    for (const auto& row : remove) {
      if (s.ok()) {
        s = batch.Delete(queues_, LifecycleRowKey(row));
      }
    }
    for (const auto& row : add) {
      if (s.ok()) {
        s = batch.Put(queues_, LifecycleRowKey(row), rocksdb::Slice());
      }
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "update lifecycle rows");
    }
    return Ok();
  });
}

Result<std::vector<LifecycleReseed>> RocksIndex::LifecycleReseeds() {
  return GuardExceptions("lifecycle reseeds", [&]() -> Result<std::vector<LifecycleReseed>> {
    std::vector<LifecycleReseed> out;
    const std::string prefix(kReseedRowPrefix);
    PrefixScan it(db_, queues_, prefix, prefix);
    for (; it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
      std::string_view bucket = View(it->key()).substr(prefix.size());
      out.push_back({BucketName(std::string(bucket)), it->value().ToString()});
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "lifecycle reseeds");
    }
    return out;
  });
}

Result<void> RocksIndex::FinishReseed(const LifecycleReseed& reseed) {
  return GuardExceptions("finish reseed", [&]() -> Result<void> {
    // The bucket's stripe orders this against SetBucketLifecycle's newer mark.
    std::unique_lock lock(BucketLock(reseed.bucket));
    const std::string row = ReseedRowKey(reseed.bucket.view());
    std::string token;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), queues_, row, &token);
    if (s.IsNotFound() || (s.ok() && token != reseed.token)) {
      return Ok();
    }
    if (s.ok()) {
      s = db_->Delete(SyncedWrites(), queues_, row);
    }
    if (!s.ok()) {
      return FromStatus(s, "finish reseed");
    }
    return Ok();
  });
}

Result<std::vector<ObjectRecord>> RocksIndex::KeyVersions(const BucketName& bucket,
                                                          const ObjectKey& key, std::size_t max) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("key versions", [&]() -> Result<std::vector<ObjectRecord>> {
    std::vector<ObjectRecord> versions;
    if (max == 0) {
      return versions;
    }
    STRATA_RETURN_IF_ERROR(ForEachVersionRow(bucket, key, [&](CurrentRow& row) {
      versions.push_back(std::move(row.record));
      return versions.size() < max;
    }));
    return versions;
  });
}

}  // namespace strata::metadata
