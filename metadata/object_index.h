// ObjectIndex: the per-key part of the index: versions, their placements, multipart
// uploads. The unit the cluster will partition and replicate (by bucket and key), so
// every method names one key, or lists one bucket's keys in order (a listing the cluster
// merges from its partitions). Implemented by RocksIndex (metadata/rocks_index.h) through
// metadata::Index. Synchronous and thread-safe; the writing methods commit one
// WriteBatch under the key's lock (synced when IndexOptions::sync): run them on the
// blocking pool, never on an I/O thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/keys.h"
#include "metadata/object_lock.h"
#include "metadata/records.h"
#include "metadata/upload_completion.h"
#include "metadata/version_change.h"
#include "metadata/version_settings.h"

namespace strata::metadata {

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

struct CompletedUpload {
  ObjectRecord object;
  std::optional<ObjectRecord> replaced;  // the version the new object replaced
  std::vector<PartRecord> unused_parts;  // parts whose bytes the object does not use
};

class ObjectIndex {
 public:
  virtual ~ObjectIndex() = default;

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
  // `if_last_modified_ms` is given and the version's time differs (it was replaced);
  // kAccessDenied when its object lock keeps it (metadata/object_lock.h: judged by `lock`,
  // whose default counts every retention as in force).
  virtual Result<ObjectRecord> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                             const VersionId& version_id,
                                             const std::optional<std::int64_t>& if_last_modified_ms,
                                             const LockCheck& lock) = 0;
  Result<ObjectRecord> DeleteVersion(const BucketName& bucket, const ObjectKey& key,
                                     const VersionId& version_id) {
    return DeleteVersion(bucket, key, version_id, std::nullopt, LockCheck{});
  }
  // Changes the settings of one version in place, under the key's lock: `version_id`'s,
  // or the newest when nullopt (metadata/version_settings.h: its tags, owner and ACL,
  // retention, legal hold; never its identity or bytes). The lock rules are checked on the
  // record as it is under the lock, so a check and its change are atomic; a refused change
  // (kAccessDenied) writes nothing. The row keeps its place (no new version, same ETag
  // and Last-Modified). Returns the updated record. kNoSuchBucket; kNotFound when the key
  // has no such version (any more); kMethodNotAllowed when the version is a delete marker.
  virtual Result<ObjectRecord> UpdateVersionSettings(const BucketName& bucket, const ObjectKey& key,
                                                     const std::optional<VersionId>& version_id,
                                                     const VersionSettingsChange& change) = 0;
  // Replaces the tags of one version in place (UpdateVersionSettings).
  Result<ObjectRecord> SetObjectTags(const BucketName& bucket, const ObjectKey& key,
                                     const std::optional<VersionId>& version_id, const Tags& tags) {
    VersionSettingsChange change;
    change.tags = tags;
    return UpdateVersionSettings(bucket, key, version_id, change);
  }
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
  // Makes `completion.object` the current version and, in one batch, removes the upload
  // and all its parts, under the key's lock. kNotFound when the upload is gone;
  // kInvalidPart, retryable, when one of `completion.parts` is no longer stored as named
  // (uploaded again since it was read: build the object again from a fresh read);
  // `condition` looks at the key's current version as on PutObject. Every error changes
  // nothing.
  virtual Result<CompletedUpload> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                                 const UploadCompletion& completion,
                                                 const WriteCondition& condition) = 0;
  Result<CompletedUpload> CompleteUpload(const BucketName& bucket, const ObjectKey& key,
                                         const UploadCompletion& completion) {
    return CompleteUpload(bucket, key, completion, WriteCondition{});
  }
  // Removes the upload and its parts and returns the parts. kNotFound when it is gone.
  virtual Result<std::vector<PartRecord>> AbortUpload(const BucketName& bucket,
                                                      const ObjectKey& key,
                                                      const UploadId& upload_id) = 0;
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
  // Removes the current version of bucket/key if it is still the clean one `copy` names
  // (same id, ETag and time, and a copy on copy.placement.tier), queueing nothing: its
  // upstream copy stays the key's truth (a stale cache entry, or an eviction). Returns the
  // removed record, so the caller can free its bytes; nullopt when the key changed.
  virtual Result<std::optional<ObjectRecord>> DropCleanVersion(const BucketName& bucket,
                                                               const ObjectKey& key,
                                                               const UpstreamCopy& copy) = 0;
  // The versions of bucket/key, newest first, at most max.
  virtual Result<std::vector<ObjectRecord>> KeyVersions(const BucketName& bucket,
                                                        const ObjectKey& key, std::size_t max) = 0;
  // Applies `change` (metadata/version_change.h) to the version of bucket/key it names,
  // under the key's lock, if that version is still there with the ETag and time the
  // change expects and is not a delete marker: its guards checked on the stored record,
  // then its edits (placements, storage class, restore state; never what identifies the
  // version). The row keeps its place, queueing nothing; usage follows the placements.
  // Eviction, restore, read repair, moves between local tiers and lifecycle transitions
  // use this.
  virtual Result<VersionChangeResult> ChangeVersion(const BucketName& bucket, const ObjectKey& key,
                                                    const VersionChange& change) = 0;

  // A cluster replica's write (storage/replication.h): makes the key's versions exactly
  // `newest_first` (records of this bucket and key, placements as this gateway stores
  // them; empty: the key has none), in one batch under the key's lock, whatever they were.
  // The key's write-back item becomes the primary's `writeback` (nullopt: none; ignored
  // in a bucket without an upstream), so that a replica that becomes the primary pushes
  // what its predecessor had not; the key's lifecycle due time is queued as for any
  // change. Only the primary acts on either (storage/key_steward.h); usage follows.
  // Returns the records it replaced, so the caller can free the bytes no new record uses.
  // kNoSuchBucket; kInvalidArgument for a record of another key or two with one id.
  virtual Result<std::vector<ObjectRecord>> ReplaceKeyVersions(
      const BucketName& bucket, const ObjectKey& key, const std::vector<ObjectRecord>& newest_first,
      const std::optional<WritebackItem>& writeback) = 0;
};

}  // namespace strata::metadata
