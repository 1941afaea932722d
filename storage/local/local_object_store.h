// LocalObjectStore: the ObjectStore on the local tiers and the index (private to
// storage/). New bytes land on the hot tier; a version whose storage class names another
// local tier (warm) is moved there when it is committed, and lifecycle transitions move
// versions between them. Objects: local_object_store.cc; tiers and placement:
// local_placement.cc; copies: local_copy.cc; multipart uploads: local_multipart.cc; the
// orphan sweep: local_sweep.cc.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "metadata/index.h"
#include "storage/local/local_io.h"
#include "storage/local/local_tier.h"
#include "storage/object_store.h"

namespace strata::storage {

class LocalObjectStore final : public ObjectStore, public BucketMirror {
 public:
  // `hot`: where new bytes land. `others`: the other local tiers. `class_tiers`: storage
  // class -> the local tier (hot or one of `others`) its versions are kept on; a class
  // not in it (a cold class, or none) leaves a version where it is.
  LocalObjectStore(std::unique_ptr<LocalTier> hot, std::vector<std::unique_ptr<LocalTier>> others,
                   std::map<std::string, std::string> class_tiers, metadata::Index& index,
                   SweepOptions sweep = {}, const Clock& clock = Clock::System())
      : tier_(std::move(hot)),
        others_(std::move(others)),
        class_tiers_(std::move(class_tiers)),
        index_(index),
        sweep_(sweep),
        clock_(clock) {}
  ~LocalObjectStore() override;  // stops the sweeper thread, if started
  LocalObjectStore(const LocalObjectStore&) = delete;
  LocalObjectStore& operator=(const LocalObjectStore&) = delete;

  // Removes the data files of the tier that no record of the index references (as any
  // extent or part location, whatever tier the record names, so a renamed tier never
  // loses its files) and whose inode changed before `cutoff`. Returns how many it
  // removed. A failed index scan or listing removes nothing and is returned. Blocking: a
  // full index scan and directory walk; any thread.
  Result<std::size_t> SweepOrphans(std::chrono::system_clock::time_point cutoff);
  // SweepOrphans, logging the outcome (also when nothing was removed if `log_clean`).
  void SweepAndLog(std::chrono::system_clock::time_point cutoff, bool log_clean);
  // Starts the background thread sweeping every sweep.interval with cutoff now - grace
  // (nothing when the interval is zero). Call once.
  void StartSweeper();

  using ObjectStore::CreateBucket;
  Result<metadata::BucketRecord> CreateBucket(const BucketName& name, const std::string& owner,
                                              const std::string& region,
                                              const std::string& upstream_tier,
                                              const metadata::BucketAccess& access) override;
  Result<metadata::BucketRecord> GetBucket(const BucketName& name) override;
  Result<void> DeleteBucket(const BucketName& name) override;
  Result<std::vector<metadata::BucketRecord>> ListBuckets() override;
  Result<void> SetBucketVersioning(const BucketName& name, const std::string& state) override;
  Result<void> SetBucketTags(const BucketName& name, const metadata::Tags& tags) override;
  Result<void> UpdateBucketAccess(const BucketName& name, const AccessChange& change) override;
  Result<void> SetBucketLifecycle(const BucketName& name,
                                  const std::vector<metadata::LifecycleRule>& rules) override;
  void SetSharedCatalog(SharedCatalog* catalog) override { catalog_ = catalog; }
  BucketMirror& bucket_mirror() override { return *this; }

  // BucketMirror (local_bucket_mirror.cc): the index, written as the shared catalog says.
  Result<void> MirrorBucket(const metadata::BucketRecord& bucket) override;
  Result<void> UnmirrorBucket(const BucketName& name) override;
  Result<void> CheckBucketEmpty(const BucketName& name) override;
  Result<std::vector<metadata::BucketRecord>> MirroredBuckets() override;

