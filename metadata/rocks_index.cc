#include "metadata/rocks_index.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/internal/bucket_record_cache.h"
#include "metadata/keys.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {
namespace {

constexpr const char* kBucketsCf = "buckets";
constexpr const char* kObjectsCf = "objects";
constexpr const char* kUsersCf = "users";
constexpr const char* kMultipartCf = "multipart";
constexpr const char* kQueuesCf = "queues";
constexpr const char* kPartsCf = "parts";
constexpr const char* kUsageCf = "usage";

// objects CF prefix: everything up to and including the 0x00 after the bucket name, so
// the prefix bloom filter answers "does this bucket have rows in this file".
class BucketPrefixTransform final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "strata.BucketPrefix.v1"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    const void* zero = std::memchr(key.data(), 0, key.size());
    const auto len = static_cast<std::size_t>(static_cast<const char*>(zero) - key.data()) + 1;
    return {key.data(), len};
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() > 0 && std::memchr(key.data(), 0, key.size()) != nullptr;
  }
};

// Every record of a column family, decoded, in key order (small families only: buckets,
// users).
template <typename Record, typename Decode>
Result<std::vector<Record>> ScanAll(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, Decode decode,
                                    std::string_view what) {
  std::vector<Record> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ThreadReadOptions(), cf));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto record = decode(View(it->value()));
    if (!record.ok()) {
      return std::move(record).error();
    }
    out.push_back(std::move(record).value());
  }
  if (!it->status().ok()) {
    return FromStatus(it->status(), what);
  }
  return out;
}

}  // namespace

rocksdb::WriteOptions RocksIndex::SyncedWrites() const {
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return wo;
}

Result<std::unique_ptr<Index>> Index::Open(const std::string& dir, IndexOptions options) {
  auto index = RocksIndex::OpenRocks(dir, options);
  if (!index.ok()) {
    return std::move(index).error();
  }
  return std::unique_ptr<Index>(std::move(index).value());
}

Result<std::unique_ptr<RocksIndex>> RocksIndex::OpenRocks(const std::string& dir,
                                                          IndexOptions options) {
  return GuardExceptions("open index", [&]() -> Result<std::unique_ptr<RocksIndex>> {
    rocksdb::DBOptions db_options;
    db_options.create_if_missing = true;
    db_options.create_missing_column_families = true;
    db_options.keep_log_file_num = 4;
    db_options.max_background_jobs = 2;

    // One block cache for every column family, sized by the config: RocksDB's own default
    // (8 MiB per family) holds the blocks of about 10^5 object rows, so with a larger index
    // each HEAD or GET of a key not read lately costs a pread and a decompression.
    rocksdb::BlockBasedTableOptions plain_table;
    plain_table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
    rocksdb::ColumnFamilyOptions default_cf;
    default_cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(plain_table));
    rocksdb::ColumnFamilyOptions objects_cf;
    objects_cf.prefix_extractor = std::make_shared<BucketPrefixTransform>();
    objects_cf.memtable_prefix_bloom_size_ratio = 0.05;
    rocksdb::BlockBasedTableOptions table = plain_table;
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    table.whole_key_filtering = false;  // rows are only ever found by seeking
    objects_cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    rocksdb::ColumnFamilyOptions usage_cf = default_cf;
    usage_cf.merge_operator = NewUsageMergeOperator();

    // Open every CF the directory already has (a newer strata may have added some),
    // plus ours.
    std::vector<std::string> names;
    rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(db_options, dir, &names);
    if (!listed.ok()) {
      names.clear();
    }
    for (const char* ours : {rocksdb::kDefaultColumnFamilyName.c_str(), kBucketsCf, kObjectsCf,
                             kUsersCf, kMultipartCf, kQueuesCf, kPartsCf, kUsageCf}) {
      if (std::find(names.begin(), names.end(), ours) == names.end()) {
        names.emplace_back(ours);
      }
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& name : names) {
      // Rows of objects, uploads and parts all start with a 0x00-terminated prefix
      // (bucket, or upload id) that scans stay inside.
      const bool prefixed = name == kObjectsCf || name == kMultipartCf || name == kPartsCf;
      descriptors.emplace_back(name,
                               prefixed ? objects_cf : (name == kUsageCf ? usage_cf : default_cf));
    }

    rocksdb::DB* db = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::Status s = rocksdb::DB::Open(db_options, dir, descriptors, &handles, &db);
    if (!s.ok()) {
      if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
        return Error(ErrorCode::kUnavailable, "index " + dir + " is in use: " + s.ToString());
      }
      return FromStatus(s, "open index " + dir);
    }
    std::unique_ptr<RocksIndex> index(new RocksIndex(db, std::move(handles), options));
    STRATA_RETURN_IF_ERROR(index->LoadWritebackTotals());
    STRATA_RETURN_IF_ERROR(index->CountUsageIfNeeded());
    return index;
  });
}

