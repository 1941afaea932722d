// Index: strata's metadata in RocksDB (buckets, object versions, users).
//
// The only place `rocksdb::` appears. Every method is synchronous and thread-safe; the
// ones that write commit one WriteBatch (synced to the WAL when `sync` is set, so an
// acknowledged change survives a crash). Callers on an I/O thread run the writing
// methods on the blocking pool. Key schema: metadata/README.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/records.h"

namespace strata::metadata {

struct IndexOptions {
  bool sync = true;  // fsync the WAL on every committing write
};

// What a write requires of the current version (S3 conditional writes). Checked under the
// key's lock, so of two racing conditional creates exactly one succeeds.
struct WriteCondition {
  bool if_absent = false;  // If-None-Match: * -> kPreconditionFailed if a version exists
  std::optional<std::string> if_etag;  // If-Match -> kPreconditionFailed if the ETag differs,
                                       //   kNoSuchKey if there is no current version
};

struct ListObjectsPage {
  std::vector<ObjectRecord> objects;
  bool truncated = false;
};

class Index {
 public:
  // Opens (creating if needed) the index under `dir`. Errors: kUnavailable when another
  // process holds it, kCorruption when RocksDB cannot read it.
  static Result<std::unique_ptr<Index>> Open(const std::string& dir, IndexOptions options);
  virtual ~Index() = default;

  // Buckets. CreateBucket fails with kAlreadyExists if the name is taken (the caller
  // compares owners to choose S3's code). DeleteBucket fails with kNoSuchBucket or
  // kBucketNotEmpty, atomically with respect to concurrent PutObject.
  virtual Result<void> CreateBucket(const BucketRecord& bucket) = 0;
  virtual Result<BucketRecord> GetBucket(const BucketName& name) = 0;
  virtual Result<void> DeleteBucket(const BucketName& name) = 0;
  virtual Result<std::vector<BucketRecord>> ListBuckets() = 0;

  // Objects (current versions). PutObject fails with kNoSuchBucket when the bucket is
  // gone; on success returns the record it replaced, so the caller can free its bytes.
  virtual Result<std::optional<ObjectRecord>> PutObject(const ObjectRecord& object,
                                                        const WriteCondition& condition) = 0;
  Result<std::optional<ObjectRecord>> PutObject(const ObjectRecord& object) {
    return PutObject(object, WriteCondition{});
  }
  virtual Result<ObjectRecord> GetObject(const BucketName& bucket, const ObjectKey& key) = 0;
  // Removes the current version; returns it (nullopt when there was none).
  virtual Result<std::optional<ObjectRecord>> DeleteObject(const BucketName& bucket,
                                                           const ObjectKey& key) = 0;
  // Keys > start_after that begin with prefix, in key order, at most max_keys.
  virtual Result<ListObjectsPage> ListObjects(const BucketName& bucket, const std::string& prefix,
                                              const std::string& start_after,
                                              std::size_t max_keys) = 0;

  // Users created through the admin API (bootstrap users live in the config).
  virtual Result<void> PutUser(const UserRecord& user) = 0;
  virtual Result<UserRecord> GetUser(const std::string& access_key) = 0;  // kNotFound
  virtual Result<void> DeleteUser(const std::string& access_key) = 0;     // kNotFound
  virtual Result<std::vector<UserRecord>> ListUsers() = 0;
};

}  // namespace strata::metadata
