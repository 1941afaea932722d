#include "tools/bench/cache_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/cache_policy.h"

namespace strata::bench {
namespace {

// A cache of unit-sized objects: `capacity` of them, or up to the high mark of it for the
// policy, which is where strata stops filling.
class Cache {
 public:
  virtual ~Cache() = default;
  virtual bool Read(std::uint64_t id) = 0;  // true on a hit
};

class LruCache final : public Cache {
 public:
  explicit LruCache(std::uint64_t capacity) : capacity_(capacity) {}
  bool Read(std::uint64_t id) override {
    auto it = where_.find(id);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    if (order_.size() >= capacity_) {
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(id);
    where_[id] = order_.begin();
    return false;
  }

 private:
  std::uint64_t capacity_;
  std::list<std::uint64_t> order_;
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

class PolicyCache final : public Cache {
 public:
  explicit PolicyCache(std::uint64_t room) : room_(static_cast<std::int64_t>(room)) {}
  bool Read(std::uint64_t id) override {
    const std::uint64_t hash =
        storage::HashParts({std::string_view(reinterpret_cast<const char*>(&id), sizeof id)});
    if (resident_.contains(id)) {
      policy_.OnHit(hash, hash);
      return true;
    }
    auto admission = policy_.OnMiss(hash, 1, room_);
    for (const auto& victim : admission.victims) {
      resident_.erase(victim_of_.at(victim.id));
      victim_of_.erase(victim.id);
      ++room_;
    }
    if (admission.admit) {
      resident_.insert(id);
      victim_of_[hash] = id;
      policy_.Insert({hash, hash, 1, {}});
      --room_;
    }
    return false;
  }

 private:
  std::int64_t room_;
  storage::CachePolicy policy_;  // the server's sketch size
  std::unordered_set<std::uint64_t> resident_;
  std::unordered_map<std::uint64_t, std::uint64_t> victim_of_;  // hash -> id
};

double EpochHits(Cache& cache, std::uint64_t objects, int epochs) {
  std::vector<std::uint64_t> order(objects);
  std::iota(order.begin(), order.end(), 1);
  std::mt19937_64 rng(42);
  std::uint64_t hits = 0;
  std::uint64_t reads = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    for (auto id : order) {
      const bool hit = cache.Read(id);
      if (epoch > 1) {  // the first epoch is cold for any cache
        hits += hit ? 1 : 0;
        ++reads;
      }
    }
  }
  return reads == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(reads);
}

double ZipfHits(Cache& cache, std::uint64_t objects, double s, std::uint64_t reads) {
  std::vector<double> weights(objects);
  for (std::uint64_t i = 0; i < objects; ++i) {
    weights[i] = 1.0 / std::pow(static_cast<double>(i + 1), s);
  }
  std::discrete_distribution<std::uint64_t> zipf(weights.begin(), weights.end());
  // Popularity is not the id order: a fixed random permutation maps rank to id.
  std::vector<std::uint64_t> id_of(objects);
  std::iota(id_of.begin(), id_of.end(), 1);
  std::mt19937_64 rng(7);
  std::shuffle(id_of.begin(), id_of.end(), rng);
  std::uint64_t hits = 0;
  for (std::uint64_t r = 0; r < reads; ++r) {
    hits += cache.Read(id_of[zipf(rng)]) ? 1 : 0;
  }
  return static_cast<double>(hits) / static_cast<double>(reads);
}

}  // namespace

CacheSimResult RunCacheSim(const CacheSimOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  CacheSimResult r;
  const auto capacity = static_cast<std::uint64_t>(o.capacity_fraction * o.objects);
  const auto room = static_cast<std::uint64_t>(std::floor(o.high_watermark * capacity));
  r.optimum = static_cast<double>(capacity) / static_cast<double>(o.objects);
  {
    PolicyCache policy(room);
    LruCache lru(capacity);
    r.epoch_policy = EpochHits(policy, o.objects, o.epochs);
    r.epoch_lru = EpochHits(lru, o.objects, o.epochs);
  }
  {
    const auto zipf_capacity = static_cast<std::uint64_t>(o.zipf_capacity_fraction * o.objects);
    PolicyCache policy(static_cast<std::uint64_t>(std::floor(o.high_watermark * zipf_capacity)));
    LruCache lru(zipf_capacity);
    r.zipf_policy = ZipfHits(policy, o.objects, o.zipf_s, o.zipf_reads);
    r.zipf_lru = ZipfHits(lru, o.objects, o.zipf_s, o.zipf_reads);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace strata::bench
