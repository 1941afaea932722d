// NodeQueues: what one node keeps for itself, never shared in a cluster: the write-back
// queue, the lifecycle due-time queue, the usage counters, and the maintenance scans over
// everything this node stores (orphan sweep, tier caches' load). Background workers and
// the admin API call these, not the request path (but GetWriteback, one point read).
// Implemented by RocksIndex through metadata::Index. Synchronous and thread-safe.
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

// The usage counters of one (bucket, tier) (metadata/usage.h): the stored versions with a
// placement there and their bytes there, plus the bytes of uploaded parts.
struct UsageRow {
  BucketName bucket;
  std::string tier;
  std::int64_t objects = 0;
  std::int64_t bytes = 0;
};

// A bucket whose lifecycle rules changed since its keys were last queued; `token` tells
// this change from a later one.
struct LifecycleReseed {
  BucketName bucket;
  std::string token;
};

class NodeQueues {
 public:
  virtual ~NodeQueues() = default;

  // Background maintenance only (a full scan, never on the request path): calls
  // fn(tier, location) for every extent of every stored object version's placements and
  // for every part of every upload in progress, all read from one snapshot, so bytes
  // that move from a part to an object (CompleteUpload) are seen once either way. A
  // location may be reported more than once. Any error (e.g. kCorruption for a record
  // that does not decode) means the scan is incomplete.
  virtual Result<void> ForEachLocation(
      const std::function<void(std::string_view tier, std::string_view location)>& fn) = 0;

  // Background maintenance only (a full scan): calls fn with every stored version and
  // delete marker (bucket and key set), from one snapshot, in (bucket, key, newest first)
  // order, until it returns false.
  virtual Result<void> ForEachVersion(const std::function<bool(const ObjectRecord&)>& fn) = 0;

  // Usage counters, changed by every write in its own batch: one row per (bucket, tier)
  // with a count left, in (bucket, tier) order. Reads the small usage family; cheap.
  virtual Result<std::vector<UsageRow>> Usage() = 0;

  // Write-back queue (metadata/README.md). Calls fn for each item in (bucket, key) order
  // until it returns false. For the write-back worker and the admin API, not requests.
  virtual Result<void> ScanWriteback(const std::function<bool(const WritebackItem&)>& fn) = 0;
  // The item of one key, if any: a key with an item is not (yet) as the upstream has it.
  virtual Result<std::optional<WritebackItem>> GetWriteback(const BucketName& bucket,
                                                            const ObjectKey& key) = 0;
  // After a successful push of `item`: under the key's lock, records `copy` (when given)
  // on the version it names, if that version is still there, and removes the item if no
  // change came after it (same sequence). Returns whether the item was removed.
  virtual Result<bool> FinishWriteback(const WritebackItem& item,
                                       const std::optional<UpstreamCopy>& copy) = 0;
  // After a failed push: counts the attempt and stores the error and the retry time,
  // unless a newer change replaced the item meanwhile.
  virtual Result<void> DeferWriteback(const WritebackItem& item, std::int64_t retry_ms,
                                      const std::string& error) = 0;
  // Items and bytes waiting, kept in memory (counted at open, updated by every commit).
  virtual WritebackTotals WritebackBacklog() const = 0;
  // Rows due at or before now_ms, earliest first, at most max.
  virtual Result<std::vector<LifecycleRow>> DueLifecycleRows(std::int64_t now_ms,
                                                             std::size_t max) = 0;
  // Adds `add` and removes `remove` in one batch.
  virtual Result<void> UpdateLifecycleRows(const std::vector<LifecycleRow>& add,
                                           const std::vector<LifecycleRow>& remove) = 0;
  // Buckets marked for a reseed; FinishReseed clears a mark unless a newer change set it.
  virtual Result<std::vector<LifecycleReseed>> LifecycleReseeds() = 0;
  virtual Result<void> FinishReseed(const LifecycleReseed& reseed) = 0;
};

}  // namespace strata::metadata
