// LifecycleWorker: applies buckets' lifecycle rules (S3's PutBucketLifecycleConfiguration)
// from the index's due-time queue, on a thread of its own.
//
// Every `interval` it runs a pass: first the buckets whose rules changed are reseeded
// (each of their keys and uploads is queued at its next due time, once per change), then
// every queue row due by now is acted on, earliest first. A row names a key; the worker
// re-reads the key's versions and the bucket's rules (a row is only a hint) and applies
// what is due: expiration of the current version (a delete marker when versioned),
// removal of noncurrent versions and of delete markers left alone, transitions, and
// aborts of stale multipart uploads. Then it queues the key's next due time. A pass
// touches only rows that are due, so an object that becomes due moves within about one
// interval however many objects the buckets hold.
//
// A transition to a class on another local tier (warm) moves the bytes there. One to a
// class on the upstream (cold) tier drops the local copy once the upstream has the
// version: a version not written back yet is looked at again next interval. A GET of a
// cold version reads through.
//
// In a cluster only a key's primary applies its rules (storage/key_steward.h) and syncs
// what it changed to the key's other owners; they keep the key's due row for the day they
// become its primary.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/key_steward.h"
#include "storage/object_store.h"

namespace strata::storage {

class LifecycleWorker {
 public:
  LifecycleWorker(const Config& config, metadata::Index& index, ObjectStore& store,
                  const Clock& clock);
  ~LifecycleWorker();  // stops the thread after its current row
  LifecycleWorker(const LifecycleWorker&) = delete;
  LifecycleWorker& operator=(const LifecycleWorker&) = delete;

  // In a cluster, before Start: only the keys `steward` (outliving the worker) says are
  // this gateway's are acted on, and each change is synced to the key's other owners.
  void SetSteward(KeySteward* steward) { steward_ = steward; }
  void Start();
  // Stops the thread after its current row (the destructor does too).
  void Stop();
  // One pass now, on the calling thread (tests; the thread calls it every interval).
  Result<void> RunPass();
  LifecycleStats stats() const;

 private:
  std::int64_t NowMs() const;
  bool Stopping() const;
  int Rank(std::string_view storage_class) const;
  Result<void> Reseed(const metadata::LifecycleReseed& reseed);
  // Acts on one due row; returns the row to queue next, if any.
  Result<std::optional<metadata::LifecycleRow>> HandleKey(const metadata::LifecycleRow& row);
  Result<std::optional<metadata::LifecycleRow>> HandleUpload(const metadata::LifecycleRow& row);
  // Applies the most important action due now on one version; returns whether the key
  // changed, and sets `retry` when a due action must wait (not written back yet).
  Result<bool> ApplyDue(const metadata::BucketRecord& bucket,
                        const std::vector<metadata::ObjectRecord>& versions, std::size_t index,
                        std::int64_t now, bool& retry);
  void Loop();
  // After HandleKey's round on a key of a cluster: its change (or an earlier one whose sync
  // failed) synced to the other owners. False when the sync failed (tried again soon).
  bool SyncChange(const BucketName& bucket, const ObjectKey& key, bool changed);

  const Config& config_;
  metadata::Index& index_;
  ObjectStore& store_;
  const Clock& clock_;
  const std::int64_t day_ms_;
  const std::chrono::milliseconds interval_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  LifecycleStats stats_;
  std::thread thread_;
  KeySteward* steward_ = nullptr;
  // Keys changed here whose sync to the other owners failed (the worker's thread only);
  // bounded: past kMaxUnsynced, the next write or repair of the key syncs it.
  std::set<std::string> unsynced_;
};

}  // namespace strata::storage
