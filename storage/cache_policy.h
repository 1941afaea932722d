// CachePolicy: which copies a capacity-limited local tier keeps. Pure logic, no I/O; not
// thread-safe (TierCaches, storage/engine/tier_caches.h, locks around it).
//
// Eviction order is LRU; admission is TinyLFU (Einziger, Friedman, Manes: "TinyLFU: A
// Highly Efficient Cache Admission Policy", 2017): a miss that does not fit in the room
// left below the high mark is cached only if its key was read more often, by a small
// count-min sketch of recent reads, than every copy it would displace. Why: training
// reads every object once per epoch in a new random order over a dataset larger than the
// cache. LRU admits every miss and evicts what the epoch has not read yet, so it hits
// about (C/D)^2 / 2; with admission by frequency, objects that all have the same count
// never displace each other, the cache keeps a fixed C bytes of the dataset and hits
// C/D, the optimum. On skewed (Zipf) reads the sketch keeps the popular keys, which LRU
// loses to one-off reads. The comparison uses counts from before the current read, so a
// key read for the n-th time ties with one read n-1 times whose turn in this epoch has
// not come yet, and does not displace it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::storage {

// A count-min sketch of 4-bit-range counters (saturating at 15) that halves every
// counter after 10 x width increments, so old popularity fades.
class FrequencySketch {
 public:
  explicit FrequencySketch(std::size_t width);  // rounded up to a power of two, >= 64
  void Increment(std::uint64_t key);
  unsigned Estimate(std::uint64_t key) const;

 private:
  static constexpr int kRows = 4;
  std::size_t Slot(std::uint64_t key, int row) const;
  std::vector<std::uint8_t> counters_;  // kRows x width
  std::size_t mask_;
  std::uint64_t increments_ = 0;
  std::uint64_t reset_after_;
};

struct CacheEntry {
  std::uint64_t id = 0;        // the copy (bucket, key, version)
  std::uint64_t key_hash = 0;  // its key (bucket, key): what the sketch counts
  std::uint64_t size = 0;
  std::string ref;  // the caller's name for it (TierCaches: bucket 0x00 key 0x00 version)
};

class CachePolicy {
 public:
  explicit CachePolicy(std::size_t sketch_width = std::size_t{1} << 20);

  // A read served from the tier: counted, and the copy becomes the most recently used.
  void OnHit(std::uint64_t id, std::uint64_t key_hash);

  struct Admission {
    bool admit = false;
    std::vector<CacheEntry> victims;  // to evict to make room; already forgotten here
  };
  // A read that missed the tier, of `size` bytes, with `room` bytes left below the high
  // mark: admitted when it fits, else when its key's count beats every copy it would
  // displace (least recently used first, at most kMaxVictims). Counts the read after
  // deciding. An admitted copy must still be Insert()ed once stored.
  Admission OnMiss(std::uint64_t key_hash, std::uint64_t size, std::int64_t room);

  // A copy now on the tier (a write, a fill, a move onto it): most recently used. Known
  // ids are refreshed (size, ref) and moved.
  void Insert(CacheEntry entry);
  void Erase(std::uint64_t id);
  // Removes the copy `id` and returns it in `out`; false when it is not here.
  bool Take(std::uint64_t id, CacheEntry& out);
  // Removes and returns the least recently used copy; false when empty.
  bool PopColdest(CacheEntry& out);

  std::size_t size() const { return index_.size(); }
  std::uint64_t bytes() const { return bytes_; }

  static constexpr std::size_t kMaxVictims = 256;

 private:
  FrequencySketch sketch_;
  std::list<CacheEntry> lru_;  // front: most recently used
  std::unordered_map<std::uint64_t, std::list<CacheEntry>::iterator> index_;
  std::uint64_t bytes_ = 0;
};

// 64-bit hashes for ids and key hashes (FNV-1a of the parts with 0x00 between, then a
// 64-bit finaliser).
std::uint64_t HashParts(std::initializer_list<std::string_view> parts);

}  // namespace strata::storage
