// ObjectStore: the storage engine the gateway talks to. Buckets, and whole objects whose
// bytes live on the local tiers (new writes on the hot one; a version whose storage class
// names another local tier, such as warm, is moved there as it is committed) and whose
// records live in the index.
//
// A write streams into a PendingWrite (a temporary file on the hot tier, hashed as it
// grows); CommitWrite makes it durable (fsync), moves it into place and commits the
// index record in one step, so a crash leaves the old object or the new one, never a
// mix, and a PendingWrite dropped without commit leaves nothing visible.
//
// Thread-safe. Methods marked "blocking" fsync or write the index synchronously: call
// them from the blocking pool, never from an I/O thread. The request path moves object
// bytes with the awaitable ReadAsync / AppendAsync on its I/O thread (io_uring, or
// pread/pwrite as storage/data_path.h chose); the synchronous Read / Append are for the
// blocking pool and tests.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/ids.h"
#include "metadata/index.h"
#include "storage/checksum.h"
#include "storage/integrity.h"
#include "storage/multipart.h"
#include "storage/shared_catalog.h"

namespace strata::storage {

class LocalTier;

// The bytes of one object version on their way in. Used by one thread at a time.
class PendingWrite {
 public:
  virtual ~PendingWrite() = default;  // removes the temporary file unless committed
  // Appends to the temporary file and updates the digests. kNoSpace when the disk is full.
  // After a failed append the write is unusable (further appends fail, commit refuses).
  virtual Result<void> Append(std::string_view data) = 0;
  // Append through the data path (storage/data_path.h) on the calling coroutine's
  // io_context. `data` must stay valid until it completes.
  virtual boost::asio::awaitable<Result<void>> AppendAsync(std::string_view data) = 0;
  virtual std::uint64_t size() const = 0;
  // Digests of everything appended so far; call after the last Append.
  virtual std::string Md5Hex() = 0;
  virtual std::string Md5Base64() = 0;
  // base64 value for `algorithm`; CRC64NVME is always available, others only when
  // requested in BeginWrite.
  virtual std::optional<std::string> Checksum(ChecksumAlgorithm algorithm) = 0;
};

// Reads one object version's bytes. Used by one thread at a time.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  virtual std::uint64_t size() const = 0;
  // Reads up to buf.size() bytes at `offset`; returns the count (0 only at the end).
  virtual Result<std::size_t> Read(std::uint64_t offset, std::span<char> buf) = 0;
  // Read through the data path (storage/data_path.h) on the calling coroutine's
  // io_context; the same bytes, verification and errors. `buf` must stay valid until it
  // completes, and no other call may run on this reader meanwhile.
  virtual boost::asio::awaitable<Result<std::size_t>> ReadAsync(std::uint64_t offset,
                                                                std::span<char> buf) = 0;
};

// One version as a cluster replica receives it (storage/replication.h): the primary's
// record and, when its bytes came along, the write that holds them.
struct ReplicaVersion {
  metadata::ObjectRecord record;
  std::unique_ptr<PendingWrite> bytes = nullptr;  // nullptr: keep this gateway's own copy
};

// The orphan sweep: data files that no index record references (left by a crash between
// promoting a file and committing its record, or between dropping a version and
// unlinking its file) are removed at open and then periodically in the background.
struct SweepOptions {
  // Files whose inode changed (written, promoted, linked) less long ago are never swept
  // in the background, so writes in flight are never touched. The sweep at open spares
  // only files changed after the open began.
  std::chrono::milliseconds grace{std::chrono::minutes(10)};
  // Period of the background sweep; zero runs none.
  std::chrono::milliseconds interval{std::chrono::hours(1)};
  bool at_open = true;  // sweep once while opening
};

class ObjectStore {
 public:
  // Opens the store: the hot tier from config.HotTier() and every other tier of kind
  // local (created if missing), swept of
  // orphans (logged), with a background sweeper per `sweep`; the store owns its thread
  // and stops it on destruction. `clock` (outliving the store) stamps records and ids and
  // times the sweeps.
  static Result<std::unique_ptr<ObjectStore>> Open(const Config& config, metadata::Index& index,
                                                   SweepOptions sweep = {},
                                                   const Clock& clock = Clock::System());
  virtual ~ObjectStore() = default;