RocksIndex::RocksIndex(rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
                       IndexOptions options)
    : db_(db),
      handles_(std::move(handles)),
      options_(options),
      bucket_cache_(std::make_unique<internal::BucketRecordCache>()) {
  for (auto* h : handles_) {
    if (h->GetName() == kBucketsCf) {
      buckets_ = h;
    } else if (h->GetName() == kObjectsCf) {
      objects_ = h;
    } else if (h->GetName() == kUsersCf) {
      users_ = h;
    } else if (h->GetName() == kMultipartCf) {
      multipart_ = h;
    } else if (h->GetName() == kPartsCf) {
      parts_ = h;
    } else if (h->GetName() == kQueuesCf) {
      queues_ = h;
    } else if (h->GetName() == kUsageCf) {
      usage_ = h;
    }
  }
}

RocksIndex::~RocksIndex() {
  for (auto* h : handles_) {
    (void)db_->DestroyColumnFamilyHandle(h);
  }
  (void)db_->Close();
  delete db_;
}

void RocksIndex::ForgetBucket(const BucketName& name) { bucket_cache_->Forget(name.view()); }

std::shared_mutex& RocksIndex::BucketLock(const BucketName& bucket) {
  return bucket_locks_[std::hash<std::string_view>{}(bucket.view()) % kBucketStripes];
}

std::mutex& RocksIndex::KeyLock(const BucketName& bucket, const ObjectKey& key) {
  const std::size_t h =
      std::hash<std::string_view>{}(bucket.view()) * 31 + std::hash<std::string_view>{}(key.view());
  return key_locks_[h % kKeyStripes];
}

Result<bool> RocksIndex::BucketExists(const BucketName& name) {
  std::string value;
  rocksdb::Status s = db_->Get(ThreadReadOptions(), buckets_, name.str(), &value);
  if (s.IsNotFound()) {
    return false;
  }
  if (!s.ok()) {
    return FromStatus(s, "read bucket");
  }
  return true;
}

Result<void> RocksIndex::CreateBucket(const BucketRecord& bucket) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket.name));
  return GuardExceptions("create bucket", [&]() -> Result<void> {
    std::unique_lock lock(BucketLock(bucket.name));
    auto exists = BucketExists(bucket.name);
    if (!exists.ok()) {
      return std::move(exists).error();
    }
    if (*exists) {
      return Error(ErrorCode::kAlreadyExists, "bucket " + bucket.name.str() + " exists");
    }
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.Put(buckets_, bucket.name.str(), EncodeBucket(bucket));
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    ForgetBucket(bucket.name);
    if (!s.ok()) {
      return FromStatus(s, "create bucket");
    }
    return Ok();
  });
}

Result<BucketRecord> RocksIndex::GetBucket(const BucketName& name) {
  return GuardExceptions("get bucket", [&]() -> Result<BucketRecord> {
    internal::BucketRecordCache::Miss miss;
    if (auto cached = bucket_cache_->Find(name.view(), &miss)) {
      return std::move(*cached);
    }
    // Pinned, not copied: a record with a policy or CORS rules runs to kilobytes.
    rocksdb::PinnableSlice value;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), buckets_, name.str(), &value);
    if (s.IsNotFound()) {
      return Error(ErrorCode::kNotFound, "no bucket " + name.str());
    }
    if (!s.ok()) {
      return FromStatus(s, "get bucket");
    }
    auto record = DecodeBucket(std::string_view(value.data(), value.size()));
    if (record.ok()) {
      bucket_cache_->Keep(*record, value.size(), miss);
    }
    return record;
  });
}

