// RocksIndex: the Index on RocksDB (key schema: metadata/README.md).
//
// Column families: buckets, objects, users, multipart (uploads), parts and queues (created
// empty for later use). Writes are single WriteBatches. Writers of the same
// (bucket, key) are serialised by striped mutexes; a bucket's existence check and the
// writes that depend on it hold that bucket's stripe of a shared_mutex (shared for object
// writes, exclusive for bucket creation and deletion), so no object is ever committed
// into a bucket that is concurrently being deleted. Thread-safe.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "metadata/index.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Status;
class WriteBatch;
struct WriteOptions;
}  // namespace rocksdb

namespace strata::metadata {

namespace internal {
class BucketRecordCache;
}  // namespace internal

class RocksIndex final : public Index {
 public:
  static Result<std::unique_ptr<RocksIndex>> OpenRocks(const std::string& dir,
                                                       IndexOptions options);
  ~RocksIndex() override;
  RocksIndex(const RocksIndex&) = delete;
  RocksIndex& operator=(const RocksIndex&) = delete;

  Result<void> CreateBucket(const BucketRecord& bucket) override;
  Result<BucketRecord> GetBucket(const BucketName& name) override;
  Result<std::vector<PartRecord>> DeleteBucket(const BucketName& name) override;
  Result<std::vector<BucketRecord>> ListBuckets() override;

  using Index::PutObject;
  Result<std::optional<ObjectRecord>> PutObject(const ObjectRecord& object,
                                                const WriteCondition& condition) override;
  Result<ObjectRecord> GetObject(const BucketName& bucket, const ObjectKey& key) override;
  Result<std::optional<ObjectRecord>> DeleteObject(const BucketName& bucket,
                                                   const ObjectKey& key) override;
  Result<void> SetBucketVersioning(const BucketName& name, const std::string& state) override;
  Result<void> SetBucketTags(const BucketName& name, const Tags& tags) override;
  Result<void> UpdateBucketAccess(
      const BucketName& name, const std::function<Result<void>(BucketAccess&)>& change) override;
  // Versions: rocks_index_versions.cc.
  Result<ObjectRecord> GetVersion(const BucketName& bucket, const ObjectKey& key,
                                  const VersionId& version_id) override;
  using Index::DeleteVersion;
  Result<ObjectRecord> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                     const VersionId& version_id,
                                     const std::optional<std::int64_t>& if_last_modified_ms,
                                     const LockCheck& lock) override;
  Result<ObjectRecord> UpdateVersionSettings(const BucketName& bucket, const ObjectKey& key,
                                             const std::optional<VersionId>& version_id,
                                             const VersionSettingsChange& change) override;
  Result<ListVersionsPage> ListVersions(const BucketName& bucket, const std::string& prefix,
                                        const std::string& key_marker,
                                        const std::string& version_id_marker,
                                        std::size_t max_versions) override;
  Result<ListObjectsPage> ListObjects(const BucketName& bucket, const std::string& prefix,
                                      const std::string& start_after,
                                      std::size_t max_keys) override;

