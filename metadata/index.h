// Index: strata's metadata in RocksDB (buckets, object versions, users).
//
// The only place `rocksdb::` appears. Every method is synchronous and thread-safe; the
// ones that write commit one WriteBatch (synced to the WAL when `sync` is set, so an
// acknowledged change survives a crash). Callers on an I/O thread run the writing
// methods on the blocking pool. Key schema: metadata/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/keys.h"
#include "metadata/records.h"

namespace strata {
class Clock;  // common/clock.h
}  // namespace strata

namespace strata::metadata {

struct IndexOptions {
  bool sync = true;  // fsync the WAL on every committing write
  // The length of a lifecycle "day" (config [lifecycle] day), for the due times the index
  // queues when a key of a bucket with lifecycle rules changes.
  std::int64_t lifecycle_day_ms = 86'400'000;
  // RocksDB's block cache, shared by every column family (config server.index_cache).
  std::size_t block_cache_bytes = std::size_t{64} << 20;
  // The wall time queue items are stamped with (a write-back item's enqueued_ms); it
  // outlives the index. nullptr: the system clock.
  const Clock* clock = nullptr;
};

// The block cache: its size and the bytes of blocks it holds now.
struct IndexCacheStats {
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;
};

// A bucket whose lifecycle rules changed since its keys were last queued; `token` tells
// this change from a later one.
struct LifecycleReseed {
  BucketName bucket;
  std::string token;
};

// What a write requires of the current version (S3 conditional writes). Checked under the
// key's lock, so of two racing conditional creates exactly one succeeds.
struct WriteCondition {
  bool if_absent = false;  // If-None-Match: * -> kPreconditionFailed if a version exists
  std::optional<std::string> if_etag;  // If-Match -> kPreconditionFailed if the ETag differs,
                                       //   kNoSuchKey if there is no current version
  // The lifecycle worker's: the newest version must still be this one (id and time)
  // -> kPreconditionFailed.
  struct Stamp {
    VersionId version_id;
    std::int64_t last_modified_ms = 0;
  };
  std::optional<Stamp> if_newest = {};
};

// The usage counters of one (bucket, tier) (metadata/usage.h): the stored versions with a
// placement there and their bytes there, plus the bytes of uploaded parts.
struct UsageRow {
  BucketName bucket;
  std::string tier;
  std::int64_t objects = 0;
  std::int64_t bytes = 0;
};

struct ListObjectsPage {
  std::vector<ObjectRecord> objects;
  bool truncated = false;
};

// One row of ListObjectVersions: a version or delete marker, and whether it is the
// key's newest.
struct VersionEntry {
  ObjectRecord record;
  bool latest = false;
};

struct ListVersionsPage {
  std::vector<VersionEntry> versions;
  bool truncated = false;
};

struct ListUploadsPage {
  std::vector<UploadRecord> uploads;
  bool truncated = false;
};

struct ListPartsPage {
  std::vector<PartRecord> parts;
  bool truncated = false;
};

// Makes a completed upload's object from the upload and all its parts (in number
// order); runs under the key's lock inside Index::CompleteUpload.
using BuildUploadedObject = std::function<Result<ObjectRecord>(
    const UploadRecord& upload, const std::vector<PartRecord>& parts)>;

struct CompletedUpload {
  ObjectRecord object;
  std::optional<ObjectRecord> replaced;  // the version the new object replaced
  std::vector<PartRecord> unused_parts;  // parts whose bytes the object does not use
};

class Index {
 public:
  // Opens (creating if needed) the index under `dir`. Errors: kUnavailable when another
  // process holds it, kCorruption when RocksDB cannot read it.
  static Result<std::unique_ptr<Index>> Open(const std::string& dir, IndexOptions options);
  virtual ~Index() = default;