  Result<std::unique_ptr<PendingWrite>> BeginWrite(
      const BucketName& bucket, const std::vector<ChecksumAlgorithm>& checksums) override;
  using ObjectStore::CommitWrite;
  Result<metadata::ObjectRecord> CommitWrite(std::unique_ptr<PendingWrite> write,
                                             metadata::ObjectRecord record,
                                             const metadata::WriteCondition& condition) override;
  Result<metadata::ObjectRecord> CommitCachedCopy(std::unique_ptr<PendingWrite> write,
                                                  metadata::ObjectRecord record) override;
  Result<bool> DropCachedCopy(const BucketName& bucket, const ObjectKey& key,
                              const metadata::UpstreamCopy& copy) override;
  Result<bool> MoveToUpstream(const metadata::ObjectRecord& record,
                              const std::string& upstream_tier,
                              const std::string& storage_class) override;
  Result<bool> ExpireVersion(const metadata::ObjectRecord& version, bool as_current) override;
  Result<bool> MoveToLocalTier(const metadata::ObjectRecord& record, const std::string& tier,
                               const std::string& storage_class) override;
  Result<bool> EvictLocalCopy(const metadata::ObjectRecord& record,
                              const std::string& upstream_tier) override;
  Result<bool> RestoreLocalCopy(std::unique_ptr<PendingWrite> write,
                                const metadata::ObjectRecord& record) override;
  Result<bool> ReplaceLocalCopy(std::unique_ptr<PendingWrite> write,
                                const metadata::ObjectRecord& record) override;
  void SetRepairer(CopyRepairer* repairer) override { repairer_.store(repairer); }
  // OpenObject without repair: the reader of the local copy as it is.
  Result<std::unique_ptr<ObjectReader>> OpenLocal(const metadata::ObjectRecord& record);
  void SetResidencyListener(ResidencyListener listener) override {
    residency_ = std::move(listener);
  }
  Result<void> VerifyLocalTrailers(const metadata::ObjectRecord& record) override;
  bool HasLocalCopy(const metadata::ObjectRecord& record) const override {
    return LocalPlacement(record) != nullptr;
  }
  Result<metadata::ObjectRecord> HeadObject(const BucketName& bucket,
                                            const ObjectKey& key) override;
  Result<metadata::ObjectRecord> HeadVersion(const BucketName& bucket, const ObjectKey& key,
                                             const VersionId& version_id) override;
  Result<std::unique_ptr<ObjectReader>> OpenObject(const metadata::ObjectRecord& record) override;
  Result<metadata::ObjectRecord> UpdateVersionSettings(
      const BucketName& bucket, const ObjectKey& key, const std::optional<VersionId>& version_id,
      const metadata::VersionSettingsChange& change) override;
  Result<Deleted> DeleteObject(const BucketName& bucket, const ObjectKey& key) override;
  using ObjectStore::DeleteVersion;
  Result<Deleted> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                const VersionId& version_id, bool bypass_governance) override;
  Result<metadata::ObjectRecord> CopyObject(const metadata::ObjectRecord& source,
                                            metadata::ObjectRecord record) override;

