// BucketCatalog: the namespace's small, global records: buckets (with their settings:
// versioning, tags, lifecycle rules) and users. What the cluster will keep in etcd, read
// by every node and changed rarely. Implemented by RocksIndex through metadata::Index.
// Synchronous and thread-safe; writes commit one WriteBatch: blocking pool only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/keys.h"
#include "metadata/records.h"

namespace strata::metadata {

class BucketCatalog {
 public:
  virtual ~BucketCatalog() = default;

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

  // Lifecycle (metadata/README.md). Every change of a key in a bucket with rules queues
  // a due row for the key (metadata/lifecycle.h's NextKeyDue over its new versions), and
  // every new upload one for its abort, in the change's batch.
  // Replaces a bucket's rules (empty removes them) and marks it for a reseed in the same
  // batch. kNoSuchBucket.
  virtual Result<void> SetBucketLifecycle(const BucketName& name,
                                          const std::vector<LifecycleRule>& rules) = 0;

  // Read-modify-write of a bucket's access settings: `change` edits them (an error from it
  // is returned and nothing is written), under the bucket's lock. kNoSuchBucket.
  virtual Result<void> UpdateBucketAccess(
      const BucketName& name, const std::function<Result<void>(BucketAccess&)>& change) = 0;

  // Users created through the admin API (bootstrap users live in the config).
  virtual Result<void> PutUser(const UserRecord& user) = 0;
  virtual Result<UserRecord> GetUser(const std::string& access_key) = 0;  // kNotFound
  virtual Result<void> DeleteUser(const std::string& access_key) = 0;     // kNotFound
  virtual Result<std::vector<UserRecord>> ListUsers() = 0;
};

}  // namespace strata::metadata
