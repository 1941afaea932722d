// PrefetchJobs: fetches the objects of a prefix from the upstream onto the hot tier before
// the reads that will want them (DESIGN.md "Prefetch"). One mechanism, two ways in:
//   - bulk: an admin starts a job (strata-admin prefetch) with a byte budget, watches its
//     progress and may cancel it;
//   - learned: the read path reports each read-through miss (ObserveMiss); when
//     [prefetch] scan_threshold different keys under one prefix (a key's "directory", up
//     to its last '/') miss within scan_window, that is a scan (a training epoch), and a
//     job fetches the rest of the prefix ahead of the reader, within [prefetch] budget.
//     From then on the prefix's reads, hits too (ObserveRead), are followed: a key read
//     again starts a new epoch. A learned job fills the hot tier's room below its high
//     mark and, when there is none, makes room only by displacing copies the scan has
//     read already in this epoch (TierCaches::ReserveRoom): the cache slides ahead of
//     the reader and never evicts what the scan still needs. Out of room with nothing
//     read to displace, the job waits for the reader; it ends once the scan has been
//     idle for scan_window.
//
// A job lists the prefix upstream, a page of 1000 keys at a time, on the Fetcher's thread
// (storage/upstream/fetcher.h). Each key without a local copy is queued on the Fetcher: an
// evicted version is restored, an upstream object the index lacks becomes a cached copy,
// as a read-through fill would. Keys with a local copy, delete markers and keys with a
// change waiting for the upstream are skipped. At most 2 x [prefetch] concurrency fetches
// of one job are outstanding, so a job never floods the Fetcher's queue (RestoreObject
// shares it). The budget counts the bytes queued; a job ends when the listing ends, the
// next object would pass the budget (or, learned, the room), or it is cancelled (fetches
// already queued finish).
//
// Thread-safe. Memory: the running jobs and the last kKeptJobs finished ones, the scans
// being watched (at most kMaxScans prefixes) and the keys followed scans have read in
// their current epoch (at most kMaxFollowedKeys over all, about 40 bytes each).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/ids.h"
#include "common/task_group.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/object_store.h"
#include "storage/prefetch_job.h"

namespace strata::storage {

class Fetcher;
class TierCaches;
class PrefetchRun;

class PrefetchJobs {
 public:
  PrefetchJobs(const Config& config, const Clock& clock, metadata::Index& index, ObjectStore& store,
               Fetcher& fetcher, TierCaches* tier_caches);
  ~PrefetchJobs();  // Stop()
  // Stops: refuses new jobs, cancels the running ones and waits for their coroutines
  // (on the fetcher's thread, which must still run: main stops this before the Fetcher;
  // fetches already queued finish or are dropped by the Fetcher). Idempotent.
  void Stop();
  PrefetchJobs(const PrefetchJobs&) = delete;
  PrefetchJobs& operator=(const PrefetchJobs&) = delete;

  // A bulk job over `prefix` of `bucket` (kNoSuchBucket; kInvalidRequest when the bucket
  // is not bound to the upstream). budget 0: no limit. Any thread.
  Result<PrefetchJobInfo> Start(const BucketName& bucket, const std::string& prefix,
                                std::uint64_t budget);
  // kNotFound for an id never given or long forgotten.
  Result<PrefetchJobInfo> Get(std::uint64_t id) const;
  // Stops a running job (a finished one is returned as it is).
  Result<PrefetchJobInfo> Cancel(std::uint64_t id);
  std::vector<PrefetchJobInfo> List() const;  // oldest first

  // A GET of `record` that reached the upstream (a read-through miss). Any thread.
  void ObserveMiss(const metadata::ObjectRecord& record);
  // A GET of `record` served from a local copy. Never waits (a read not followed costs a
  // copy that could have been displaced); nothing at all until a scan has been followed.
  void ObserveRead(const metadata::ObjectRecord& record);

  PrefetchStats stats() const;

  static constexpr std::size_t kKeptJobs = 100;
  static constexpr std::size_t kMaxScans = 4096;
  static constexpr std::size_t kMaxFollowedKeys = std::size_t{1} << 20;  // over all scans

 private:
  struct Job;
  struct Scan {
    SteadyTime window_start;
    // (copy id, key hash) of the keys missed in the window (TierCaches::Ids).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;
    std::uint64_t job = 0;  // the learned job of this prefix, while it runs
    // Once a learned job has started here, every read of the prefix is followed: the
    // keys read in this epoch (key hash -> copy id) and the copies of those that a job
    // may displace.
    bool followed = false;
    std::unordered_map<std::uint64_t, std::uint64_t> read;
    std::vector<std::uint64_t> displaceable;
    SteadyTime last_read;
  };

  Result<PrefetchJobInfo> Launch(const BucketName& bucket, const std::string& prefix,
                                 std::uint64_t budget, bool learned);
  friend class PrefetchRun;
  static boost::asio::awaitable<void> RunJob(PrefetchJobs* self, std::shared_ptr<Job> job);
  void Forget();  // drops the oldest finished jobs past kKeptJobs; under mu_
  // Records that the followed `scan` read the copy `ids` (TierCaches::Ids); true when it
  // had read it already in this epoch: the next epoch begins. Under mu_.
  bool Follow(Scan& scan, std::pair<std::uint64_t, std::uint64_t> ids, SteadyTime now);
  // True, the scan's miss count reset, when no learned job of the scan runs: the caller
  // launches one (LaunchLearned, without mu_). Under mu_.
  bool StartFollowing(Scan& scan, SteadyTime now);
  void LaunchLearned(const BucketName& bucket, const std::string& prefix);
  bool Running(std::uint64_t id) const;  // under mu_

  const Config& config_;
  const Clock& clock_;
  metadata::Index& index_;
  ObjectStore& store_;
  Fetcher& fetcher_;
  TierCaches* tier_caches_;

  mutable std::mutex mu_;  // guards everything below and every job's info
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Job>> jobs_;
  std::map<std::string, Scan> scans_;  // by bucket '\0' prefix
  std::size_t followed_keys_ = 0;      // entries of every scan's `read`
  std::atomic<bool> any_followed_{false};
  PrefetchStats stats_;
  TaskGroup tasks_;  // the jobs' coroutines, on the fetcher's thread
};

}  // namespace strata::storage