  Result<metadata::UploadRecord> CreateUpload(metadata::UploadRecord upload) override;
  Result<metadata::UploadRecord> GetUpload(const BucketName& bucket, const ObjectKey& key,
                                           const UploadId& upload_id) override;
  Result<metadata::PartRecord> CommitPart(std::unique_ptr<PendingWrite> write,
                                          const metadata::UploadRecord& upload,
                                          std::uint32_t number) override;
  Result<metadata::PartRecord> CopyPart(const metadata::ObjectRecord& source, std::uint64_t first,
                                        std::uint64_t length, const metadata::UploadRecord& upload,
                                        std::uint32_t number) override;
  Result<metadata::ListPartsPage> ListParts(const metadata::UploadRecord& upload,
                                            std::uint32_t after, std::size_t max_parts) override;
  Result<metadata::ListUploadsPage> ListUploads(const BucketName& bucket, const std::string& prefix,
                                                const std::string& key_marker,
                                                const std::string& upload_id_marker,
                                                std::size_t max_uploads) override;
  Result<metadata::ObjectRecord> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                                const UploadId& upload_id,
                                                const CompletionRequest& request) override;
  Result<void> AbortUpload(const BucketName& bucket, const ObjectKey& key,
                           const UploadId& upload_id) override;
  // Replicas: local_replica.cc.
  Result<std::vector<std::size_t>> ApplyReplica(
      const BucketName& bucket, const ObjectKey& key, std::vector<ReplicaVersion> newest_first,
      const std::optional<metadata::WritebackItem>& writeback) override;
  bool HoldsBytesLocally(const metadata::ObjectRecord& record) const override;

 private:
  // The wall time records are stamped with, from the store's clock.
  std::int64_t NowMs() const;
  static Error NoSuchBucket(const BucketName& name);
  static Error NoSuchUpload();
  // How many of a key's newest versions a retried completion looks through.
  static constexpr std::size_t kRetryVersionsScanned = 100;

  // The version an earlier CompleteUpload of `upload_id` with the same parts made, for a
  // completion retried after the upload is gone; kNoSuchUpload when there is none.
  Result<metadata::ObjectRecord> RetriedCompletion(const BucketName& bucket, const ObjectKey& key,
                                                   const UploadId& upload_id,
                                                   const CompletionRequest& request);
  // How many times a completion is built again when a part it used was uploaded again
  // before its commit.
  static constexpr int kCompletionRounds = 3;
  // One round of a completion: reads the upload and its parts, builds the object as
  // `version_id`, and hands it to the index (metadata::UploadCompletion).
  Result<metadata::CompletedUpload> CommitCompletion(const BucketName& bucket, const ObjectKey& key,
                                                     const UploadId& upload_id,
                                                     const CompletionRequest& request,
                                                     const VersionId& version_id,
                                                     std::int64_t now_ms);

  // The record a CreateBucket makes (not yet stored anywhere).
  metadata::BucketRecord NewBucket(const BucketName& name, const std::string& owner,
                                   const std::string& region,
                                   const std::string& upstream_tier) const;
  // The bucket out of the index, with the parts of its discarded uploads (kNoSuchBucket,
  // kBucketNotEmpty).
  Result<void> DropLocalBucket(const BucketName& name);
  // CreateBucket's answer when `holder` holds the name already, by owner.
  static Error Taken(const metadata::BucketRecord& holder, const std::string& owner);

  // The id a new version gets in `bucket`: fresh when versioning is Enabled, else "null".
  Result<VersionId> NextVersionId(const BucketName& bucket);
  // Commits `record` (its version_id set) as the newest version and frees the bytes of
  // the version it replaces, except `keep`.
  Result<void> CommitVersion(const metadata::ObjectRecord& record,
                             const metadata::WriteCondition& condition, const std::string& keep);

  // The extents of `record` on a local tier (the first such placement); nullptr when it
  // has no local copy.
  const metadata::Placement* LocalPlacement(const metadata::ObjectRecord& record) const;
  // The local tier of that name, or nullptr.
  const LocalTier* LocalTierNamed(std::string_view name) const;
  // The names of the local tiers but `except`.
  std::vector<std::string> LocalTierNames(std::string_view except = {}) const;
  // Gives every extent of `from` (on a local tier) a name on `to`: links, or copies when
  // the tiers are on different file systems. Removes what it made on failure.
  Result<metadata::Placement> AdoptPlacement(const metadata::Placement& from, const LocalTier& to);
  // After a commit: moves `record` to the local tier its storage class names, if another.
  // A failed move leaves the version where it is (logged): it is still whole and durable.
  // Either way the version's local copy is reported to the residency listener.
  void PlaceByClass(metadata::ObjectRecord& record);
  // Reports `record` to the residency listener if it has a local copy.
  void NotifyResident(const metadata::ObjectRecord& record) const;
  // A replica's placement of `record`, a version a multipart completion made, from the
  // parts of its upload held here (storage/replication.h's SyncUpload): new names (links)
  // for the parts' data files, once their sizes, the multipart ETag and the combined
  // CRC64NVME match the record; nullopt when they do not, or the upload is not here (the
  // bytes are asked for then). The upload's own names go when it ends.
  std::optional<metadata::Placement> PlacementFromUpload(const metadata::ObjectRecord& record);
  // Stores a promoted data file as part `number` of `upload`, freeing the part it
  // replaces; removes the file when the upload is gone.
  Result<metadata::PartRecord> StorePart(metadata::PartRecord part,
                                         const metadata::UploadRecord& upload);

  // Frees the bytes of a version no longer in the index, except `keep`. A failure only
  // leaks a file (found later by the orphan sweep), so it is logged, not returned.
  void RemoveData(const metadata::ObjectRecord& old, const std::string& keep);
  void RemoveParts(const std::vector<metadata::PartRecord>& parts);
  void RemoveQuietly(const std::string& id);  // on the hot tier
  void RemoveQuietly(const LocalTier& tier, const std::string& id);

  std::unique_ptr<LocalTier> tier_;  // hot
  std::vector<std::unique_ptr<LocalTier>> others_;
  std::map<std::string, std::string> class_tiers_;
  metadata::Index& index_;
  SweepOptions sweep_;
  const Clock& clock_;  // records' times, ids, the sweep's cutoff and period
  ResidencyListener residency_;
  std::atomic<CopyRepairer*> repairer_{nullptr};
  std::atomic<SharedCatalog*> catalog_{nullptr};  // cluster mode: the buckets' truth

  // Replica writes of one key run one at a time (by a stripe of its hash), so the copy
  // one of them reuses is never freed by another.
  std::array<std::mutex, 64> replica_stripes_;

  std::mutex sweeper_mu_;
  std::condition_variable sweeper_cv_;
  bool stopping_ = false;  // guarded by sweeper_mu_
  std::thread sweeper_;
};

// Upload and version ids: the time (12 hex digits of milliseconds) then 80 random bits,
// so that a key's uploads list oldest first.
std::string TimeOrderedId(std::int64_t now_ms);

// The id a new version gets in `bucket`: fresh when versioning is Enabled, else "null".
VersionId VersionIdFor(const metadata::BucketRecord& bucket, std::int64_t now_ms);

}  // namespace strata::storage
