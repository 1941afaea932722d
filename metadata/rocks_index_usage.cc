// RocksIndex: the usage counters (metadata/usage.h) and the full version scan.
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/keys.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"
#include "metadata/usage.h"

namespace strata::metadata {
namespace {

// Every operand is a change; the stored value their sum. A value that does not decode
// (it never should) counts as zero rather than failing every read of the row.
class UsageAddOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  const char* Name() const override { return "strata.UsageAdd.v1"; }
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    UsageCounts sum;
    if (existing != nullptr) {
      sum = DecodeUsage(View(*existing)).value_or(UsageCounts{});
    }
    const UsageCounts change = DecodeUsage(View(value)).value_or(UsageCounts{});
    sum.objects += change.objects;
    sum.bytes += change.bytes;
    *new_value = EncodeUsage(sum);
    return true;
  }
};

rocksdb::Status StageDelta(rocksdb::ColumnFamilyHandle* usage, const UsageDelta& delta,
                           rocksdb::WriteBatch& batch) {
  rocksdb::Status s;
  for (const auto& [row, change] : delta.Changes()) {
    s = batch.Merge(usage, UsageRowKey(row.first, row.second), EncodeUsage(change));
    if (!s.ok()) {
      break;
    }
  }
  return s;
}

// Releases a snapshot when the scan ends, however it ends.
struct SnapshotRead {
  explicit SnapshotRead(rocksdb::DB* db) : db(db), snapshot(db->GetSnapshot()) {
    options.snapshot = snapshot;
    options.total_order_seek = true;  // across every prefix of the prefixed families
    options.fill_cache = false;       // a full scan would evict the request path's blocks
  }
  ~SnapshotRead() { db->ReleaseSnapshot(snapshot); }
  SnapshotRead(const SnapshotRead&) = delete;
  SnapshotRead& operator=(const SnapshotRead&) = delete;

  rocksdb::DB* db;
  const rocksdb::Snapshot* snapshot;
  rocksdb::ReadOptions options;
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator() {
  return std::make_shared<UsageAddOperator>();
}

rocksdb::Status RocksIndex::StageVersionUsage(const BucketName& bucket, const ObjectRecord* before,
                                              const ObjectRecord* after,
                                              rocksdb::WriteBatch& batch) {
  UsageDelta delta;
  if (before != nullptr) {
    delta.AddVersion(bucket, *before, -1);
  }
  if (after != nullptr) {
    delta.AddVersion(bucket, *after, +1);
  }
  return StageDelta(usage_, delta, batch);
}

rocksdb::Status RocksIndex::StagePartUsage(const BucketName& bucket, const PartRecord* before,
                                           const PartRecord* after, rocksdb::WriteBatch& batch) {
  UsageDelta delta;
  if (before != nullptr) {
    delta.AddPart(bucket, *before, -1);
  }
  if (after != nullptr) {
    delta.AddPart(bucket, *after, +1);
  }
  return StageDelta(usage_, delta, batch);
}

Result<std::vector<UsageRow>> RocksIndex::Usage() {
  return GuardExceptions("read usage", [&]() -> Result<std::vector<UsageRow>> {
    std::vector<UsageRow> rows;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ThreadReadOptions(), usage_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const auto parsed = ParseUsageRowKey(View(it->key()));
      if (!parsed) {
        continue;  // the marker row
      }
      const auto counts = DecodeUsage(View(it->value()));
      if (!counts) {
        return Error(ErrorCode::kCorruption, "malformed usage row");
      }
      if (*counts == UsageCounts{}) {
        continue;
      }
      rows.push_back({BucketName(std::string(parsed->bucket)), std::string(parsed->tier),
                      counts->objects, counts->bytes});
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "read usage");
    }
    return rows;
  });
}

Result<void> RocksIndex::ForEachVersion(const std::function<bool(const ObjectRecord&)>& fn) {
  return GuardExceptions("scan versions", [&]() -> Result<void> {
    SnapshotRead read(db_);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read.options, objects_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const auto row = ParseObjectRowKey(View(it->key()));
      if (!row) {
        return Error(ErrorCode::kCorruption, "malformed object row key");
      }
      auto record = DecodeObject(View(it->value()));
      if (!record.ok()) {
        return std::move(record).error();
      }
      record->bucket = BucketName(std::string(row->bucket));
      record->key = ObjectKey(std::string(row->key));
      if (!fn(*record)) {
        return Ok();
      }
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "scan versions");
    }
    return Ok();
  });
}

Result<void> RocksIndex::CountUsageIfNeeded() {
  const std::string marker;
  std::string value;
  rocksdb::Status s = db_->Get(ThreadReadOptions(), usage_, marker, &value);
  if (s.ok()) {
    return Ok();
  }
  if (!s.IsNotFound()) {
    return FromStatus(s, "read usage marker");
  }
  // Nothing writes yet (the index is being opened): one pass over the versions and the
  // parts of uploads in progress gives every counter.
  UsageDelta total;
  STRATA_RETURN_IF_ERROR(ForEachVersion([&](const ObjectRecord& version) {
    total.AddVersion(version.bucket, version, +1);
    return true;
  }));
  SnapshotRead read(db_);
  std::unique_ptr<rocksdb::Iterator> uploads(db_->NewIterator(read.options, multipart_));
  for (uploads->SeekToFirst(); uploads->Valid(); uploads->Next()) {
    auto upload = DecodeUpload(View(uploads->value()));
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    auto parts = AllParts(upload->upload_id);
    if (!parts.ok()) {
      return std::move(parts).error();
    }
    for (const auto& part : *parts) {
      total.AddPart(upload->object.bucket, part, +1);
    }
  }
  if (!uploads->status().ok()) {
    return FromStatus(uploads->status(), "count usage");
  }
  rocksdb::WriteBatch batch;
  for (const auto& [row, counts] : total.Changes()) {
    s = batch.Put(usage_, UsageRowKey(row.first, row.second), EncodeUsage(counts));
    if (!s.ok()) {
      return FromStatus(s, "count usage");
    }
  }
  s = batch.Put(usage_, marker, "1");
  if (s.ok()) {
    s = db_->Write(SyncedWrites(), &batch);
  }
  if (!s.ok()) {
    return FromStatus(s, "count usage");
  }
  spdlog::info("metadata: usage counters counted from {} (bucket, tier) rows of records",
               total.Changes().size());
  return Ok();
}

}  // namespace strata::metadata
