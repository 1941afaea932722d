// WritebackWorker: pushes the write-back queue (metadata's WritebackItems) to the
// upstream tier (a storage::Tier: UpstreamTier in the gateway, MemTier and FaultyTier in
// tests), on a thread and io_context of its own. An object goes to the location
// "<the bucket's upstream bucket>/<key>" with Tier::PutFrom from its local copy; a delete
// is Tier::Remove (naming the upstream version when one is removed by id).
//
// Every tick (a quarter of the delay, 50 ms to 1 s), and whenever a push succeeds, it
// picks items that are due (waited the write-back delay, and past their retry time after
// a failure) from the queue, at most `concurrency` in flight and never two of one key,
// and pushes each key's newest state: its current version's bytes (read from the
// local tier) as a PUT, or a DELETE when the key has no current version or a delete
// marker. A successful push marks the version clean (an upstream placement on its
// record) and removes the item unless the key changed meanwhile, in which case the item
// stays and the newer state is pushed next. A failed push is counted on the item (attempts,
// error, retry time with exponential backoff up to a minute) and logged; it is retried,
// never dropped. The queue is in the index, so a crash loses nothing: the worker of the
// next start finds the same items.
//
// Pushes carry Content-Type, the standard headers and x-amz-meta-* of the version; a
// single-PUT push is verified by the upstream's ETag (the bytes' MD5).
//
// In a cluster every owner of a key holds its item (the key sync carries it), but only the
// key's primary pushes it (storage/key_steward.h): the others look again after a delay, in
// case they became its primary. A push that finished is synced to the other owners, which
// drop their item with it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/clock.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/key_steward.h"
#include "storage/object_store.h"
#include "storage/tier.h"

namespace strata::storage {

struct WritebackOptions {
  std::chrono::milliseconds delay{5'000};  // [writeback] delay
  int concurrency = 4;                     // pushes in flight
  std::chrono::milliseconds retry_base{1'000};
  std::chrono::milliseconds retry_max{60'000};
  // Storage classes that name the upstream tier (GLACIER, COLD, ...): a version of such a
  // class drops its local copy once it is pushed.
  std::set<std::string> cold_classes = {};
};

class WritebackWorker {
 public:
  // `clock` (outliving the worker) times the ticks, the delay and the retries; `upstream`
  // (outliving it too) is used from the worker's thread only.
  WritebackWorker(metadata::Index& index, ObjectStore& store, Tier& upstream,
                  WritebackOptions options, const Clock& clock);
  // Stops: closes and cancels its tasks (the loop, the pushes in flight, whose items stay
  // queued) and waits for them, then ends the thread.
  ~WritebackWorker();
  WritebackWorker(const WritebackWorker&) = delete;
  WritebackWorker& operator=(const WritebackWorker&) = delete;

  // In a cluster, before Start (`steward` outlives the worker).
  void SetSteward(KeySteward* steward);
  void Start();
  // Until `deadline`, every item is due at once: the delay and retry times are ignored.
  // (`deadline` on the worker's clock's monotonic time.)
  void FlushUntil(SteadyTime deadline);
  WritebackStats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace strata::storage
