// TierEngine: the storage engine as one thing, the entry the gateway holds (DESIGN.md
// "Layout": handlers call the tier engine for bytes). It owns the object store over the
// local tiers and, with an `s3` tier, the upstream with its write-back worker and fetcher,
// plus capacity (admission and eviction), read repair, prefetch, lifecycle and the
// scrubber, wired in the one order their lifetimes need; main builds it with Open and
// nothing outside storage names those classes.
//
// Handlers speak S3 and ask the engine; which copy serves a read (the hot tier, another
// local tier, the upstream through a cold read) and what is cached is decided here:
//   - store(): buckets, writes, and reads of versions with a local copy;
//   - OpenColdRead and friends: a bucket bound to the upstream (read-through, evicted
//     versions, revalidation, merged listings, adoption of the upstream's buckets);
//   - the bound buckets' own upstream calls (create, versioning, delete, list);
//   - restore, prefetch jobs, write-back flushes and scrub passes for the API;
//   - Stats for /metrics.
//
// Lifetime: Open, then Start once the server accepts, then Stop after the server stopped
// (and its background task group, which holds cold-read commits, has drained) and before
// the index closes (the destructor stops too). Every method but Start and Stop is
// thread-safe and may run on any I/O thread; coroutines run on the caller's executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/cold_read.h"
#include "storage/engine_stats.h"
#include "storage/object_store.h"
#include "storage/prefetch_job.h"

namespace strata::storage {

class Upstream;
class UpstreamTier;
class WritebackWorker;
class KeySteward;
class Fetcher;
class CopyRepairer;
class TierCaches;
class PrefetchJobs;
class LifecycleWorker;
class Scrubber;
class CopyFlights;
class ColdReads;

// The bucket tag that makes a bucket behave as Glacier does: a GET of a version of a cold
// class (one mapped to the upstream tier) that has no local copy answers 403
// InvalidObjectState until RestoreObject brings it back, instead of reading it through.
// Set with PutBucketTagging (aws s3api put-bucket-tagging), value "true".
inline constexpr std::string_view kRequireRestoreTag = "strata:require-restore";

// A bucket of the upstream's, as its ListBuckets shows it.
struct UpstreamBucket {
  std::string name;
  std::string creation_date;  // ISO 8601, as the upstream wrote it
};

// The outcome of a restore's fetch, on the fetcher's thread: true when it made the local
// copy, false when there was nothing to do, or why it failed.
using RestoreDone = std::function<void(const Result<bool>&)>;

class TierEngine {
 public:
  // Opens the store on the local tiers (creating their directories, sweeping orphans) and
  // builds the background parts the configuration asks for; none runs before Start.
  // `config`, `index`, `clock` and `blocking_pool` (where commits fsync) outlive the
  // engine. Errors name what failed: the local tiers, or an `s3` tier's endpoint.
  static Result<std::unique_ptr<TierEngine>> Open(const Config& config, metadata::Index& index,
                                                  const Clock& clock,
                                                  boost::asio::thread_pool& blocking_pool);
  ~TierEngine();
  TierEngine(const TierEngine&) = delete;
  TierEngine& operator=(const TierEngine&) = delete;

  // Starts the background work: write-back, fetches, lifecycle, eviction, scrubbing.
  void Start();
  // Stops it, in dependency order (the scrubber waits on repairs the fetcher runs; prefetch
  // jobs run on the fetcher's thread; upstream clients go before their io_contexts).
  // Idempotent.
  void Stop();

  ObjectStore& store() { return *store_; }
  // Counters of every part, for /metrics.
  EngineStats Stats() const;

  // --- Local reads ---
  // A GET served from a local copy: eviction learns which copies are read, and a scan the
  // prefetcher follows moves on. Never waits.
  void OnLocalRead(const metadata::ObjectRecord& record);

