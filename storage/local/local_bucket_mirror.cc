// LocalObjectStore as the shared catalog's mirror (storage/shared_catalog.h's BucketMirror):
// the index's buckets written as etcd holds them, and a local bucket's removal.
#include <spdlog/spdlog.h>

#include "common/guard.h"
#include "metadata/codec.h"
#include "storage/local/local_object_store.h"

namespace strata::storage {
namespace {

// Whether two records describe the same bucket (not an older one of the same name).
bool SameIdentity(const metadata::BucketRecord& a, const metadata::BucketRecord& b) {
  return a.owner == b.owner && a.created_ms == b.created_ms && a.region == b.region &&
         a.upstream_tier == b.upstream_tier && a.upstream_bucket == b.upstream_bucket;
}

}  // namespace

Result<void> LocalObjectStore::DropLocalBucket(const BucketName& name) {
  return GuardExceptions("delete bucket", [&]() -> Result<void> {
    auto deleted = index_.DeleteBucket(name);
    if (!deleted.ok()) {
      if (deleted.error().code == ErrorCode::kNotFound ||
          deleted.error().code == ErrorCode::kNoSuchBucket) {
        return NoSuchBucket(name);
      }
      return std::move(deleted).error();
    }
    RemoveParts(*deleted);  // of uploads discarded with the bucket
    return Ok();
  });
}

Result<void> LocalObjectStore::MirrorBucket(const metadata::BucketRecord& bucket) {
  return GuardExceptions("mirror bucket", [&]() -> Result<void> {
    auto local = index_.GetBucket(bucket.name);
    if (!local.ok() && local.error().code != ErrorCode::kNotFound &&
        local.error().code != ErrorCode::kNoSuchBucket) {
      return std::move(local).error();
    }
    if (local.ok() && !SameIdentity(*local, bucket)) {
      // An older bucket of this name (removed and made again while this gateway was away).
      auto dropped = DropLocalBucket(bucket.name);
      if (!dropped.ok()) {
        spdlog::warn(
            "bucket {}: the cluster's catalog holds another bucket of this name (owner {}) "
            "than this gateway's (owner {}), which still holds objects: only its settings "
            "follow the catalog",
            bucket.name.str(), bucket.owner, local->owner);
      } else {
        local = Error(ErrorCode::kNotFound, "replaced");
      }
    }
    if (!local.ok()) {
      auto created = index_.CreateBucket(bucket);
      if (created.ok() || created.error().code != ErrorCode::kAlreadyExists) {
        return created;
      }
      local = index_.GetBucket(bucket.name);  // made meanwhile: update it below
      if (!local.ok()) {
        return std::move(local).error();
      }
    }
    if (local->versioning != bucket.versioning && !bucket.versioning.empty()) {
      STRATA_RETURN_IF_ERROR(index_.SetBucketVersioning(bucket.name, bucket.versioning));
    }
    if (local->tags != bucket.tags) {
      STRATA_RETURN_IF_ERROR(index_.SetBucketTags(bucket.name, bucket.tags));
    }
    if (local->access != bucket.access) {
      STRATA_RETURN_IF_ERROR(index_.UpdateBucketAccess(
          bucket.name, [&bucket](metadata::BucketAccess& access) -> Result<void> {
            access = bucket.access;
            return Ok();
          }));
    }
    // The rules compared as stored (LifecycleRule has no ==): the records with everything
    // else equal.
    metadata::BucketRecord theirs = *local;
    theirs.lifecycle = bucket.lifecycle;
    if (metadata::EncodeBucket(theirs) != metadata::EncodeBucket(*local)) {
      STRATA_RETURN_IF_ERROR(index_.SetBucketLifecycle(bucket.name, bucket.lifecycle));
    }
    return Ok();
  });
}

Result<void> LocalObjectStore::UnmirrorBucket(const BucketName& name) {
  auto dropped = DropLocalBucket(name);
  if (!dropped.ok() && dropped.error().code == ErrorCode::kNoSuchBucket) {
    return Ok();
  }
  return dropped;
}

Result<void> LocalObjectStore::CheckBucketEmpty(const BucketName& name) {
  return GuardExceptions("check bucket", [&]() -> Result<void> {
    auto exists = GetBucket(name);
    if (!exists.ok()) {
      return std::move(exists).error();
    }
    auto versions = index_.ListVersions(name, "", "", "", 1);
    if (!versions.ok()) {
      return std::move(versions).error();
    }
    if (!versions->versions.empty()) {
      return Error(ErrorCode::kBucketNotEmpty,
                   "The bucket you tried to delete is not empty: " + name.str());
    }
    return Ok();
  });
}

Result<std::vector<metadata::BucketRecord>> LocalObjectStore::MirroredBuckets() {
  return index_.ListBuckets();
}

}  // namespace strata::storage