Result<std::vector<PartRecord>> RocksIndex::DeleteBucket(const BucketName& name) {
  return GuardExceptions("delete bucket", [&]() -> Result<std::vector<PartRecord>> {
    std::unique_lock lock(BucketLock(name));
    auto exists = BucketExists(name);
    if (!exists.ok()) {
      return std::move(exists).error();
    }
    if (!*exists) {
      return Error(ErrorCode::kNoSuchBucket, "no bucket " + name.str());
    }
    // Empty? Object writers hold this stripe shared, so nothing can appear meanwhile.
    const std::string prefix = ObjectBucketPrefix(name.view());
    PrefixScan it(db_, objects_, prefix, prefix);
    if (it->Valid()) {
      return Error(ErrorCode::kBucketNotEmpty, "bucket " + name.str() + " is not empty");
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "delete bucket");
    }
    rocksdb::WriteBatch batch;
    std::vector<PartRecord> parts;
    STRATA_RETURN_IF_ERROR(DropUploads(name, batch, parts));
    // The counters' rows go with the bucket (after the parts' merges, so nothing is left).
    PrefixScan usage(db_, usage_, prefix, prefix);
    rocksdb::Status s;
    for (; s.ok() && usage->Valid(); usage->Next()) {
      s = batch.Delete(usage_, usage->key());
    }
    if (s.ok() && !usage->status().ok()) {
      s = usage->status();
    }
    if (s.ok()) {
      s = batch.Delete(buckets_, name.str());
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    ForgetBucket(name);
    if (!s.ok()) {
      return FromStatus(s, "delete bucket");
    }
    return parts;
  });
}

Result<std::vector<BucketRecord>> RocksIndex::ListBuckets() {
  return GuardExceptions("list buckets", [&] {
    return ScanAll<BucketRecord>(db_, buckets_, DecodeBucket, "list buckets");
  });
}

Result<std::optional<RocksIndex::CurrentRow>> RocksIndex::FindCurrent(const BucketName& bucket,
                                                                      const ObjectKey& key) {
  const std::string prefix = ObjectKeyPrefix(bucket.view(), key.view());
  PrefixScan it(db_, objects_, prefix, prefix);
  if (!it->Valid()) {
    if (!it->status().ok()) {
      return FromStatus(it->status(), "read object");
    }
    return std::optional<CurrentRow>();
  }
  // Rows of this key: prefix followed by exactly the 8-byte inverted sequence.
  if (!StartsWith(it->key(), prefix) || it->key().size() != prefix.size() + 8) {
    return Error(ErrorCode::kCorruption, "malformed object row key");
  }
  auto record = DecodeObject(View(it->value()));
  if (!record.ok()) {
    return std::move(record).error();
  }
  CurrentRow row{it->key().ToString(), std::move(record).value()};
  row.record.bucket = bucket;
  row.record.key = key;
  return std::optional<CurrentRow>(std::move(row));
}

IndexCacheStats RocksIndex::BlockCache() const {
  // Every family shares the cache, so the objects family's figures are the whole cache's.
  IndexCacheStats stats;
  db_->GetIntProperty(objects_, rocksdb::DB::Properties::kBlockCacheCapacity, &stats.capacity);
  db_->GetIntProperty(objects_, rocksdb::DB::Properties::kBlockCacheUsage, &stats.used);
  return stats;
}

Result<BucketRecord> RocksIndex::RequireBucket(const BucketName& bucket) {
  auto record = GetBucket(bucket);
  if (!record.ok() && record.error().code == ErrorCode::kNotFound) {
    return Error(ErrorCode::kNoSuchBucket, "no bucket " + bucket.str());
  }
  return record;
}