  // Buckets. CreateBucket fails with kAlreadyExists if the name is taken (the caller
  // compares owners to choose S3's code). DeleteBucket fails with kNoSuchBucket or
  // kBucketNotEmpty, atomically with respect to concurrent PutObject; multipart uploads
  // in progress are discarded with the bucket (as in S3) and their parts returned, so the
  // caller can free their bytes.
  virtual Result<void> CreateBucket(const BucketRecord& bucket) = 0;
  virtual Result<BucketRecord> GetBucket(const BucketName& name) = 0;
  virtual Result<std::vector<PartRecord>> DeleteBucket(const BucketName& name) = 0;
  virtual Result<std::vector<BucketRecord>> ListBuckets() = 0;

  // Sets a bucket's versioning state, "Enabled" or "Suspended". kNoSuchBucket.
  virtual Result<void> SetBucketVersioning(const BucketName& name, const std::string& state) = 0;
  // Replaces a bucket's tags; empty removes them. kNoSuchBucket.
  virtual Result<void> SetBucketTags(const BucketName& name, const Tags& tags) = 0;

  // Objects. Each key has a stack of versions, newest first; in an unversioned bucket one,
  // with id "null". PutObject adds `object` as the newest version; a version with the
  // same id (only "null" is ever reused) is replaced and returned, so the caller can free
  // its bytes. Conditions look at the newest version, a delete marker counting as none.
  // Fails with kNoSuchBucket when the bucket is gone.
  virtual Result<std::optional<ObjectRecord>> PutObject(const ObjectRecord& object,
                                                        const WriteCondition& condition) = 0;
  Result<std::optional<ObjectRecord>> PutObject(const ObjectRecord& object) {
    return PutObject(object, WriteCondition{});
  }
  // The newest version (possibly a delete marker); kNotFound when the key has none.
  virtual Result<ObjectRecord> GetObject(const BucketName& bucket, const ObjectKey& key) = 0;
  // Removes the newest version (unversioned buckets); returns it (nullopt when none).
  virtual Result<std::optional<ObjectRecord>> DeleteObject(const BucketName& bucket,
                                                           const ObjectKey& key) = 0;
  // One version by id; kNotFound when the key has no such version.
  virtual Result<ObjectRecord> GetVersion(const BucketName& bucket, const ObjectKey& key,
                                          const VersionId& version_id) = 0;
  // Removes one version for good and returns it; kNotFound when absent, and when
  // `if_last_modified_ms` is given and the version's time differs (it was replaced).
  virtual Result<ObjectRecord> DeleteVersion(
      const BucketName& bucket, const ObjectKey& key, const VersionId& version_id,
      const std::optional<std::int64_t>& if_last_modified_ms) = 0;
  Result<ObjectRecord> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                     const VersionId& version_id) {
    return DeleteVersion(bucket, key, version_id, std::nullopt);
  }
  // Replaces the tags of one version in place, under the key's lock: `version_id`'s, or
  // the newest when nullopt. The row keeps its place and every other field (no new
  // version, same ETag and Last-Modified). Returns the updated record. kNoSuchBucket;
  // kNotFound when the key has no such version (any more); kMethodNotAllowed when the
  // version is a delete marker.
  virtual Result<ObjectRecord> SetObjectTags(const BucketName& bucket, const ObjectKey& key,
                                             const std::optional<VersionId>& version_id,
                                             const Tags& tags) = 0;
  // Every version and delete marker of keys that start with `prefix`, in (key, newest
  // first) order, after (key_marker, version_id_marker) (an empty version_id_marker
  // skips all of key_marker's versions), at most max_versions.
  virtual Result<ListVersionsPage> ListVersions(const BucketName& bucket, const std::string& prefix,
                                                const std::string& key_marker,
                                                const std::string& version_id_marker,
                                                std::size_t max_versions) = 0;
  // Keys > start_after that begin with prefix and whose newest version is not a delete
  // marker, with that version, in key order, at most max_keys.
  virtual Result<ListObjectsPage> ListObjects(const BucketName& bucket, const std::string& prefix,
                                              const std::string& start_after,
                                              std::size_t max_keys) = 0;