  // --- Buckets bound to the upstream (DESIGN.md "Upstream binding") ---
  // The `s3` tier new buckets are bound to; empty when the configuration has none.
  const std::string& upstream_tier() const;
  // Whether an `s3` tier is configured: new buckets are bound to it, and its buckets the
  // index lacks are adopted on first use.
  bool has_upstream() const { return upstream_ != nullptr; }
  // Whether `bucket` is bound to the upstream this engine reaches: its reads may be cold.
  bool Bound(const metadata::BucketRecord& bucket) const;
  // A GET or HEAD of a bound bucket's key that no local tier has: the upstream's object
  // the index lacks (`evicted` nullopt; kNoSuchKey when the upstream has none, or a delete
  // of the key waits to be pushed) or the clean version `evicted`, whose local copy was
  // evicted. nullptr: a whole read found another read of the key bringing it local and
  // waited for it; read the index again.
  boost::asio::awaitable<Result<std::unique_ptr<ColdRead>>> OpenColdRead(
      const metadata::BucketRecord& bucket, ObjectKey key,
      std::optional<metadata::ObjectRecord> evicted, ColdReadKind kind);
  // Before a GET or HEAD serves the local copy of a bound bucket's current version `record`:
  // false when the copy turned out stale upstream and was dropped (read again). Asks the
  // upstream (If-None-Match) at most once per the s3 tier's revalidate_after; serves the
  // copy while the upstream is unreachable.
  boost::asio::awaitable<Result<bool>> Revalidate(const metadata::BucketRecord& bucket,
                                                  const metadata::ObjectRecord& record);
  // Whether a read of `record` (a version of `bucket` without a local copy: a GET, or a
  // copy's source) must wait for a restore (kRequireRestoreTag on a cold class).
  bool RestoreRequired(const metadata::BucketRecord& bucket,
                       const metadata::ObjectRecord& record) const;
  // A version of a bound bucket made local without a client to stream to (a copy's
  // source): `known`, a clean version whose local copy was evicted, fetched back; without
  // it, the upstream's object at `key` cached as a GET would. kNoSuchKey when the upstream
  // has none; kUnavailable (retryable) when it changed meanwhile.
  boost::asio::awaitable<Result<metadata::ObjectRecord>> FetchLocalCopy(
      const metadata::BucketRecord& bucket, ObjectKey key,
      std::optional<metadata::ObjectRecord> known);
  // A page of a bound bucket's listing: keys > start_after beginning with `prefix`, from the
  // index and the upstream merged in key order (the index's entry, or a delete of the key
  // waiting to be pushed, hides the upstream's), at most max_keys.
  boost::asio::awaitable<Result<metadata::ListObjectsPage>> ListMerged(
      const metadata::BucketRecord& bucket, std::string prefix, std::string start_after,
      std::size_t max_keys);
  // A bucket the index lacks and the upstream has, bound to it now (owned by `owner`), so
  // an existing store shows through strata with nothing to configure. nullopt when there
  // is no upstream or it has no such bucket.
  boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> AdoptUpstreamBucket(
      BucketName name, std::string owner);
  // CreateBucket's upstream half, before the index's: the bucket made upstream (success
  // when strata's credentials own it there already).
  boost::asio::awaitable<Result<void>> CreateUpstreamBucket(BucketName name);
  // PutBucketVersioning's upstream half, first, so the upstream's history follows.
  boost::asio::awaitable<Result<void>> SetUpstreamVersioning(const metadata::BucketRecord& bucket,
                                                             std::string status);
  // DeleteBucket of a bound bucket, before its record goes: its waiting changes are pushed
  // (for up to `drain_for`: kBucketNotEmpty if some remain), then the upstream bucket must
  // be empty (kBucketNotEmpty), or the upstream would keep what strata says is gone.
  boost::asio::awaitable<Result<void>> PrepareUpstreamDelete(const metadata::BucketRecord& bucket,
                                                             std::chrono::milliseconds drain_for);
  // ...and after the record went: the upstream bucket too (gone already is fine).
  boost::asio::awaitable<Result<void>> DeleteUpstreamBucket(const metadata::BucketRecord& bucket);
  // The upstream's buckets (empty without an upstream).
  boost::asio::awaitable<Result<std::vector<UpstreamBucket>>> ListUpstreamBuckets();
  // Lifecycle transitions of `rules` must each name a class this engine can move the
  // bucket's objects to: a local tier, or the upstream tier the bucket is bound to.
  // kInvalidArgument naming the class otherwise (peer tiers store no data yet).
  Result<void> CheckTransitions(const metadata::BucketRecord& bucket,
                                const std::vector<metadata::LifecycleRule>& rules) const;

  // --- Restore (RestoreObject) ---
  // Whether `record`'s storage class lives on the upstream and can be brought back.
  bool Restorable(const metadata::ObjectRecord& record) const;
  // Queues the fetch of the clean version `record`'s bytes onto the hot tier; `done` is
  // called on the fetcher's thread once it ended. False, calling nothing, when too many
  // restores wait already.
  bool QueueRestore(metadata::ObjectRecord record, RestoreDone done);

  // --- Prefetch jobs (admin API; errors as PrefetchJobs gives them) ---
  bool CanPrefetch() const { return prefetch_ != nullptr; }
  Result<PrefetchJobInfo> StartPrefetch(const BucketName& bucket, const std::string& prefix,
                                        std::uint64_t budget);
  Result<PrefetchJobInfo> GetPrefetch(std::uint64_t id) const;
  Result<PrefetchJobInfo> CancelPrefetch(std::uint64_t id);
  std::vector<PrefetchJobInfo> ListPrefetches() const;  // oldest first

  // In a cluster, before Start: write-back and lifecycle act only on the keys `steward`
  // (outliving the engine's Stop) says are this gateway's (storage/key_steward.h).
  void SetSteward(KeySteward* steward);

  // --- Write-back and scrubbing (admin API) ---
  // Until `deadline` (monotonic), every waiting change is due at once; a past deadline
  // goes back to the delay. Does nothing without an upstream.
  void FlushWriteback(SteadyTime deadline);
  // Starts a scrub pass unless one runs; whether this call started it.
  bool StartScrubPass();
  // One lifecycle pass now, on the calling thread (tools and tests; Start runs them every
  // [lifecycle] interval).
  Result<void> RunLifecyclePass();

 private:
  TierEngine() = default;

  bool stopped_ = false;
  // Declared in construction order; destroyed in reverse, after Stop.
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<Upstream> upstream_;
  std::unique_ptr<UpstreamTier> upstream_tier_;  // upstream_ as a storage::Tier
  std::unique_ptr<WritebackWorker> writeback_;
  std::unique_ptr<Fetcher> fetcher_;
  std::unique_ptr<CopyRepairer> repairer_;
  std::unique_ptr<TierCaches> tier_caches_;
  std::unique_ptr<PrefetchJobs> prefetch_;
  std::unique_ptr<LifecycleWorker> lifecycle_;
  std::unique_ptr<Scrubber> scrubber_;
  const Config* config_ = nullptr;
  metadata::Index* index_ = nullptr;
  const Clock* clock_ = nullptr;
  boost::asio::thread_pool* blocking_pool_ = nullptr;
  std::unique_ptr<CopyFlights> flights_;
  std::unique_ptr<ColdReads> cold_reads_;
};

}  // namespace strata::storage