  // Buckets. CreateBucket validates S3's naming rules (kInvalidBucketName) and answers
  // kBucketAlreadyOwnedByYou / kBucketAlreadyExists by owner. Blocking.
  // With `upstream_tier` (an `s3` tier's name) the bucket is bound to the upstream
  // bucket of the same name, which the caller has made sure exists. `access`: the new
  // bucket's access settings (its ownership and public access block defaults, its ACL),
  // made with it in the same write; an empty ACL stands for the owner's private one.
  virtual Result<metadata::BucketRecord> CreateBucket(const BucketName& name,
                                                      const std::string& owner,
                                                      const std::string& region,
                                                      const std::string& upstream_tier,
                                                      const metadata::BucketAccess& access) = 0;
  Result<metadata::BucketRecord> CreateBucket(const BucketName& name, const std::string& owner,
                                              const std::string& region,
                                              const std::string& upstream_tier) {
    return CreateBucket(name, owner, region, upstream_tier, metadata::BucketAccess{});
  }
  Result<metadata::BucketRecord> CreateBucket(const BucketName& name, const std::string& owner,
                                              const std::string& region) {
    return CreateBucket(name, owner, region, std::string());
  }
  virtual Result<metadata::BucketRecord> GetBucket(const BucketName& name) = 0;  // kNoSuchBucket
  virtual Result<void> DeleteBucket(const BucketName& name) = 0;                 // blocking
  virtual Result<std::vector<metadata::BucketRecord>> ListBuckets() = 0;
  // "Enabled" or "Suspended" (kNoSuchBucket). Blocking.
  virtual Result<void> SetBucketVersioning(const BucketName& name, const std::string& state) = 0;
  // Replaces the bucket's tags (empty removes them). kNoSuchBucket. Blocking.
  virtual Result<void> SetBucketTags(const BucketName& name, const metadata::Tags& tags) = 0;
  // Replaces the bucket's lifecycle rules (empty removes them). kNoSuchBucket. Blocking.
  virtual Result<void> SetBucketLifecycle(const BucketName& name,
                                          const std::vector<metadata::LifecycleRule>& rules) = 0;
  // Read-modify-write of the bucket's access settings (policy, ...): `change` edits the
  // current ones; an error from it is returned and nothing is written. In cluster mode the
  // change is made in the shared catalog (compare-and-swap, retried). kNoSuchBucket.
  // Blocking.
  using AccessChange = std::function<Result<void>(metadata::BucketAccess&)>;
  virtual Result<void> UpdateBucketAccess(const BucketName& name, const AccessChange& change) = 0;

  // Cluster mode (storage/shared_catalog.h): with a catalog set, CreateBucket claims the
  // name in it, DeleteBucket and the setters above change it first, and the index follows
  // as its mirror; GetBucket and ListBuckets still read the index (the mirror). nullptr (the
  // default): this gateway alone, as without [cluster]. Set before any request and cleared
  // after the last; the catalog outlives its use.
  virtual void SetSharedCatalog(SharedCatalog* catalog) = 0;
  // The index as the shared catalog's mirror: what it writes to follow etcd.
  virtual BucketMirror& bucket_mirror() = 0;

  // Starts a new object version in `bucket` (kNoSuchBucket if absent). `checksums` are
  // computed in addition to MD5 and CRC64NVME.
  virtual Result<std::unique_ptr<PendingWrite>> BeginWrite(
      const BucketName& bucket, const std::vector<ChecksumAlgorithm>& checksums) = 0;

