// ColdReads: everything a bucket bound to the upstream reads from the upstream (private to
// storage/; the TierEngine forwards to it). DESIGN.md "Upstream binding".
//   - Open: a GET or HEAD of a key only the upstream has, or of a clean version whose
//     local copy was evicted (storage/cold_read.h). Whole-object GETs take the key's seat
//     in CopyFlights (shared with the fetcher, so a prefetch of the key counts too): one
//     fetches, the rest wait and read the index again. A fill is admitted by TierCaches,
//     written as the bytes stream to the client and committed afterwards in the caller's
//     task group, if its size and MD5 ETag are the upstream's: a new clean cached copy, or
//     the evicted version's local copy again.
//   - Revalidate: a clean copy of an unversioned bucket's current version, last found
//     current upstream longer ago than the s3 tier's revalidate_after, is checked with
//     If-None-Match; one changed or deleted upstream is dropped.
//   - ListMerged: the index's page and the upstream's, k-way merged (listing_merge.h).
//   - Adopt: a bucket the index lacks and the upstream has is bound to it.
//   - FetchLocalCopy: the same fill with no client to stream to (a copy's source).
//
// Thread-safe. Memory: the validation map is bounded (kMaxValidations, then cleared: each
// copy is simply checked once more); fills stream through the S3 client's buffer.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/cold_read.h"
#include "storage/object_store.h"
#include "storage/upstream/copy_flights.h"
#include "storage/upstream/upstream.h"

namespace strata::storage {

class TierCaches;
class PrefetchJobs;
class ColdReadOfObject;

struct ColdReadParts {
  const Config& config;
  const Clock& clock;
  metadata::Index& index;
  ObjectStore& store;
  Upstream& upstream;
  TierCaches* tier_caches;  // null: every fill is admitted
  PrefetchJobs* prefetch;   // null: misses teach nothing
  CopyFlights& flights;
  boost::asio::thread_pool& blocking_pool;  // commits (fsync, synced index writes)
};

class ColdReads {
 public:
  explicit ColdReads(ColdReadParts parts) : parts_(parts) {}
  ColdReads(const ColdReads&) = delete;
  ColdReads& operator=(const ColdReads&) = delete;

  // A read of `key` of `bucket` (bound) from the upstream: of the version `evicted` (a
  // clean version without a local copy) or, without it, of the upstream's object that the
  // index lacks (kNoSuchKey when the upstream has none, or a delete of the key waits to
  // be pushed). nullptr: a whole read found another read of the key bringing it local,
  // waited for it, and the caller should look in the index again.
  boost::asio::awaitable<Result<std::unique_ptr<ColdRead>>> Open(
      const metadata::BucketRecord& bucket, ObjectKey key,
      std::optional<metadata::ObjectRecord> evicted, ColdReadKind kind);
  // Whether `record` (the current version of a bound bucket) may be served from its local
  // copy: false when the copy was stale and is dropped now (read again). An unreachable
  // upstream keeps the copy (true; logged).
  boost::asio::awaitable<Result<bool>> Revalidate(const metadata::BucketRecord& bucket,
                                                  const metadata::ObjectRecord& record);
  boost::asio::awaitable<Result<metadata::ListObjectsPage>> ListMerged(
      const metadata::BucketRecord& bucket, std::string prefix, std::string start_after,
      std::size_t max_keys);
  // nullopt when the upstream has no such bucket either (or the name is not one S3 takes).
  boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> Adopt(BucketName name,
                                                                              std::string owner);
  // The version's record with a local copy: `known` (evicted) fetched back, or the
  // upstream's object at `key` cached. kUnavailable (retryable) when it changed meanwhile.
  boost::asio::awaitable<Result<metadata::ObjectRecord>> FetchLocalCopy(
      const metadata::BucketRecord& bucket, ObjectKey key,
      std::optional<metadata::ObjectRecord> known);

  static constexpr std::size_t kMaxValidations = 1'000'000;

 private:
  friend class ColdReadOfObject;

  // When each clean copy was last found current upstream, with the upstream ETag it was
  // checked against. Sharded by key, so GETs on different cores rarely meet on one lock.
  class Validations {
   public:
    explicit Validations(const Clock& clock) : clock_(clock) {}
    bool Fresh(const std::string& id, const std::string& etag,
               std::chrono::milliseconds max_age) const;
    void Mark(const std::string& id, const std::string& etag);

   private:
    static constexpr std::size_t kShards = 64;
    struct Shard {
      mutable std::mutex lock;
      std::unordered_map<std::string, std::pair<std::string, SteadyTime>> checked;
    };
    const Shard& ShardOf(const std::string& id) const {
      return shards_[std::hash<std::string>{}(id) % kShards];
    }
    Shard& ShardOf(const std::string& id) {
      return shards_[std::hash<std::string>{}(id) % kShards];
    }
    const Clock& clock_;
    std::array<Shard, kShards> shards_;
  };

  // Commits a fill if its bytes are what the upstream described (`restore`: the evicted
  // version's local copy again; else a new clean cached copy). Returns whether it did.
  boost::asio::awaitable<bool> CommitFill(std::unique_ptr<PendingWrite> fill,
                                          metadata::ObjectRecord record, std::string upstream_etag,
                                          bool restore);
  // What a cold read of `key` serves: `known` (a clean version whose local copy was
  // evicted) or, without it, the upstream's object there.
  boost::asio::awaitable<Result<metadata::ObjectRecord>> RecordToRead(
      const metadata::BucketRecord& bucket, const ObjectKey& key,
      std::optional<metadata::ObjectRecord> known);
  // The change of `key` waiting to be pushed, if any (a delete hides the upstream's copy).
  boost::asio::awaitable<Result<std::optional<metadata::WritebackItem>>> WaitingChange(
      const BucketName& bucket, const ObjectKey& key);
  // The upstream's object at `key`, as a record of `bucket` (a HEAD), once no delete of
  // the key waits to be pushed.
  boost::asio::awaitable<Result<metadata::ObjectRecord>> DescribeUpstreamObject(
      const metadata::BucketRecord& bucket, const ObjectKey& key);
  // The upstream's entries of a listing page that the index does not override.
  Result<std::vector<metadata::ObjectRecord>> UpstreamOnly(
      const metadata::BucketRecord& bucket, const std::vector<upstream::ListedObject>& listed);

  ColdReadParts parts_;
  Validations validations_{parts_.clock};
};

}  // namespace strata::storage