Result<std::optional<ObjectRecord>> RocksIndex::StageCurrent(const BucketRecord& bucket,
                                                             const ObjectRecord& object,
                                                             const WriteCondition& condition,
                                                             rocksdb::WriteBatch& batch,
                                                             StagedWriteback& staged) {
  const bool bound = !bucket.upstream_tier.empty();
  const bool clean = bound && HasCopyOn(object, bucket.upstream_tier);
  if (clean) {
    // A read-through fill: the upstream's copy must still be the key's state, so a change
    // waiting to be pushed (an overwrite, or a delete) wins over it.
    auto waiting = GetWriteback(object.bucket, object.key);
    if (!waiting.ok()) {
      return std::move(waiting).error();
    }
    if (waiting->has_value()) {
      return Error(ErrorCode::kPreconditionFailed, "a local change of the key is not pushed yet");
    }
  } else {
    auto item = StageWriteback(bucket, object.key, object.delete_marker ? 0 : object.size, batch,
                               std::nullopt);
    if (!item.ok()) {
      return std::move(item).error();
    }
    staged = *item;
  }
  auto current = FindCurrent(object.bucket, object.key);
  if (!current.ok()) {
    return std::move(current).error();
  }
  const bool exists = current->has_value() && !(*current)->record.delete_marker;
  if (condition.if_absent && exists) {
    return Error(ErrorCode::kPreconditionFailed,
                 "At least one of the pre-conditions you specified did not hold");
  }
  if (condition.if_newest &&
      (!current->has_value() || (*current)->record.version_id != condition.if_newest->version_id ||
       (*current)->record.last_modified_ms != condition.if_newest->last_modified_ms)) {
    return Error(ErrorCode::kPreconditionFailed, "the newest version changed");
  }
  if (condition.if_etag) {
    if (!exists) {
      return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
    }
    if ((*current)->record.etag != *condition.if_etag) {
      return Error(ErrorCode::kPreconditionFailed,
                   "At least one of the pre-conditions you specified did not hold");
    }
  }
  // The version this one replaces: the newest when the ids match (always, unversioned),
  // else an older one with the same id (a "null" version under later versions).
  std::optional<CurrentRow> replaced;
  if (current->has_value() && (*current)->record.version_id == object.version_id) {
    replaced = std::move(*current);
  } else if (current->has_value() && object.version_id.str() == "null") {
    auto older = FindVersion(object.bucket, object.key, object.version_id);
    if (!older.ok()) {
      return std::move(older).error();
    }
    replaced = std::move(*older);
  }
  // Each committed write advances RocksDB's sequence, so under the key lock every new
  // row sorts before the older ones.
  const std::uint64_t sequence = db_->GetLatestSequenceNumber() + 1;
  rocksdb::Status s;
  if (replaced) {
    s = batch.Delete(objects_, replaced->row_key);
  }
  if (s.ok()) {
    s = batch.Put(objects_, ObjectRowKey(object.bucket.view(), object.key.view(), sequence),
                  EncodeObject(object));
  }
  if (s.ok()) {
    s = StageVersionUsage(bucket.name, replaced ? &replaced->record : nullptr, &object, batch);
  }
  if (!s.ok()) {
    return FromStatus(s, "put object");
  }
  STRATA_RETURN_IF_ERROR(StageLifecycleKey(bucket, object.key, object,
                                           replaced ? replaced->row_key : "", std::nullopt, batch));
  if (!replaced) {
    return std::optional<ObjectRecord>();
  }
  return std::optional<ObjectRecord>(std::move(replaced->record));
}

Result<void> RocksIndex::UpdateBucket(const BucketName& name,
                                      const std::function<void(BucketRecord&)>& change) {
  return UpdateBucketIf(name, [&change](BucketRecord& bucket) -> Result<void> {
    change(bucket);
    return Ok();
  });
}

Result<void> RocksIndex::UpdateBucketIf(const BucketName& name,
                                        const std::function<Result<void>(BucketRecord&)>& change) {
  return GuardExceptions("update bucket", [&]() -> Result<void> {
    std::unique_lock lock(BucketLock(name));
    auto bucket = GetBucket(name);
    if (!bucket.ok()) {
      if (bucket.error().code == ErrorCode::kNotFound) {
        return Error(ErrorCode::kNoSuchBucket, "no bucket " + name.str());
      }
      return std::move(bucket).error();
    }
    STRATA_RETURN_IF_ERROR(change(*bucket));
    rocksdb::Status s = db_->Put(SyncedWrites(), buckets_, name.str(), EncodeBucket(*bucket));
    ForgetBucket(name);
    if (!s.ok()) {
      return FromStatus(s, "update bucket");
    }
    return Ok();
  });
}