  // Makes `write` the current version of record.bucket/record.key. Fills in size, etag,
  // last_modified_ms, version_id (a new id when the bucket's versioning is Enabled, else
  // "null", replacing the null version), checksums (CRC64NVME plus requested) and
  // placements of `record` and returns it. Blocking.
  // With `condition`, the commit happens only if the current version satisfies it
  // (kPreconditionFailed / kNoSuchKey otherwise, and the new bytes are dropped).
  virtual Result<metadata::ObjectRecord> CommitWrite(std::unique_ptr<PendingWrite> write,
                                                     metadata::ObjectRecord record,
                                                     const metadata::WriteCondition& condition) = 0;
  Result<metadata::ObjectRecord> CommitWrite(std::unique_ptr<PendingWrite> write,
                                             metadata::ObjectRecord record) {
    return CommitWrite(std::move(write), std::move(record), metadata::WriteCondition{});
  }

  // Makes `write` the current version as a cached copy of an upstream object (a
  // read-through fill): `record` carries the upstream's description (bucket, key, ETag,
  // last_modified_ms, content type, metadata) and its upstream placement; size,
  // checksums and the local placement come from `write`; the version id is "null".
  // Only when the key has no version and no change waiting to be pushed
  // (kPreconditionFailed otherwise, and the bytes are dropped). Blocking.
  virtual Result<metadata::ObjectRecord> CommitCachedCopy(std::unique_ptr<PendingWrite> write,
                                                          metadata::ObjectRecord record) = 0;

  // Removes the key's current version if it is still the clean version `copy` names,
  // with its local bytes, queueing no write-back: the upstream keeps the key's truth.
  // Returns whether it was removed (false: the key changed meanwhile). Blocking.
  virtual Result<bool> DropCachedCopy(const BucketName& bucket, const ObjectKey& key,
                                      const metadata::UpstreamCopy& copy) = 0;

  // Frees the local copy of a clean version (one with a placement on `upstream_tier`):
  // the record stays (HEAD and listings answer from it) and a GET reads it through again.
  // Returns false when the version changed meanwhile or is not clean (its local copy is
  // the only one). Blocking.
  virtual Result<bool> EvictLocalCopy(const metadata::ObjectRecord& record,
                                      const std::string& upstream_tier) = 0;
  // A lifecycle transition to a class on the upstream: like EvictLocalCopy, and the
  // version's storage class becomes `storage_class` in the same write. Blocking.
  virtual Result<bool> MoveToUpstream(const metadata::ObjectRecord& record,
                                      const std::string& upstream_tier,
                                      const std::string& storage_class) = 0;
  // Moves the bytes of `record` to the local tier `tier` and sets its storage class, in
  // one index write; the old copy is freed. A version without a local copy (evicted) only
  // changes class. Returns false when the version changed meanwhile. Blocking.
  virtual Result<bool> MoveToLocalTier(const metadata::ObjectRecord& record,
                                       const std::string& tier,
                                       const std::string& storage_class) = 0;
  // A lifecycle expiration of `version` if it is still as given (same id and time; for
  // `as_current`, still the key's newest): a current version is deleted as a DELETE
  // without a version id would (a delete marker in a versioned bucket), any other one is
  // removed for good, with its bytes. Returns false when the key changed meanwhile.
  // Blocking.
  virtual Result<bool> ExpireVersion(const metadata::ObjectRecord& version, bool as_current) = 0;
  // Makes `write` (the bytes of `record`, read through again) its local copy again.
  // Returns false, dropping the bytes, when the version changed meanwhile or has a local
  // copy already. Blocking.
  virtual Result<bool> RestoreLocalCopy(std::unique_ptr<PendingWrite> write,
                                        const metadata::ObjectRecord& record) = 0;
  // Makes `write` (the bytes of `record`, fetched again from another copy and verified)
  // its local copy in place of the damaged one `record` names, in one index write, then
  // frees the damaged files. Returns false, dropping the bytes, when the version changed
  // meanwhile or its local copy is no longer the one `record` names (another repair won).
  // Blocking.
  virtual Result<bool> ReplaceLocalCopy(std::unique_ptr<PendingWrite> write,
                                        const metadata::ObjectRecord& record) = 0;
  // Readers of OpenObject then repair what they find damaged through `repairer`
  // (storage/integrity.h) and go on from the repaired copy; nullptr: a damaged chunk is
  // only an error. The repairer must outlive every reader. Set before any request, and
  // cleared before the repairer goes.
  virtual void SetRepairer(CopyRepairer* repairer) = 0;
  // Calls `listener` with each version that gets a copy on a local tier, once committed
  // (a write, copy, completed upload, read-through fill, restore or move), on the
  // committing thread: the tier caches (storage/engine/tier_caches.h) learn what each tier
  // holds. Set once, before any request.
  using ResidencyListener = std::function<void(const metadata::ObjectRecord&)>;
  virtual void SetResidencyListener(ResidencyListener listener) = 0;

