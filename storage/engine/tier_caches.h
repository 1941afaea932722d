// TierCaches: keeps each local tier that has a `capacity` under it (DESIGN.md "Capacity").
//
// One CachePolicy per such tier (storage/cache_policy.h) learns from the request
// path: reads served from the tier (OnRead), copies that land on it (OnResident: writes,
// read-through fills, restores, moves), and read-through misses, which ask AdmitFill
// whether to cache the object at all (TinyLFU admission: a training epoch does not wash
// the cache out). A thread runs a pass every `interval`: it reads the tier's bytes from the
// index's usage counters (exact, committed with the data), evicts the copies admission
// chose to displace, and when the tier is above high_watermark x capacity evicts the
// least recently used clean copies until it is under low_watermark x capacity. Only clean
// copies (the version also has a placement on an s3 tier) are ever evicted; a dirty one
// is skipped and kept. Every eviction is ObjectStore::EvictLocalCopy: one index write
// conditional on the version being unchanged, then the bytes are freed; the record stays
// and a later GET reads it through again.
//
// What the policy knows is rebuilt at Start from one scan of the index (the order of
// reads before a restart is lost; frequencies start over). Memory: about 100 bytes per
// copy on a capacity-limited tier plus a 4 MiB sketch per tier.
//
// Thread-safe. OnRead never waits: when another thread holds the tier's lock the read is
// not counted (a sample lost costs nothing; a request waiting would).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "metadata/index.h"
#include "storage/cache_policy.h"
#include "storage/engine_stats.h"
#include "storage/object_store.h"

namespace strata::storage {

struct TierCacheOptions {
  std::chrono::milliseconds interval{250};
  std::size_t sketch_width = std::size_t{1} << 20;
  // Called by each pass between its read of the usage counters and its update of the
  // rooms (tests: a fill that lands in that window).
  std::function<void()> after_usage_read;
};

class TierCaches {
 public:
  // `clock` (outliving this) times the passes and tells when a restored copy's pin ends.
  TierCaches(const Config& config, metadata::Index& index, ObjectStore& store,
             TierCacheOptions options = {}, const Clock& clock = Clock::System());
  ~TierCaches();  // stops the thread after its current eviction
  TierCaches(const TierCaches&) = delete;
  TierCaches& operator=(const TierCaches&) = delete;

  // Loads what the tiers hold from the index, then starts the thread. Call once.
  void Start();
  // The load and one pass on the calling thread (tests; Start's thread does the same).
  Result<void> Load();
  Result<void> RunPass();

  // A whole-object read-through of `record` (size set) that would fill the hot tier:
  // whether to cache it. True when the hot tier has no capacity limit. An admitted fill
  // holds its room as ReserveRoom does: ReleaseRoom(record.size) once it ended.
  bool AdmitFill(const metadata::ObjectRecord& record);
  // A prefetch of `bytes` onto the hot tier: true, and the room is spent, when it fits
  // below the high mark (always when the hot tier has no capacity limit). When the room
  // is short, the copies named in `displaceable` (copy ids, see Ids: what a scan has read
  // already and will not read again before its next epoch) may make it: they are taken
  // from the back, displaced and evicted by a pass woken at once; the ids used, or not on
  // the tier, are removed from the vector. Nothing else is ever displaced. The bytes stay
  // reserved (passes leave them out of the room) until ReleaseRoom, called once the
  // prefetch has landed in the usage counters or failed.
  bool ReserveRoom(std::uint64_t bytes, std::vector<std::uint64_t>* displaceable = nullptr);
  void ReleaseRoom(std::uint64_t bytes);
  // Evicts now, on the calling thread (blocking: index writes), the copies that admissions
  // and reservations displaced. When it returns, every copy displaced before the call is
  // gone (or kept: dirty, pinned or changed meanwhile), also when a pass was evicting it.
  // A fill calls it before committing, so the tier never holds both a fill and the copy
  // it displaced, however late the pass thread runs.
  void EvictDisplaced();
  // The policy's names for a version: its copy id and its key's hash (bucket and key).
  static std::pair<std::uint64_t, std::uint64_t> Ids(const metadata::ObjectRecord& record);
  // The second of those alone: what the policy counts a key's reads under.
  static std::uint64_t KeyHash(const BucketName& bucket, const ObjectKey& key);
  // A read served from a local copy of `record`.
  void OnRead(const metadata::ObjectRecord& record);
  // `record` has (now) a copy on a local tier.
  void OnResident(const metadata::ObjectRecord& record);

  std::vector<TierCacheStats> stats() const;

 private:
  struct Tier {
    explicit Tier(const TierConfig& config, std::size_t sketch_width)
        : config(config), policy(sketch_width) {}
    const TierConfig& config;
    mutable std::mutex mu;
    CachePolicy policy;
    std::int64_t room = 0;      // below the high mark; admission spends it until the next pass
    std::int64_t reserved = 0;  // ReserveRoom'd, not landed yet
    // Released since the current (or last) pass began, before its usage read: such a fill
    // may have landed after the read, so the pass leaves its bytes out of the room too.
    // One that landed before is then counted twice until the next pass; erring that way
    // never lets the tier pass its high mark.
    std::int64_t released_this_pass = 0;
    std::vector<CacheEntry> doomed;  // displaced by admissions, to evict
    // Held while doomed copies are evicted (EvictDoomed), by the pass or a fill: one that
    // finds `doomed` empty under it knows no earlier displacement is still in flight.
    std::mutex evicting;
    TierCacheStats stats;
  };
  enum class Outcome { kEvicted, kKept, kGone };

  Tier* TierNamed(std::string_view name);
  // The hot tier's state (where fills and prefetches land); nullptr when it has none.
  Tier* HotTierState();
  // The local tier holding `record`'s bytes, if it has a capacity.
  Tier* TierOf(const metadata::ObjectRecord& record);
  static CacheEntry EntryOf(const metadata::ObjectRecord& record, std::uint64_t bytes);
  Outcome Evict(const Tier& tier, const CacheEntry& entry, std::uint64_t& freed);
  // Evicts `entry` (counted in `evictions`; returns the bytes freed), or adds it to `kept`
  // when it must stay (dirty, pinned), or drops it (gone or changed).
  std::uint64_t EvictOrKeep(const Tier& tier, CacheEntry entry, std::vector<CacheEntry>& kept,
                            std::uint64_t& evictions);
  // Evicts the tier's doomed copies; returns the bytes freed.
  std::uint64_t EvictDoomed(Tier& tier);
  void PassOver(Tier& tier, std::int64_t used);
  bool Stopping() const;
  std::int64_t NowMs() const;
  void WakePass();  // a pass now, for copies doomed since the last one
  void Loop();

  const Config& config_;
  metadata::Index& index_;
  ObjectStore& store_;
  const TierCacheOptions options_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Tier>> tiers_;  // the local tiers with a capacity

  mutable std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool wake_requested_ = false;  // an admission displaced copies: pass now
  std::thread thread_;
};

}  // namespace strata::storage
