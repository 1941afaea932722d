// SharedCatalog: the cluster's bucket catalog (DESIGN.md, "Cluster"), kept in etcd so a
// bucket name is taken once, cluster-wide, and every gateway sees the same buckets with the
// same settings (versioning, tags, lifecycle rules). Each gateway keeps a local mirror of
// it (its RocksDB BucketCatalog, written through BucketMirror below), so the request path
// reads buckets locally; the shared catalog is the truth the mirror follows.
//
// Made by storage::Cluster::StartCatalog (storage/cluster.h) in cluster mode only; without
// [cluster] there is none and the object store answers from its index alone, as before.
//
// Every change is applied to the local mirror before the call returns (so this gateway
// sees its own change at once), and to every other member's mirror by a watch of etcd
// (milliseconds later). Changes applied by a call and by the watch are ordered by etcd's
// revision: an older state never overwrites a newer one.
//
// Threads: the blocking methods wait on futures for work done on the cluster's own thread:
// call them from the blocking pool (or any other thread), never from the cluster's thread
// (they answer kInternal there rather than deadlock) and preferably not from an I/O thread.
// LookupAsync is awaited from any executor and never blocks it. Errors common to all:
// kUnavailable (retryable, S3's 503) when etcd cannot be reached, kTimedOut when it does not
// answer in time, kCorruption when etcd holds a value that is not a bucket record (logged).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/records.h"

namespace strata::storage {

// The local side of the shared catalog: what the catalog writes so a gateway's own index
// equals etcd. Implemented by the object store (LocalObjectStore), whose bucket removal
// frees the parts of the multipart uploads discarded with a bucket. Blocking (synced index
// writes); called from the blocking pool or the cluster's thread, one call at a time.
class BucketMirror {
 public:
  virtual ~BucketMirror() = default;
  // Makes the local record equal `bucket`: creates it when missing, otherwise updates its
  // settings (versioning, tags, lifecycle rules). A local bucket of the same name but
  // another identity (owner, creation time, region, binding: an older bucket of that name)
  // is replaced when empty; a non-empty one keeps its identity (logged).
  virtual Result<void> MirrorBucket(const metadata::BucketRecord& bucket) = 0;
  // Removes the local bucket (ok when absent). kBucketNotEmpty when it still holds objects
  // here: the caller logs it and the bucket stays local.
  virtual Result<void> UnmirrorBucket(const BucketName& name) = 0;
  // Ok when the local bucket holds no object version (uploads in progress do not count:
  // they go with the bucket); kBucketNotEmpty otherwise; kNoSuchBucket when absent.
  virtual Result<void> CheckBucketEmpty(const BucketName& name) = 0;
  virtual Result<std::vector<metadata::BucketRecord>> MirroredBuckets() = 0;
};

class SharedCatalog {
 public:
  virtual ~SharedCatalog() = default;

  struct Claimed {
    metadata::BucketRecord holder;  // the record that holds the name now
    bool created = false;           // true: `holder` is the record Claim was given
  };
  // Takes `bucket.name` cluster-wide if no one holds it (an etcd transaction that creates
  // the key only when absent). Otherwise returns the holder, unchanged: the caller compares
  // owners to choose S3's answer. Blocking.
  virtual Result<Claimed> Claim(const metadata::BucketRecord& bucket) = 0;

  // The bucket as etcd holds it now (a linearizable read: a bucket created a moment ago
  // through another gateway is found), nullopt when there is none; a found bucket is
  // mirrored locally before the answer. LookupAsync runs on the cluster's thread and
  // resumes the caller on its own executor.
  virtual Result<std::optional<metadata::BucketRecord>> Lookup(const BucketName& name) = 0;
  virtual boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> LookupAsync(
      const BucketName& name) = 0;

  // Read-modify-write of the bucket's record: `mutate` changes the current record (an
  // error from it is returned as is and nothing is written); the write happens only if no
  // one changed the record meanwhile (a compare on the key's mod_revision), else it is
  // read and mutated again (a few times, then kUnavailable). kNoSuchBucket when gone.
  // Returns the record written. Blocking; `mutate` runs on the calling thread.
  using Mutation = std::function<Result<void>(metadata::BucketRecord&)>;
  virtual Result<metadata::BucketRecord> Update(const BucketName& name, const Mutation& mutate) = 0;

  // Removes the bucket cluster-wide after the emptiness check (below) passed: its key in
  // etcd, then the local mirror (every other member's through the watch). kNoSuchBucket
  // when etcd has no such bucket; the check's error (kBucketNotEmpty) as is. Blocking.
  virtual Result<void> Remove(const BucketName& name) = 0;

  // What Remove asks before removing: ok when the bucket is empty across the cluster. The
  // default asks this gateway's index only (BucketMirror::CheckBucketEmpty), which sees only
  // the objects written through this gateway; once objects live on their owners (requests
  // forwarded over the peer transport), the gateway sets a check that asks every member.
  // Set before any request; blocking, called on the thread that called Remove.
  using EmptinessCheck = std::function<Result<void>(const BucketName&)>;
  virtual void SetEmptinessCheck(EmptinessCheck check) = 0;
};

}  // namespace strata::storage