  // Checks the chunk trailers of the version's local copy as the disk holds them, not as
  // the open-file cache read them at open (a reader trusts the cached footer; the scrubber
  // must not). kCorruption when one is damaged (the file then leaves the cache, so reads
  // see it too); kUnavailable without a local copy. Blocking: reads every trailer whole.
  virtual Result<void> VerifyLocalTrailers(const metadata::ObjectRecord& record) = 0;

  // Whether the version has its bytes on a local tier.
  virtual bool HasLocalCopy(const metadata::ObjectRecord& record) const = 0;

  // The current version. kNoSuchKey when there is none; a delete marker is returned as
  // such (the caller answers 404 with x-amz-delete-marker).
  virtual Result<metadata::ObjectRecord> HeadObject(const BucketName& bucket,
                                                    const ObjectKey& key) = 0;
  // One version by id (kNoSuchVersion; kNoSuchKey when the key has no version at all).
  virtual Result<metadata::ObjectRecord> HeadVersion(const BucketName& bucket, const ObjectKey& key,
                                                     const VersionId& version_id) = 0;
  // A reader of the version's local copy (kUnavailable when it has none). With a repairer
  // set, a chunk found damaged by ReadAsync (or a copy whose trailer is damaged) is
  // repaired and the read goes on from the repaired copy at the same offset: the bytes
  // before it were verified, the repaired copy matches the recorded CRC64NVME, so the
  // reader's output is byte-exact either way. The synchronous Read never repairs.
  virtual Result<std::unique_ptr<ObjectReader>> OpenObject(
      const metadata::ObjectRecord& record) = 0;
  // Changes the settings (tags, owner, ACL, retention, legal hold) of `version_id` (the
  // current version when nullopt) in place, as metadata::ObjectIndex::UpdateVersionSettings
  // does: no new version, same ETag and Last-Modified; a lock it would weaken refuses it
  // (kAccessDenied). Returns the updated record. kNoSuchBucket; kNoSuchKey when the key has
  // no version (or, without a version id, its current one vanished); kNoSuchVersion;
  // kMethodNotAllowed for a delete marker. Blocking.
  virtual Result<metadata::ObjectRecord> UpdateVersionSettings(
      const BucketName& bucket, const ObjectKey& key, const std::optional<VersionId>& version_id,
      const metadata::VersionSettingsChange& change) = 0;
  // Replaces the tags of a version in place (UpdateVersionSettings).
  Result<metadata::ObjectRecord> SetObjectTags(const BucketName& bucket, const ObjectKey& key,
                                               const std::optional<VersionId>& version_id,
                                               const metadata::Tags& tags) {
    metadata::VersionSettingsChange change;
    change.tags = tags;
    return UpdateVersionSettings(bucket, key, version_id, change);
  }
  struct Deleted {
    VersionId version_id;        // the marker made, or the version removed; empty: none
    bool delete_marker = false;  // a marker was made, or the removed version was one
  };
  // DELETE without a version id: removes the current version in an unversioned bucket,
  // else adds a delete marker (with a new id when Enabled; "null", replacing the null
  // version, when Suspended). Succeeds when there is nothing to delete. Blocking.
  virtual Result<Deleted> DeleteObject(const BucketName& bucket, const ObjectKey& key) = 0;
  // Removes one version (or delete marker) for good; succeeds when it is absent.
  // kAccessDenied when its object lock keeps it (metadata/object_lock.h; GOVERNANCE gives
  // way to `bypass_governance`). Blocking.
  virtual Result<Deleted> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                        const VersionId& version_id, bool bypass_governance) = 0;
  Result<Deleted> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                const VersionId& version_id) {
    return DeleteVersion(bucket, key, version_id, false);
  }

  // Makes `record` (bucket, key and descriptive fields set; checksums and parts taken
  // from `source`) the current version, its bytes those of `source` shared, not copied:
  // on a local tier each extent gets a second name (a hard link), so a copy of any size
  // takes milliseconds and either object can be deleted or overwritten alone. kNoSuchKey
  // when the source vanished meanwhile. Blocking.
  virtual Result<metadata::ObjectRecord> CopyObject(const metadata::ObjectRecord& source,
                                                    metadata::ObjectRecord record) = 0;

  // Multipart uploads. CreateUpload fills upload_id and initiated_ms. Blocking.
  virtual Result<metadata::UploadRecord> CreateUpload(metadata::UploadRecord upload) = 0;
  virtual Result<metadata::UploadRecord> GetUpload(const BucketName& bucket, const ObjectKey& key,
                                                   const UploadId& upload_id) = 0;  // kNoSuchUpload
  // Makes `write` part `number` of the upload, replacing an earlier part with that number.
  // Returns the part (size, ETag = hex MD5, checksums as CommitWrite). Blocking.
  virtual Result<metadata::PartRecord> CommitPart(std::unique_ptr<PendingWrite> write,
                                                  const metadata::UploadRecord& upload,
                                                  std::uint32_t number) = 0;
  // Part `number` made from the bytes of `source`: shared (as CopyObject) when the range
  // is a whole extent of it, copied otherwise. Blocking.
  virtual Result<metadata::PartRecord> CopyPart(const metadata::ObjectRecord& source,
                                                std::uint64_t first, std::uint64_t length,
                                                const metadata::UploadRecord& upload,
                                                std::uint32_t number) = 0;
  virtual Result<metadata::ListPartsPage> ListParts(const metadata::UploadRecord& upload,
                                                    std::uint32_t after, std::size_t max_parts) = 0;
  virtual Result<metadata::ListUploadsPage> ListUploads(const BucketName& bucket,
                                                        const std::string& prefix,
                                                        const std::string& key_marker,
                                                        const std::string& upload_id_marker,
                                                        std::size_t max_uploads) = 0;
  // Completes the upload (rules: storage/multipart.h) without copying any part's bytes;
  // frees the parts the completion did not name. Blocking.
  virtual Result<metadata::ObjectRecord> CompleteUpload(const BucketName& bucket,
                                                        const ObjectKey& key,
                                                        const UploadId& upload_id,
                                                        const CompletionRequest& request) = 0;
  // Discards the upload and its parts' bytes. kNoSuchUpload when it is gone. Blocking.
  virtual Result<void> AbortUpload(const BucketName& bucket, const ObjectKey& key,
                                   const UploadId& upload_id) = 0;

  // A cluster replica's write (storage/replication.h): makes the key's versions exactly
  // `newest_first`. A version with bytes gets them as its local copy (checked against its
  // recorded size and CRC64NVME first: kCorruption otherwise); one without keeps this
  // gateway's local copy of the same version (same id, ETag and time); a delete marker,
  // or a version whose only copies are off the local tiers (upstream), needs none. Versions
  // here that the list drops are removed with their bytes. Returns the indexes of the
  // versions that need bytes and came without (nothing changed then); empty: applied.
  // The key's write-back item becomes the primary's `writeback` (Index::ReplaceKeyVersions).
  // Blocking.
  virtual Result<std::vector<std::size_t>> ApplyReplica(
      const BucketName& bucket, const ObjectKey& key, std::vector<ReplicaVersion> newest_first,
      const std::optional<metadata::WritebackItem>& writeback) = 0;
  // Whether the primary's record `record` needs its bytes sent to a replica: it is no
  // delete marker and has a copy on a local tier.
  virtual bool HoldsBytesLocally(const metadata::ObjectRecord& record) const = 0;
};

// S3's bucket naming rules: 3-63 chars of [a-z0-9.-], starts and ends with a letter or
// digit, no "..", not an IPv4 address, no xn-- prefix or -s3alias suffix.
bool IsValidBucketName(std::string_view name);

}  // namespace strata::storage
