// Fetcher: brings the bytes of clean versions (ones the upstream has) back onto the hot
// tier in the background, on a thread and io_context of its own, at most `concurrency`
// at a time, the rest waiting in a bounded queue; through an upstream outage a fetch
// keeps its slot and tries again with backoff (FetchOptions::retry_for). RestoreObject
// and the prefetch jobs (storage/engine/prefetch_jobs.h) queue work here.
//
// A fetch opens the version's copy on the upstream tier (a storage::Tier: UpstreamTier in
// the gateway, MemTier and FaultyTier in tests) at "<upstream bucket>/<key>", pinned to
// what the push recorded (the upstream ETag, and the upstream version id when there is
// one), appends it in 4 MiB reads to a new hot-tier file (the file's chunk CRC64NVME is
// computed as it lands), checks the size and a single-PUT ETag's MD5, and commits it with
// ObjectStore::RestoreLocalCopy: only if the version is unchanged and still has no local
// copy. A key the index does not know (an upstream object strata never read:
// FetchKind::kNewCopy) is read pinned to the ETag its listing showed and committed as a
// read-through fill would be (CommitCachedCopy: only while the key has no version here),
// described by what the tier's reader says of it. Nothing is held whole in memory: one
// 4 MiB buffer per fetch in flight.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/object_store.h"
#include "storage/tier.h"
#include "storage/upstream/copy_flights.h"
#include "storage/upstream/upstream.h"

namespace strata::storage {

struct FetchOptions {
  int concurrency = 4;                // fetches in flight
  std::size_t max_waiting = 100'000;  // queued beyond those; Enqueue refuses past it
  // A fetch that fails for a reason that may pass (the upstream unreachable, 5xx) is tried
  // again after retry_base, doubling up to retry_max, for up to retry_for; then it fails.
  std::chrono::milliseconds retry_base{500};
  std::chrono::milliseconds retry_max{10'000};
  std::chrono::milliseconds retry_for{600'000};
};

enum class FetchKind {
  kRestore,  // a version in the index, evicted: its local copy again
  kNewCopy,  // an upstream object the index lacks: bucket, key, size, etag set
  // A version whose local copy is damaged: fetched once (no retries: a reader may be
  // waiting), checked against the recorded CRC64NVME as well, and committed with
  // ObjectStore::ReplaceLocalCopy in place of the damaged copy the record names.
  kRepair,
};

// The outcome of one fetch, on the fetcher's thread: true when the version now has a
// local copy made by this fetch, false when there was nothing to do (it had one, or it
// changed meanwhile), or the error.
using FetchDone = std::function<void(const Result<bool>&)>;

class Fetcher {
 public:
  // Reads go to `upstream_tier` (the `upstream` as a storage::Tier, used from the
  // fetcher's thread only); `upstream` gives the client of client(). `clock` (outliving
  // the fetcher) times the retries. With `flights` (outliving the fetcher), a restore or
  // new copy first takes its key's seat there, waiting while a read-through GET (or
  // another fetch) of the key brings it local, so one object is fetched once at a time;
  // the fetch then finds the copy made (nothing to do) or makes it.
  Fetcher(ObjectStore& store, Upstream& upstream, Tier& upstream_tier, FetchOptions options,
          const Clock& clock = Clock::System(), CopyFlights* flights = nullptr);
  // Stops: closes and cancels the fetches in flight (each answers kUnavailable; their
  // temporary files are removed) and waits for them; waiting ones are dropped unanswered.
  ~Fetcher();
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  void Start();
  // Queues the fetch of `record` (bucket, key, version id, ETag, time, size and its
  // placement on the upstream tier). False, calling nothing, when the queue is full.
  // Any thread.
  bool Enqueue(metadata::ObjectRecord record, FetchDone done, FetchKind kind = FetchKind::kRestore);
  FetchStats stats() const;

  // The fetcher's thread, for work that goes with its fetches (a prefetch job lists the
  // upstream there), and its upstream client, to use only on that thread.
  boost::asio::any_io_executor executor() const;
  upstream::S3Client& client() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::thread thread_;
};

}  // namespace strata::storage
