// Scrubber: walks every local copy in the background, at a bounded rate, and verifies it:
// each chunk against its CRC64NVME (the reader does that), and the whole object against
// the CRC64NVME recorded in the index when the version arrived, so damage to the data,
// to a chunk trailer or to the record itself is found without any client reading it.
// What it finds damaged goes to the CopyRepairer (storage/integrity.h): a clean version
// gets the upstream's verified copy, a dirty one is reported unrepairable.
//
// Runs on a thread of its own, which it owns: passes start `ScrubConfig::interval` after
// the previous one ended (none when bytes_per_second is 0) or when StartPass asks for
// one. A pass lists the versions with a local copy from one index scan (their names only:
// the snapshot is released before any byte is read), then reads each at most
// bytes_per_second, through the store's synchronous reader on this thread. The request
// path never waits for it. All methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/config.h"
#include "metadata/index.h"
#include "storage/engine_stats.h"
#include "storage/integrity.h"
#include "storage/object_store.h"

namespace strata::storage {

class Scrubber {
 public:
  // `index`, `store`, `repairer` and `clock` outlive the scrubber (main stops it first).
  // `clock` paces the passes (interval, rate) and stamps their times.
  Scrubber(const ScrubConfig& config, metadata::Index& index, ObjectStore& store,
           CopyRepairer& repairer, const Clock& clock = Clock::System());
  ~Scrubber();  // stops the thread: a pass in progress ends after its current read
  Scrubber(const Scrubber&) = delete;
  Scrubber& operator=(const Scrubber&) = delete;

  void Start();
  // Stops and joins the thread (a pass in progress ends after its current read). Idempotent.
  void Stop();
  // Asks for a pass now. False when one is running already (it is not restarted).
  bool StartPass();
  ScrubStats stats() const;

  // One whole pass on the calling thread, throttled as configured (tests; Start()'s
  // thread calls it too). Returns when it has looked at every version or the scrubber
  // is stopping.
  void RunPass();

 private:
  struct Ref;  // a version to look at, by name
  void Loop();
  void ScrubOne(const Ref& ref);
  // Sleeps until `bytes` are within the rate since the pass began; false when stopping.
  bool Throttle();
  void Repair(const metadata::ObjectRecord& record);

  ScrubConfig config_;
  metadata::Index& index_;
  ObjectStore& store_;
  CopyRepairer& repairer_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;   // guarded by mu_
  bool requested_ = false;  // guarded by mu_
  ScrubStats stats_;        // guarded by mu_
  std::thread thread_;

  // The pass's pace, on the scrubbing thread only.
  SteadyTime pass_began_;
  std::uint64_t pass_bytes_ = 0;
};

}  // namespace strata::storage