Result<void> RocksIndex::SetBucketVersioning(const BucketName& name, const std::string& state) {
  return UpdateBucket(name, [&](BucketRecord& bucket) { bucket.versioning = state; });
}

Result<void> RocksIndex::SetBucketTags(const BucketName& name, const Tags& tags) {
  return UpdateBucket(name, [&](BucketRecord& bucket) { bucket.tags = tags; });
}

Result<void> RocksIndex::UpdateBucketAccess(
    const BucketName& name, const std::function<Result<void>(BucketAccess&)>& change) {
  return UpdateBucketIf(name, [&change](BucketRecord& bucket) { return change(bucket.access); });
}

Result<std::optional<ObjectRecord>> RocksIndex::PutObject(const ObjectRecord& object,
                                                          const WriteCondition& condition) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(object.bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(object.key));
  return GuardExceptions("put object", [&]() -> Result<std::optional<ObjectRecord>> {
    std::shared_lock bucket_lock(BucketLock(object.bucket));
    std::lock_guard key_lock(KeyLock(object.bucket, object.key));
    auto bucket = RequireBucket(object.bucket);
    if (!bucket.ok()) {
      return std::move(bucket).error();
    }
    rocksdb::WriteBatch batch;
    StagedWriteback staged;
    auto replaced = StageCurrent(*bucket, object, condition, batch, staged);
    if (!replaced.ok()) {
      return replaced;
    }
    rocksdb::Status s = db_->Write(SyncedWrites(), &batch);
    if (!s.ok()) {
      return FromStatus(s, "put object");
    }
    ApplyWriteback(staged);
    return replaced;
  });
}

Result<ObjectRecord> RocksIndex::GetObject(const BucketName& bucket, const ObjectKey& key) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("get object", [&]() -> Result<ObjectRecord> {
    auto current = FindCurrent(bucket, key);
    if (!current.ok()) {
      return std::move(current).error();
    }
    if (!current->has_value()) {
      return Error(ErrorCode::kNotFound, "no key " + key.str());
    }
    return std::move((*current)->record);
  });
}

Result<std::optional<ObjectRecord>> RocksIndex::DeleteObject(const BucketName& bucket,
                                                             const ObjectKey& key) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  STRATA_RETURN_IF_ERROR(CheckObjectKey(key));
  return GuardExceptions("delete object", [&]() -> Result<std::optional<ObjectRecord>> {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    auto bucket_record = RequireBucket(bucket);
    if (!bucket_record.ok()) {
      return std::move(bucket_record).error();
    }
    auto current = FindCurrent(bucket, key);
    if (!current.ok()) {
      return std::move(current).error();
    }
    // In a bound bucket the upstream may hold the key even when the index does not (it
    // was never read through), so the delete is queued either way.
    const bool bound = !bucket_record->upstream_tier.empty();
    if (!current->has_value() && !bound) {
      return std::optional<ObjectRecord>();
    }
    rocksdb::WriteBatch batch;
    auto staged = StageWriteback(*bucket_record, key, 0, batch, std::nullopt);
    if (!staged.ok()) {
      return std::move(staged).error();
    }
    rocksdb::Status s;
    if (current->has_value()) {
      s = batch.Delete(objects_, (*current)->row_key);
      if (s.ok()) {
        s = StageVersionUsage(bucket, &(*current)->record, nullptr, batch);
      }
    }
    if (s.ok()) {
      s = db_->Write(SyncedWrites(), &batch);
    }
    if (!s.ok()) {
      return FromStatus(s, "delete object");
    }
    ApplyWriteback(*staged);
    if (!current->has_value()) {
      return std::optional<ObjectRecord>();
    }
    return std::optional<ObjectRecord>(std::move((*current)->record));
  });
}