  // Multipart uploads. The writing methods hold the key's lock, like PutObject, so a
  // part stored concurrently with completion or abort either makes it in or fails with
  // kNotFound. CreateUpload fails with kNoSuchBucket when the bucket is gone.
  virtual Result<void> CreateUpload(const UploadRecord& upload) = 0;
  virtual Result<UploadRecord> GetUpload(const BucketName& bucket, const ObjectKey& key,
                                         const UploadId& upload_id) = 0;  // kNotFound
  // Stores a part, replacing one with the same number (returned, to free its bytes).
  // kNotFound when the upload no longer exists.
  virtual Result<std::optional<PartRecord>> PutPart(const BucketName& bucket, const ObjectKey& key,
                                                    const UploadId& upload_id,
                                                    const PartRecord& part) = 0;
  // Parts numbered above `after`, in number order, at most max_parts.
  virtual Result<ListPartsPage> ListParts(const UploadId& upload_id, std::uint32_t after,
                                          std::size_t max_parts) = 0;
  // Uploads of `bucket` whose key starts with `prefix`, after (key_marker,
  // upload_id_marker) in (key, initiation) order, at most max_uploads. An empty
  // upload_id_marker skips every upload of key_marker.
  virtual Result<ListUploadsPage> ListUploads(const BucketName& bucket, const std::string& prefix,
                                              const std::string& key_marker,
                                              const std::string& upload_id_marker,
                                              std::size_t max_uploads) = 0;
  // Builds the object from the upload's parts with `build` and, in one batch, makes it
  // the current version and removes the upload and its parts. kNotFound when the upload
  // is gone; `build`'s error is returned as is and changes nothing; `condition` looks at
  // the key's current version as on PutObject (its error changes nothing either).
  virtual Result<CompletedUpload> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                                 const UploadId& upload_id,
                                                 const WriteCondition& condition,
                                                 const BuildUploadedObject& build) = 0;
  Result<CompletedUpload> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                         const UploadId& upload_id,
                                         const BuildUploadedObject& build) {
    return CompleteUpload(bucket, key, upload_id, WriteCondition{}, build);
  }
  // Removes the upload and its parts and returns the parts. kNotFound when it is gone.
  virtual Result<std::vector<PartRecord>> AbortUpload(const BucketName& bucket,
                                                      const ObjectKey& key,
                                                      const UploadId& upload_id) = 0;

  // Background maintenance only (a full scan, never on the request path): calls
  // fn(tier, location) for every extent of every stored object version's placements and
  // for every part of every upload in progress, all read from one snapshot, so bytes
  // that move from a part to an object (CompleteUpload) are seen once either way. A
  // location may be reported more than once. Any error (e.g. kCorruption for a record
  // that does not decode) means the scan is incomplete.
  virtual Result<void> ForEachLocation(
      const std::function<void(std::string_view tier, std::string_view location)>& fn) = 0;

  // Background maintenance only (a full scan): calls fn with every stored version and
  // delete marker (bucket and key set), from one snapshot, in (bucket, key, newest first)
  // order, until it returns false.
  virtual Result<void> ForEachVersion(const std::function<bool(const ObjectRecord&)>& fn) = 0;

  // Usage counters, changed by every write in its own batch: one row per (bucket, tier)
  // with a count left, in (bucket, tier) order. Reads the small usage family; cheap.
  virtual Result<std::vector<UsageRow>> Usage() = 0;

  // Write-back queue (metadata/README.md). Calls fn for each item in (bucket, key) order
  // until it returns false. For the write-back worker and the admin API, not requests.
  virtual Result<void> ScanWriteback(const std::function<bool(const WritebackItem&)>& fn) = 0;
  // The item of one key, if any: a key with an item is not (yet) as the upstream has it.
  virtual Result<std::optional<WritebackItem>> GetWriteback(const BucketName& bucket,
                                                            const ObjectKey& key) = 0;
  // After a successful push of `item`: under the key's lock, records `copy` (when given)
  // on the version it names, if that version is still there, and removes the item if no
  // change came after it (same sequence). Returns whether the item was removed.
  virtual Result<bool> FinishWriteback(const WritebackItem& item,
                                       const std::optional<UpstreamCopy>& copy) = 0;
  // Records `copy` on the version (or delete marker) it names, if that version is still
  // there, leaving the queue alone: a versioned key's versions go up one by one, each
  // recorded as it lands. Returns whether it was recorded.
  virtual Result<bool> RecordUpstreamCopy(const BucketName& bucket, const ObjectKey& key,
                                          const UpstreamCopy& copy) = 0;
  // The oldest `max` versions and delete markers of bucket/key with no copy on `tier`,
  // oldest first: the order in which a versioned key's history must reach the upstream.
  virtual Result<std::vector<ObjectRecord>> UnpushedVersions(const BucketName& bucket,
                                                             const ObjectKey& key,
                                                             std::string_view tier,
                                                             std::size_t max) = 0;
  // After a failed push: counts the attempt and stores the error and the retry time,
  // unless a newer change replaced the item meanwhile.
  virtual Result<void> DeferWriteback(const WritebackItem& item, std::int64_t retry_ms,
                                      const std::string& error) = 0;
  // Removes the current version of bucket/key if it is still the clean one `copy` names
  // (same id, ETag and time, and a copy on copy.placement.tier), queueing nothing: its
  // upstream copy stays the key's truth (a stale cache entry, or an eviction). Returns the
  // removed record, so the caller can free its bytes; nullopt when the key changed.
  virtual Result<std::optional<ObjectRecord>> DropCleanVersion(const BucketName& bucket,
                                                               const ObjectKey& key,
                                                               const UpstreamCopy& copy) = 0;
  // Items and bytes waiting, kept in memory (counted at open, updated by every commit).
  virtual WritebackTotals WritebackBacklog() const = 0;

  // The block cache (IndexOptions::block_cache_bytes) and what it holds now; for metrics.
  virtual IndexCacheStats BlockCache() const = 0;

  // Lifecycle (metadata/README.md). Every change of a key in a bucket with rules queues
  // a due row for the key (metadata/lifecycle.h's NextKeyDue over its new versions), and
  // every new upload one for its abort, in the change's batch.
  // Replaces a bucket's rules (empty removes them) and marks it for a reseed in the same
  // batch. kNoSuchBucket.
  virtual Result<void> SetBucketLifecycle(const BucketName& name,
                                          const std::vector<LifecycleRule>& rules) = 0;
  // Rows due at or before now_ms, earliest first, at most max.
  virtual Result<std::vector<LifecycleRow>> DueLifecycleRows(std::int64_t now_ms,
                                                             std::size_t max) = 0;
  // Adds `add` and removes `remove` in one batch.
  virtual Result<void> UpdateLifecycleRows(const std::vector<LifecycleRow>& add,
                                           const std::vector<LifecycleRow>& remove) = 0;
  // Buckets marked for a reseed; FinishReseed clears a mark unless a newer change set it.
  virtual Result<std::vector<LifecycleReseed>> LifecycleReseeds() = 0;
  virtual Result<void> FinishReseed(const LifecycleReseed& reseed) = 0;
  // The versions of bucket/key, newest first, at most max.
  virtual Result<std::vector<ObjectRecord>> KeyVersions(const BucketName& bucket,
                                                        const ObjectKey& key, std::size_t max) = 0;
  // Rewrites one version's record in place under the key's lock, if the version with
  // `version_id` still has `etag` and `last_modified_ms` and is not a delete marker:
  // `change` edits its placements, storage class or restore state (never the fields that
  // identify it)
  // and returns whether to write. The row keeps its place, queueing nothing. Returns
  // whether a change was written. Evicting a clean version's local copy, restoring it and
  // lifecycle transitions use this.
  virtual Result<bool> ChangeVersion(const BucketName& bucket, const ObjectKey& key,
                                     const VersionId& version_id, const std::string& etag,
                                     std::int64_t last_modified_ms,
                                     const std::function<bool(ObjectRecord&)>& change) = 0;

  // Users created through the admin API (bootstrap users live in the config).
  virtual Result<void> PutUser(const UserRecord& user) = 0;
  virtual Result<UserRecord> GetUser(const std::string& access_key) = 0;  // kNotFound
  virtual Result<void> DeleteUser(const std::string& access_key) = 0;     // kNotFound
  virtual Result<std::vector<UserRecord>> ListUsers() = 0;
};

}  // namespace strata::metadata
