// RocksIndex: multipart uploads (multipart and parts column families).
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <set>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/keys.h"
#include "metadata/lifecycle.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {
namespace {

Error NoSuchUpload(const UploadId& upload_id) {
  return Error(ErrorCode::kNotFound, "no upload " + upload_id.str());
}

Result<void> CheckUploadId(const UploadId& id) {
  if (id.empty() || id.view().find('\0') != std::string_view::npos) {
    return Error(ErrorCode::kNotFound, "invalid upload id");
  }
  return Ok();
}

}  // namespace

Result<void> RocksIndex::CreateUpload(const UploadRecord& upload) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(upload.object.bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(upload.object.key));
  STRATA_RETURN_IF_ERROR(CheckUploadId(upload.upload_id));
  return GuardExceptions("create upload", [&]() -> Result<void> {
    std::shared_lock bucket_lock(BucketLock(upload.object.bucket));
    auto bucket = RequireBucket(upload.object.bucket);
    if (!bucket.ok()) {
      return std::move(bucket).error();
    }
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.Put(multipart_,
                                  UploadRowKey(upload.object.bucket.view(),
                                               upload.object.key.view(), upload.upload_id.view()),
                                  EncodeUpload(upload));
    // An AbortIncompleteMultipartUpload rule's due time is known from the start.
    auto abort_due = UploadAbortDue(bucket->lifecycle, upload, options_.lifecycle_day_ms);
    if (s.ok() && abort_due) {
      const LifecycleRow row{*abort_due, upload.object.bucket.str(), upload.object.key.str(),
                             upload.upload_id.str()};
      s = batch.Put(queues_, LifecycleRowKey(row), rocksdb::Slice());
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "create upload");
    }
    return Ok();
  });
}

Result<UploadRecord> RocksIndex::GetUpload(const BucketName& bucket, const ObjectKey& key,
                                           const UploadId& upload_id) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  STRATA_RETURN_IF_ERROR(CheckUploadId(upload_id));
  return GuardExceptions("get upload", [&]() -> Result<UploadRecord> {
    std::string value;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), multipart_,
                                 UploadRowKey(bucket.view(), key.view(), upload_id.view()), &value);
    if (s.IsNotFound()) {
      return NoSuchUpload(upload_id);
    }
    if (!s.ok()) {
      return FromStatus(s, "get upload");
    }
    return DecodeUpload(value);
  });
}

Result<std::optional<PartRecord>> RocksIndex::PutPart(const BucketName& bucket,
                                                      const ObjectKey& key,
                                                      const UploadId& upload_id,
                                                      const PartRecord& part) {
  STRATA_RETURN_IF_ERROR(CheckUploadId(upload_id));
  return GuardExceptions("put part", [&]() -> Result<std::optional<PartRecord>> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto upload = GetUpload(bucket, key, upload_id);
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    const std::string row = PartRowKey(upload_id.view(), part.number);
    std::string old_value;
    std::optional<PartRecord> replaced;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), parts_, row, &old_value);
    if (s.ok()) {
      auto old = DecodePart(old_value);
      if (!old.ok()) {
        return std::move(old).error();
      }
      replaced = std::move(old).value();
    } else if (!s.IsNotFound()) {
      return FromStatus(s, "put part");
    }
    rocksdb::WriteBatch batch;
    s = batch.Put(parts_, row, EncodePart(part));
    if (s.ok()) {
      s = StagePartUsage(bucket, replaced ? &*replaced : nullptr, &part, batch);
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "put part");
    }
    return replaced;
  });
}

Result<ListPartsPage> RocksIndex::ListParts(const UploadId& upload_id, std::uint32_t after,
                                            std::size_t max_parts) {
  STRATA_RETURN_IF_ERROR(CheckUploadId(upload_id));
  return GuardExceptions("list parts", [&]() -> Result<ListPartsPage> {
    ListPartsPage page;
    const std::string prefix = PartPrefix(upload_id.view());
    const std::string seek =
        after == 0xffffffffu ? PrefixSuccessor(prefix) : PartRowKey(upload_id.view(), after + 1);
    PrefixScan it(db_, parts_, prefix, seek);
    for (; it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
      if (page.parts.size() == max_parts) {
        page.truncated = true;
        break;
      }
      auto part = DecodePart(View(it->value()));
      if (!part.ok()) {
        return std::move(part).error();
      }
      page.parts.push_back(std::move(part).value());
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "list parts");
    }
    return page;
  });
}

Result<ListUploadsPage> RocksIndex::ListUploads(const BucketName& bucket, const std::string& prefix,
                                                const std::string& key_marker,
                                                const std::string& upload_id_marker,
                                                std::size_t max_uploads) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  return GuardExceptions("list uploads", [&]() -> Result<ListUploadsPage> {
    STRATA_RETURN_IF_ERROR(RequireBucket(bucket));
    ListUploadsPage page;
    const std::string bucket_prefix = ObjectBucketPrefix(bucket.view());
    const std::string scan_prefix = bucket_prefix + prefix;
    std::string seek = scan_prefix;
    if (!key_marker.empty()) {
      // Past every upload of key_marker (rows key_marker 0x00 ...), or past the marked one.
      std::string after = upload_id_marker.empty()
                              ? bucket_prefix + key_marker + '\x01'
                              : UploadRowKey(bucket.view(), key_marker, upload_id_marker) + '\0';
      seek = std::max(seek, after);
    }
    PrefixScan it(db_, multipart_, scan_prefix, seek);
    for (; it->Valid() && StartsWith(it->key(), scan_prefix); it->Next()) {
      if (page.uploads.size() == max_uploads) {
        page.truncated = true;
        break;
      }
      auto upload = DecodeUpload(View(it->value()));
      if (!upload.ok()) {
        return std::move(upload).error();
      }
      page.uploads.push_back(std::move(upload).value());
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "list uploads");
    }
    return page;
  });
}

