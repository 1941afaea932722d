// The records the index stores, as plain values. Encoding lives in metadata/codec.*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/shared_text.h"

namespace strata::metadata {

// S3 tags (object or bucket): (key, value) pairs in the order the client sent them, keys
// unique. The gateway enforces S3's limits before anything is stored.
using Tags = std::vector<std::pair<std::string, std::string>>;

// S3 lifecycle configuration (PutBucketLifecycleConfiguration), as validated by the
// gateway. Times are in lifecycle days (config [lifecycle] day), dates in Unix epoch ms.
struct LifecycleFilter {
  // How the rule named its objects, kept so GetBucketLifecycleConfiguration answers in
  // the form it was given: the rule-level <Prefix> of the old API, a <Filter> with one
  // predicate (or none), or a <Filter><And>.
  enum class Form : std::uint8_t { kRulePrefix = 0, kFilter = 1, kAnd = 2 };
  Form form = Form::kFilter;
  std::optional<std::string> prefix;
  Tags tags;  // every one must be on the object
  std::optional<std::uint64_t> size_greater_than;
  std::optional<std::uint64_t> size_less_than;
};

struct LifecycleTransition {
  std::optional<std::int64_t> days;     // after creation
  std::optional<std::int64_t> date_ms;  // or from this date on (midnight UTC)
  std::string storage_class;
};

struct NoncurrentTransition {
  std::int64_t noncurrent_days = 0;                       // after the version became noncurrent
  std::optional<std::int64_t> newer_noncurrent_versions;  // keep this many newer ones as they are
  std::string storage_class;
};

struct LifecycleRule {
  std::string id;
  bool enabled = true;
  LifecycleFilter filter;
  std::vector<LifecycleTransition> transitions;
  std::vector<NoncurrentTransition> noncurrent_transitions;
  // Expiration of current versions: by age or date; and/or removal of delete markers
  // that are a key's only version left.
  std::optional<std::int64_t> expiration_days;
  std::optional<std::int64_t> expiration_date_ms;
  bool expired_object_delete_marker = false;
  // NoncurrentVersionExpiration.
  std::optional<std::int64_t> noncurrent_expiration_days;
  std::optional<std::int64_t> noncurrent_newer_versions;
  // AbortIncompleteMultipartUpload: DaysAfterInitiation.
  std::optional<std::int64_t> abort_incomplete_days;
};

// Who may do what with a bucket and its objects, beyond its owner's own rights (issue 20):
// settings the bucket's owner puts through S3's calls, replaced as a whole by
// BucketCatalog::UpdateBucketAccess so concurrent changes of different settings never
// lose one another.
// PutPublicAccessBlock's four flags, as S3 applies them.
struct PublicAccessBlock {
  bool block_public_acls = false;        // refuse requests that set a public ACL
  bool ignore_public_acls = false;       // public grants of ACLs count for nothing
  bool block_public_policy = false;      // refuse a bucket policy that is public
  bool restrict_public_buckets = false;  // a public policy grants only the owner's users

  bool operator==(const PublicAccessBlock&) const = default;
};

// One grant of an access control list (S3's ACLs): a permission given to one strata user
// or to one of S3's groups.
enum class AclPermission : std::uint8_t {
  kFullControl = 0,
  kRead = 1,
  kWrite = 2,
  kReadAcp = 3,
  kWriteAcp = 4,
};
enum class AclGrantee : std::uint8_t {
  kUser = 0,                // `user` names the strata user (its canonical id derives from it)
  kAllUsers = 1,            // everyone, anonymous callers included
  kAuthenticatedUsers = 2,  // every caller who signs
  kLogDelivery = 3,         // S3's log delivery group: no strata caller is in it
};
struct AclGrant {
  AclGrantee grantee = AclGrantee::kUser;
  std::string user = {};  // kUser only
  AclPermission permission = AclPermission::kRead;

  bool operator==(const AclGrant&) const = default;
};
// The grants in the order they were given. S3 never grants a resource's owner anything
// implicitly beyond reading and writing the ACL itself, so a private resource's ACL is
// one FULL_CONTROL grant to its owner.
using Acl = std::vector<AclGrant>;

// A bucket's object lock (WORM) configuration: once enabled (at CreateBucket, or by
// PutObjectLockConfiguration on a versioned bucket) never disabled.
struct ObjectLockConfig {
  bool enabled = false;
  // The default retention of new versions: "" (none), "GOVERNANCE" or "COMPLIANCE", for
  // `days` or `years` (one of them non-zero when a mode is set).
  std::string default_mode = {};
  std::int64_t default_days = 0;
  std::int64_t default_years = 0;