Result<ListObjectsPage> RocksIndex::ListObjects(const BucketName& bucket, const std::string& prefix,
                                                const std::string& start_after,
                                                std::size_t max_keys) {
  STRATA_RETURN_IF_ERROR(CheckBucketName(bucket));
  return GuardExceptions("list objects", [&]() -> Result<ListObjectsPage> {
    auto exists = BucketExists(bucket);
    if (!exists.ok()) {
      return std::move(exists).error();
    }
    if (!*exists) {
      return Error(ErrorCode::kNoSuchBucket, "no bucket " + bucket.str());
    }
    ListObjectsPage page;
    if (max_keys == 0) {
      return page;
    }
    const std::string bucket_prefix = ObjectBucketPrefix(bucket.view());
    const std::string scan_prefix = bucket_prefix + prefix;
    std::string seek = scan_prefix;
    if (!start_after.empty()) {
      // Keys never contain 0x00, so the first key after start_after is start_after 0x01:
      // seeking there skips start_after's own rows.
      std::string after = bucket_prefix + start_after + '\x01';
      seek = std::max(seek, after);
    }
    PrefixScan it(db_, objects_, scan_prefix, seek);
    while (it->Valid() && StartsWith(it->key(), scan_prefix)) {
      auto parsed = ParseObjectRowKey(View(it->key()));
      if (!parsed || parsed->bucket != bucket.view()) {
        return Error(ErrorCode::kCorruption, "malformed object row key");
      }
      // The first row of a key is its newest version; a delete marker hides the key.
      auto record = DecodeObject(View(it->value()));
      if (!record.ok()) {
        return std::move(record).error();
      }
      if (!record->delete_marker) {
        if (page.objects.size() == max_keys) {
          page.truncated = true;
          break;
        }
        record->bucket = bucket;
        record->key = ObjectKey(std::string(parsed->key));
        page.objects.push_back(std::move(record).value());
      }
      // Past the key's older versions, if any, to the first row of the next key.
      const std::string key_prefix = ObjectKeyPrefix(bucket.view(), parsed->key);
      it->Next();
      if (it->Valid() && StartsWith(it->key(), key_prefix)) {
        it->Seek(PrefixSuccessor(key_prefix));
      }
    }
    if (!it->status().ok()) {
      return FromStatus(it->status(), "list objects");
    }
    return page;
  });
}

Result<void> RocksIndex::PutUser(const UserRecord& user) {
  if (user.access_key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "empty access key");
  }
  return GuardExceptions("put user", [&]() -> Result<void> {
    std::lock_guard lock(users_lock_);
    rocksdb::Status s = db_->Put(SyncedWrites(), users_, user.access_key, EncodeUser(user));
    if (!s.ok()) {
      return FromStatus(s, "put user");
    }
    return Ok();
  });
}

Result<UserRecord> RocksIndex::GetUser(const std::string& access_key) {
  return GuardExceptions("get user", [&]() -> Result<UserRecord> {
    std::string value;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), users_, access_key, &value);
    if (s.IsNotFound()) {
      return Error(ErrorCode::kNotFound, "no user " + access_key);
    }
    if (!s.ok()) {
      return FromStatus(s, "get user");
    }
    return DecodeUser(value);
  });
}

Result<void> RocksIndex::DeleteUser(const std::string& access_key) {
  return GuardExceptions("delete user", [&]() -> Result<void> {
    std::lock_guard lock(users_lock_);
    std::string value;
    rocksdb::Status s = db_->Get(ThreadReadOptions(), users_, access_key, &value);
    if (s.IsNotFound()) {
      return Error(ErrorCode::kNotFound, "no user " + access_key);
    }
    if (s.ok()) {
      s = db_->Delete(SyncedWrites(), users_, access_key);
    }
    if (!s.ok()) {
      return FromStatus(s, "delete user");
    }
    return Ok();
  });
}

Result<std::vector<UserRecord>> RocksIndex::ListUsers() {
  return GuardExceptions(
      "list users", [&] { return ScanAll<UserRecord>(db_, users_, DecodeUser, "list users"); });
}

}  // namespace strata::metadata