Result<std::vector<PartRecord>> RocksIndex::AllParts(const UploadId& upload_id) {
  auto page = ListParts(upload_id, 0, static_cast<std::size_t>(-1));
  if (!page.ok()) {
    return std::move(page).error();
  }
  return std::move(page->parts);
}

Result<void> RocksIndex::StageUploadRemoval(const BucketName& bucket, const std::string& upload_row,
                                            const UploadId& upload_id, rocksdb::WriteBatch& batch,
                                            std::vector<PartRecord>& parts) {
  auto all = AllParts(upload_id);
  if (!all.ok()) {
    return std::move(all).error();
  }
  // Row by row rather than one range tombstone: tombstones that pile up slow reads.
  rocksdb::Status s = batch.Delete(multipart_, upload_row);
  for (auto part = all->begin(); s.ok() && part != all->end(); ++part) {
    s = batch.Delete(parts_, PartRowKey(upload_id.view(), part->number));
    if (s.ok()) {
      s = StagePartUsage(bucket, &*part, nullptr, batch);
    }
  }
  if (!s.ok()) {
    return FromStatus(s, "remove upload");
  }
  parts.insert(parts.end(), std::make_move_iterator(all->begin()),
               std::make_move_iterator(all->end()));
  return Ok();
}

Result<void> RocksIndex::DropUploads(const BucketName& bucket, rocksdb::WriteBatch& batch,
                                     std::vector<PartRecord>& parts) {
  const std::string prefix = ObjectBucketPrefix(bucket.view());
  PrefixScan it(db_, multipart_, prefix, prefix);
  for (; it->Valid() && StartsWith(it->key(), prefix); it->Next()) {
    auto upload = DecodeUpload(View(it->value()));
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    STRATA_RETURN_IF_ERROR(
        StageUploadRemoval(bucket, it->key().ToString(), upload->upload_id, batch, parts));
  }
  if (!it->status().ok()) {
    return FromStatus(it->status(), "drop uploads");
  }
  return Ok();
}

namespace {

// Whether every part the object was built from is still stored as the builder read it.
bool PartsStillStored(const std::vector<CompletionPart>& used,
                      const std::vector<PartRecord>& stored) {
  for (const auto& part : used) {
    auto it = std::lower_bound(
        stored.begin(), stored.end(), part.number,
        [](const PartRecord& p, std::uint32_t number) { return p.number < number; });
    if (it == stored.end() || it->number != part.number || it->tier != part.tier ||
        it->location != part.location) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<CompletedUpload> RocksIndex::CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                                   const UploadCompletion& completion,
                                                   const WriteCondition& condition) {
  return GuardExceptions("complete upload", [&]() -> Result<CompletedUpload> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto bucket_record = RequireBucket(bucket);
    if (!bucket_record.ok()) {
      return std::move(bucket_record).error();
    }
    auto upload = GetUpload(bucket, key, completion.upload_id);
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    rocksdb::WriteBatch batch;
    std::vector<PartRecord> removed;  // in number order, as AllParts reads them
    STRATA_RETURN_IF_ERROR(StageUploadRemoval(
        bucket, UploadRowKey(bucket.view(), key.view(), completion.upload_id.view()),
        completion.upload_id, batch, removed));
    if (!PartsStillStored(completion.parts, removed)) {
      return Error(ErrorCode::kInvalidPart, "a part was uploaded again during the completion",
                   /*retry=*/true);
    }
    ObjectRecord object = completion.object;
    object.bucket = bucket;
    object.key = key;
    StagedWriteback staged;
    auto replaced = StageCurrent(*bucket_record, object, condition, batch, staged);
    if (!replaced.ok()) {
      return std::move(replaced).error();
    }
    rocksdb::Status s = db_->Write(SyncedWrites(), &batch);
    if (!s.ok()) {
      return FromStatus(s, "complete upload");
    }
    ApplyWriteback(staged);
    std::set<std::string> used;
    for (const auto& placement : object.placements) {
      for (const auto& extent : placement.extents) {
        used.insert(placement.tier + '/' + extent.location);
      }
    }
    CompletedUpload done{std::move(object), std::move(replaced).value(), {}};
    for (auto& part : removed) {
      if (!used.contains(part.tier + '/' + part.location)) {
        done.unused_parts.push_back(std::move(part));
      }
    }
    return done;
  });
}

Result<std::vector<PartRecord>> RocksIndex::AbortUpload(const BucketName& bucket,
                                                        const ObjectKey& key,
                                                        const UploadId& upload_id) {
  return GuardExceptions("abort upload", [&]() -> Result<std::vector<PartRecord>> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto upload = GetUpload(bucket, key, upload_id);
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    rocksdb::WriteBatch batch;
    std::vector<PartRecord> parts;
    STRATA_RETURN_IF_ERROR(
        StageUploadRemoval(bucket, UploadRowKey(bucket.view(), key.view(), upload_id.view()),
                           upload_id, batch, parts));
    rocksdb::Status s = db_->Write(SyncedWrites(), &batch);
    if (!s.ok()) {
      return FromStatus(s, "abort upload");
    }
    return parts;
  });
}

}  // namespace strata::metadata