  bool operator==(const ObjectLockConfig&) const = default;
};

struct BucketAccess {
  // PutBucketPolicy's JSON as it was put (auth/policy.h parses it); empty: no policy.
  SharedText policy = {};
  // PutBucketOwnershipControls' rule: "BucketOwnerEnforced", "BucketOwnerPreferred" or
  // "ObjectWriter"; empty: none set (GetBucketOwnershipControls answers
  // OwnershipControlsNotFoundError, and ObjectWriter applies).
  std::string object_ownership = {};
  // nullopt: none set (GetPublicAccessBlock answers NoSuchPublicAccessBlockConfiguration).
  std::optional<PublicAccessBlock> public_access_block = {};
  // PutBucketCors' configuration, as GetBucketCors answers it (gateway/cors.h parses it);
  // empty: none (NoSuchCORSConfiguration, and no browser request is allowed).
  SharedText cors = {};
  // The bucket's ACL (format 7; a bucket recorded before has its owner's private ACL).
  Acl acl = {};
  ObjectLockConfig object_lock = {};  // format 7

  bool operator==(const BucketAccess&) const = default;
};

struct BucketRecord {
  BucketName name;
  std::string owner;            // user name of the creator (a user's first access key)
  std::int64_t created_ms = 0;  // Unix epoch milliseconds
  std::string region;           // LocationConstraint ("" means us-east-1)
  // S3 versioning: "" (never enabled), "Enabled" or "Suspended"; never back to "".
  std::string versioning = {};
  Tags tags = {};  // PutBucketTagging's TagSet; empty: none (GetBucketTagging answers 404)
  // Upstream binding: the `s3` tier (config name) whose bucket `upstream_bucket` holds
  // this bucket's objects under the same keys. Empty: a local-only bucket. Every object
  // change of a bound bucket queues a write-back item in the same batch.
  std::string upstream_tier = {};
  std::string upstream_bucket = {};
  // PutBucketLifecycleConfiguration's rules; empty: none (GET answers 404).
  std::vector<LifecycleRule> lifecycle = {};
  BucketAccess access = {};
};

// A run of an object's bytes stored as one unit on a tier.
struct Extent {
  std::string location;  // tier-specific: for local tiers a data file id
  std::uint64_t size = 0;
};

// Where a version's bytes live on a tier: the concatenation of its extents (one for a
// plain PUT, one per part for a completed multipart upload, which is never copied
// together).
struct Placement {
  std::string tier;  // tier name from the config
  std::vector<Extent> extents;
};

// One part of an object made by a multipart upload, as GetObjectAttributes and
// GET ?partNumber need it.
struct ObjectPart {
  std::uint32_t number = 0;  // the part number the client uploaded it as
  std::uint64_t size = 0;
  std::vector<std::pair<std::string, std::string>> checksums;  // as ObjectRecord::checksums
};

struct ObjectRecord {
  BucketName bucket;
  ObjectKey key;
  VersionId version_id;  // "null" in unversioned buckets (and for versions written while
                         // versioning is suspended)
  // A delete marker: a version with no bytes that makes the key look deleted.
  bool delete_marker = false;
  std::uint64_t size = 0;
  std::string etag;  // without quotes: hex MD5, or "<hex>-N" for multipart
  std::int64_t last_modified_ms = 0;
  std::string content_type;
  // Standard headers stored and returned as sent: cache-control, content-disposition,
  // content-encoding, content-language, expires. Names lower-case.
  std::vector<std::pair<std::string, std::string>> system_metadata;
  // x-amz-meta-* with the prefix stripped, names lower-case.
  std::vector<std::pair<std::string, std::string>> user_metadata;
  std::string storage_class = "STANDARD";
  // Checksums: algorithm name ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256") ->
  // base64 value, as S3 returns them.
  std::vector<std::pair<std::string, std::string>> checksums;
  // "FULL_OBJECT" (a checksum of all the bytes) or "COMPOSITE" (a checksum of the parts'
  // checksums, value suffixed "-N"); applies to the requested algorithm, CRC64NVME is
  // always FULL_OBJECT.
  std::string checksum_type = "FULL_OBJECT";
  std::vector<ObjectPart> parts;  // empty unless made by a multipart upload
  std::vector<Placement> placements;
  // Object tags (x-amz-tagging, PutObjectTagging). Changing them rewrites this version's
  // record in place: no new version, same ETag and Last-Modified.
  Tags tags;
  // RestoreObject (format 4): until restore_expiry_ms (Unix ms; 0: never restored) the
  // version's local copy is pinned, never evicted, and HEAD answers x-amz-restore;
  // restore_ongoing while its bytes are being fetched back from the upstream.
  std::int64_t restore_expiry_ms = 0;
  bool restore_ongoing = false;
  // The multipart upload whose completion made this version (format 5); empty for any
  // other write. A CompleteMultipartUpload retried after its answer was lost finds its
  // result by it, as long as the version exists.
  UploadId upload_id = {};
  // Format 6. The version's owner (user name) and ACL. An empty owner: a version recorded
  // before owners were, or written anonymously; the bucket's owner owns it, and its ACL is
  // that owner's private one.
  std::string owner = {};
  Acl acl = {};
  // Object lock: retention "" (none), "GOVERNANCE" or "COMPLIANCE" until retain_until_ms
  // (Unix ms), and the legal hold. Changing them rewrites the record in place, as tags.
  std::string retention_mode = {};
  std::int64_t retain_until_ms = 0;
  bool legal_hold = false;
};

// The placement of `object` on `tier` that holds bytes (has extents), or nullptr.
inline const Placement* PlacementOn(const ObjectRecord& object, std::string_view tier) {
  for (const auto& placement : object.placements) {
    if (placement.tier == tier && !placement.extents.empty()) {
      return &placement;
    }
  }
  return nullptr;
}

// A multipart upload in progress. `object` holds what the finished object will be
// described by (bucket, key, content type, metadata, storage class); its size, etag,
// checksums and placements are unset.
struct UploadRecord {
  UploadId upload_id;
  std::int64_t initiated_ms = 0;
  std::string owner;               // access key of the initiator
  std::string checksum_algorithm;  // "" or "CRC32", ...: every part must carry it
  std::string checksum_type;       // "", "COMPOSITE" or "FULL_OBJECT"
  ObjectRecord object;
};

// An uploaded part of a multipart upload; its bytes are one extent on a tier.
struct PartRecord {
  std::uint32_t number = 0;
  std::uint64_t size = 0;
  std::string etag;  // hex MD5, without quotes
  std::int64_t last_modified_ms = 0;
  std::vector<std::pair<std::string, std::string>> checksums;  // CRC64NVME plus requested
  std::string tier;
  std::string location;
};

// A key of an upstream-bound bucket whose latest change has not reached the upstream yet:
// one row per key in the queues family, written in the same batch as the change. A later
// change while it waits replaces `sequence` and `bytes` but keeps `enqueued_ms`, so
// overwrites inside the write-back delay coalesce into one push of the newest state.
struct WritebackItem {
  BucketName bucket;
  ObjectKey key;
  std::uint64_t sequence = 0;    // of the latest change: a push finishes only that one
  std::int64_t enqueued_ms = 0;  // when the oldest change not yet pushed was made
  std::uint64_t bytes = 0;       // size of the version to push; 0 for a delete
  std::uint32_t attempts = 0;    // failed pushes so far
  std::int64_t retry_ms = 0;     // after a failure: not before this time
  std::string last_error;        // of the last failed push
  // Versioned buckets: upstream version ids ("null" for the null version) of pushed
  // versions deleted by id since, to delete upstream too. A delete of one that is gone
  // already is no failure, so a crash between the push and the item's removal is safe.
  std::vector<std::string> upstream_deletes = {};
};

// The upstream's copy of a version, recorded once a push succeeded: the version becomes
// clean (its local copy may go; reads can come back from the upstream).
struct UpstreamCopy {
  VersionId version_id;  // which local version was pushed, identified by id, ETag and time
  std::string etag;
  std::int64_t last_modified_ms = 0;
  // tier: the s3 tier; one extent whose location is an UpstreamLocation (codec.h), its
  // size the version's (0 for a delete marker).
  Placement placement;
  bool delete_marker = false;  // the version is a delete marker (pushed as a DELETE)
};

// Where the upstream keeps a version: its ETag and, in a bucket that keeps versions, its
// upstream version id ("" when the upstream named none: an unversioned bucket, whose
// object the "null" version is once versioning is turned on).
struct UpstreamLocation {
  std::string etag;
  std::string version_id;
};

// The write-back backlog: keys waiting, and the bytes of their versions.
struct WritebackTotals {
  std::uint64_t objects = 0;
  std::uint64_t bytes = 0;
};

// One access key of a user. A user may hold several (key rotation); each is a record of
// its own, naming its user.
struct UserRecord {
  std::string access_key;
  std::string secret_key;
  bool admin = false;
  std::int64_t created_ms = 0;
  // The user the key belongs to (format 2); a key recorded before is its own user, named
  // as the key.
  std::string user = {};
};

}  // namespace strata::metadata