  // Multipart uploads: rocks_index_multipart.cc.
  Result<void> CreateUpload(const UploadRecord& upload) override;
  Result<UploadRecord> GetUpload(const BucketName& bucket, const ObjectKey& key,
                                 const UploadId& upload_id) override;
  Result<std::optional<PartRecord>> PutPart(const BucketName& bucket, const ObjectKey& key,
                                            const UploadId& upload_id,
                                            const PartRecord& part) override;
  Result<ListPartsPage> ListParts(const UploadId& upload_id, std::uint32_t after,
                                  std::size_t max_parts) override;
  Result<ListUploadsPage> ListUploads(const BucketName& bucket, const std::string& prefix,
                                      const std::string& key_marker,
                                      const std::string& upload_id_marker,
                                      std::size_t max_uploads) override;
  using Index::CompleteUpload;
  Result<CompletedUpload> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                         const UploadCompletion& completion,
                                         const WriteCondition& condition) override;
  Result<std::vector<PartRecord>> AbortUpload(const BucketName& bucket, const ObjectKey& key,
                                              const UploadId& upload_id) override;

  // rocks_index_scan.cc.
  Result<void> ForEachLocation(
      const std::function<void(std::string_view tier, std::string_view location)>& fn) override;

  Result<void> ForEachVersion(const std::function<bool(const ObjectRecord&)>& fn) override;
  // Usage counters: rocks_index_usage.cc.
  Result<std::vector<UsageRow>> Usage() override;

  // Write-back queue: rocks_index_writeback.cc.
  Result<void> ScanWriteback(const std::function<bool(const WritebackItem&)>& fn) override;
  Result<std::optional<WritebackItem>> GetWriteback(const BucketName& bucket,
                                                    const ObjectKey& key) override;
  Result<bool> FinishWriteback(const WritebackItem& item,
                               const std::optional<UpstreamCopy>& copy) override;
  Result<bool> RecordUpstreamCopy(const BucketName& bucket, const ObjectKey& key,
                                  const UpstreamCopy& copy) override;
  Result<std::vector<ObjectRecord>> UnpushedVersions(const BucketName& bucket, const ObjectKey& key,
                                                     std::string_view tier,
                                                     std::size_t max) override;
  Result<void> DeferWriteback(const WritebackItem& item, std::int64_t retry_ms,
                              const std::string& error) override;
  WritebackTotals WritebackBacklog() const override;
  IndexCacheStats BlockCache() const override;
  Result<VersionChangeResult> ChangeVersion(const BucketName& bucket, const ObjectKey& key,
                                            const VersionChange& change) override;
  Result<std::optional<ObjectRecord>> DropCleanVersion(const BucketName& bucket,
                                                       const ObjectKey& key,
                                                       const UpstreamCopy& copy) override;
  // A replica's write: rocks_index_versions.cc.
  Result<std::vector<ObjectRecord>> ReplaceKeyVersions(
      const BucketName& bucket, const ObjectKey& key, const std::vector<ObjectRecord>& newest_first,
      const std::optional<WritebackItem>& writeback) override;

  // Lifecycle rules and due rows: rocks_index_lifecycle.cc.
  Result<void> SetBucketLifecycle(const BucketName& name,
                                  const std::vector<LifecycleRule>& rules) override;
  Result<std::vector<LifecycleRow>> DueLifecycleRows(std::int64_t now_ms, std::size_t max) override;
  Result<void> UpdateLifecycleRows(const std::vector<LifecycleRow>& add,
                                   const std::vector<LifecycleRow>& remove) override;
  Result<std::vector<LifecycleReseed>> LifecycleReseeds() override;
  Result<void> FinishReseed(const LifecycleReseed& reseed) override;
  Result<std::vector<ObjectRecord>> KeyVersions(const BucketName& bucket, const ObjectKey& key,
                                                std::size_t max) override;

  Result<void> PutUser(const UserRecord& user) override;
  Result<UserRecord> GetUser(const std::string& access_key) override;
  Result<void> DeleteUser(const std::string& access_key) override;
  Result<std::vector<UserRecord>> ListUsers() override;

 private:
  static constexpr std::size_t kBucketStripes = 64;
  static constexpr std::size_t kKeyStripes = 256;

  RocksIndex(rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
             IndexOptions options);

  std::shared_mutex& BucketLock(const BucketName& bucket);
  std::mutex& KeyLock(const BucketName& bucket, const ObjectKey& key);

  Result<bool> BucketExists(const BucketName& name);
  // The current version of bucket/key, if any, with its row key.
  struct CurrentRow {
    std::string row_key;
    ObjectRecord record;
  };
  Result<std::optional<CurrentRow>> FindCurrent(const BucketName& bucket, const ObjectKey& key);
  // Calls fn with each row of bucket/key, newest version first, until it returns false.
  Result<void> ForEachVersionRow(const BucketName& bucket, const ObjectKey& key,
                                 const std::function<bool(CurrentRow&)>& fn);
  // The row of one version of bucket/key, if any.
  Result<std::optional<CurrentRow>> FindVersion(const BucketName& bucket, const ObjectKey& key,
                                                const VersionId& version_id);
  // The bucket's record (kNoSuchBucket when it does not exist); callers hold its stripe.
  Result<BucketRecord> RequireBucket(const BucketName& bucket);

  // A write-back item staged in a batch, applied to the in-memory totals once the batch
  // committed (ApplyWriteback).
  struct StagedWriteback {
    std::int64_t objects = 0;
    std::int64_t bytes = 0;
  };
  // When `bucket` is bound to an upstream, stages the item of bucket/key for a change
  // leaving a version of `bytes` (0: deleted) into `batch`, coalescing with the key's
  // waiting item; callers hold the key's lock.
  // `upstream_delete`, when given, is the upstream version id of a pushed version this
  // change removed (versioned buckets), added to the item's upstream_deletes.
  Result<StagedWriteback> StageWriteback(const BucketRecord& bucket, const ObjectKey& key,
                                         std::uint64_t bytes, rocksdb::WriteBatch& batch,
                                         const std::optional<std::string>& upstream_delete);
  // A replica's copy of its primary's item of bucket/key (nullopt: none), staged in place
  // of the key's own: ReplaceKeyVersions. Callers hold the key's lock.
  Result<StagedWriteback> StageMirroredWriteback(const BucketRecord& bucket, const ObjectKey& key,
                                                 const std::optional<WritebackItem>& item,
                                                 rocksdb::WriteBatch& batch);
  // Stages `copy` onto the version it names, if still there; returns whether it was.
  Result<bool> StageUpstreamCopy(const BucketName& bucket, const ObjectKey& key,
                                 const UpstreamCopy& copy, rocksdb::WriteBatch& batch);
  void ApplyWriteback(const StagedWriteback& staged);
  // Counts the queue at open.
  Result<void> LoadWritebackTotals();
  // Puts `object` as the newest version into `batch`, after the deletion of the row of
  // the version it replaces (same id; returned) when `condition` allows.
  // In a bucket bound to an upstream, also stages the key's write-back item (added to
  // `staged`) unless `object` is clean (has a copy on the upstream tier: a read-through
  // fill), and such a fill is refused (kPreconditionFailed) while the key has an item.
  Result<std::optional<ObjectRecord>> StageCurrent(const BucketRecord& bucket,
                                                   const ObjectRecord& object,
                                                   const WriteCondition& condition,
                                                   rocksdb::WriteBatch& batch,
                                                   StagedWriteback& staged);
  // When `bucket` has lifecycle rules: stages the due row of bucket/key as the batch will
  // leave it: `newest` (a version the batch adds, if any) above the stored versions, of
  // which the row `changed_row` (empty: none) becomes `changed_to` (nullopt: deleted).
  // Callers hold the key's lock.
  Result<void> StageLifecycleKey(const BucketRecord& bucket, const ObjectKey& key,
                                 const std::optional<ObjectRecord>& newest,
                                 const std::string& changed_row,
                                 const std::optional<ObjectRecord>& changed_to,
                                 rocksdb::WriteBatch& batch);
  // Adds to `batch` the due row of a key whose versions will be `newest_first` (a hundred
  // or so decide it: NewerNoncurrentVersions counts at most 100).
  Result<void> StageLifecycleDue(const BucketRecord& bucket, const ObjectKey& key,
                                 const std::vector<ObjectRecord>& newest_first,
                                 rocksdb::WriteBatch& batch);
  // Usage counters (rocks_index_usage.cc). Stage* add to `batch` the counters' change for
  // an object row going from `before` to `after` (nullptr: none), or a part's.
  rocksdb::Status StageVersionUsage(const BucketName& bucket, const ObjectRecord* before,
                                    const ObjectRecord* after, rocksdb::WriteBatch& batch);
  rocksdb::Status StagePartUsage(const BucketName& bucket, const PartRecord* before,
                                 const PartRecord* after, rocksdb::WriteBatch& batch);
  // An index written before the counters existed (no marker row) is counted once at open.
  Result<void> CountUsageIfNeeded();

  // Reads the bucket record under its exclusive stripe, applies `change` and writes it
  // back. kNoSuchBucket.
  Result<void> UpdateBucket(const BucketName& name,
                            const std::function<void(BucketRecord&)>& change);
  // The same with a change that may refuse: its error is returned and nothing is written.
  Result<void> UpdateBucketIf(const BucketName& name,
                              const std::function<Result<void>(BucketRecord&)>& change);
  // All parts of an upload, in number order.
  Result<std::vector<PartRecord>> AllParts(const UploadId& upload_id);
  // Adds the deletion of an upload's row and parts (and their usage) to `batch`; appends
  // the parts.
  Result<void> StageUploadRemoval(const BucketName& bucket, const std::string& upload_row,
                                  const UploadId& upload_id, rocksdb::WriteBatch& batch,
                                  std::vector<PartRecord>& parts);
  // Stages the removal of every upload of `bucket`.
  Result<void> DropUploads(const BucketName& bucket, rocksdb::WriteBatch& batch,
                           std::vector<PartRecord>& parts);

  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // all open CFs, owned
  rocksdb::ColumnFamilyHandle* buckets_ = nullptr;
  rocksdb::ColumnFamilyHandle* objects_ = nullptr;
  rocksdb::ColumnFamilyHandle* users_ = nullptr;
  rocksdb::ColumnFamilyHandle* multipart_ = nullptr;
  rocksdb::ColumnFamilyHandle* parts_ = nullptr;
  rocksdb::ColumnFamilyHandle* queues_ = nullptr;
  rocksdb::ColumnFamilyHandle* usage_ = nullptr;
  IndexOptions options_;

  // Every committing write: synced to the WAL when the options say so.
  rocksdb::WriteOptions SyncedWrites() const;

  // Decoded bucket rows; every write of a bucket row calls ForgetBucket after it.
  std::unique_ptr<internal::BucketRecordCache> bucket_cache_;
  void ForgetBucket(const BucketName& name);

  std::array<std::shared_mutex, kBucketStripes> bucket_locks_;
  std::array<std::mutex, kKeyStripes> key_locks_;
  std::mutex users_lock_;
  mutable std::mutex writeback_totals_lock_;
  WritebackTotals writeback_totals_;
};

}  // namespace strata::metadata
