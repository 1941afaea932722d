// CachePolicy: the frequency sketch, LRU order, admission by frequency, and the two
// access patterns it exists for, simulated over ids: shuffled epochs over a dataset larger
// than the cache (at least 90% of the optimum C/D, where LRU gets a fraction of it) and
// Zipf reads (at least as many hits as LRU). tools/bench's `strata-bench cache` runs the
// same patterns at full size.
#include "storage/cache_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strata::storage {
namespace {

TEST(FrequencySketchTest, CountsSaturateAndFade) {
  FrequencySketch sketch(64);
  EXPECT_EQ(sketch.Estimate(7), 0u);
  for (int i = 0; i < 5; ++i) {
    sketch.Increment(7);
  }
  EXPECT_EQ(sketch.Estimate(7), 5u);
  for (int i = 0; i < 40; ++i) {
    sketch.Increment(7);
  }
  EXPECT_EQ(sketch.Estimate(7), 15u);  // saturated
  // 10 x width increments halve every counter.
  for (int i = 0; i < 640; ++i) {
    sketch.Increment(1000 + i);
  }
  EXPECT_LE(sketch.Estimate(7), 8u);
}

TEST(CachePolicyTest, LruOrderHitsAndErase) {
  CachePolicy policy(1024);
  for (std::uint64_t id = 1; id <= 3; ++id) {
    policy.Insert({id, id, 10, "r" + std::to_string(id)});
  }
  EXPECT_EQ(policy.bytes(), 30u);
  policy.OnHit(1, 1);  // 1 is now the most recent: 2 is the coldest
  CacheEntry coldest;
  ASSERT_TRUE(policy.PopColdest(coldest));
  EXPECT_EQ(coldest.id, 2u);
  EXPECT_EQ(coldest.ref, "r2");
  policy.Insert({3, 3, 25, "r3"});  // refreshed: new size, most recent
  EXPECT_EQ(policy.bytes(), 35u);
  policy.Insert({4, 4, 5, "r4"});
  CacheEntry taken;
  ASSERT_TRUE(policy.Take(4, taken));
  EXPECT_EQ(taken.ref, "r4");
  EXPECT_FALSE(policy.Take(4, taken));  // gone
  EXPECT_EQ(policy.bytes(), 35u);
  policy.Erase(1);
  policy.Erase(99);  // unknown: nothing
  EXPECT_EQ(policy.size(), 1u);
  ASSERT_TRUE(policy.PopColdest(coldest));
  EXPECT_EQ(coldest.id, 3u);
  EXPECT_FALSE(policy.PopColdest(coldest));
  EXPECT_EQ(policy.bytes(), 0u);
}

TEST(CachePolicyTest, AMissThatFitsIsAdmittedElseOnlyWhenMoreFrequent) {
  CachePolicy policy(1024);
  auto miss = policy.OnMiss(1, 10, 10);
  EXPECT_TRUE(miss.admit);
  EXPECT_TRUE(miss.victims.empty());
  policy.Insert({1, 1, 10, ""});
  policy.Insert({2, 2, 10, ""});

  // No room: key 3 read once before now ties with key 1 (read once): refused.
  miss = policy.OnMiss(3, 10, 0);
  EXPECT_FALSE(miss.admit);
  // Read again: its count (1, before this read) ties with key 1's (1): still refused.
  miss = policy.OnMiss(3, 10, 0);
  EXPECT_FALSE(miss.admit);
  // A third time it beats key 1 (1), the coldest, which is displaced.
  miss = policy.OnMiss(3, 10, 0);
  ASSERT_TRUE(miss.admit);
  ASSERT_EQ(miss.victims.size(), 1u);
  EXPECT_EQ(miss.victims[0].id, 1u);
  EXPECT_EQ(policy.size(), 1u);

  // A large miss needs several victims, and must beat each of them.
  policy.Insert({4, 4, 10, ""});
  for (int i = 0; i < 4; ++i) {
    policy.OnHit(4, 4);
  }
  miss = policy.OnMiss(3, 15, 0);  // would displace 2 (count 0) and 4 (count 4): refused
  EXPECT_FALSE(miss.admit);
  EXPECT_EQ(policy.size(), 2u);
  // Room counts: 5 bytes of room and one victim of 10 is enough.
  miss = policy.OnMiss(3, 15, 5);
  ASSERT_TRUE(miss.admit);
  ASSERT_EQ(miss.victims.size(), 1u);
  EXPECT_EQ(miss.victims[0].id, 2u);
}

// A cache of `capacity` equal-sized objects driven by `policy`, or by plain LRU when null.
class Simulation {
 public:
  Simulation(std::size_t capacity, bool lru) : capacity_(capacity), lru_(lru), policy_(1 << 16) {}
  bool Read(std::uint64_t key) {
    if (lru_) {
      auto it = where_.find(key);
      if (it != where_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return true;
      }
      if (order_.size() == capacity_) {
        where_.erase(order_.back());
        order_.pop_back();
      }
      order_.push_front(key);
      where_[key] = order_.begin();
      return false;
    }
    if (resident_.contains(key)) {
      policy_.OnHit(key, key);
      return true;
    }
    auto admission =
        policy_.OnMiss(key, 1, static_cast<std::int64_t>(capacity_ - resident_.size()));
    for (const auto& victim : admission.victims) {
      resident_.erase(victim.id);
    }
    if (admission.admit) {
      resident_.insert(key);
      policy_.Insert({key, key, 1, ""});
    }
    return false;
  }

 private:
  std::size_t capacity_;
  bool lru_;
  CachePolicy policy_;
  std::unordered_set<std::uint64_t> resident_;
  std::list<std::uint64_t> order_;
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

// Hit ratio of epochs 2..epochs over `objects` keys read in a new random order each.
double EpochHitRatio(std::size_t objects, std::size_t capacity, int epochs, bool lru) {
  Simulation sim(capacity, lru);
  std::vector<std::uint64_t> order(objects);
  std::iota(order.begin(), order.end(), 1);
  std::mt19937_64 rng(42);
  std::size_t hits = 0;
  std::size_t reads = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    for (auto key : order) {
      const bool hit = sim.Read(key);
      if (epoch > 1) {
        hits += hit ? 1 : 0;
        ++reads;
      }
    }
  }
  return static_cast<double>(hits) / static_cast<double>(reads);
}

TEST(CachePolicyTest, ShuffledEpochsReachNinetyPercentOfTheOptimum) {
  for (const double fraction : {0.1, 0.3, 0.6}) {
    const std::size_t objects = 20000;
    const auto capacity = static_cast<std::size_t>(fraction * objects);
    const double optimum = static_cast<double>(capacity) / objects;
    const double ours = EpochHitRatio(objects, capacity, 4, false);
    const double lru = EpochHitRatio(objects, capacity, 4, true);
    EXPECT_GE(ours, 0.9 * optimum) << "C/D " << fraction;
    EXPECT_LE(ours, optimum + 1e-9);
    EXPECT_LT(lru, 0.8 * optimum) << "C/D " << fraction;  // why LRU is not enough
  }
}

TEST(CachePolicyTest, ZipfReadsHitAtLeastAsOftenAsLru) {
  const std::size_t objects = 20000;
  const std::size_t reads = 200000;
  for (const double s : {0.8, 1.0}) {
    std::vector<double> weights(objects);
    for (std::size_t i = 0; i < objects; ++i) {
      weights[i] = 1.0 / std::pow(static_cast<double>(i + 1), s);
    }
    std::discrete_distribution<std::size_t> zipf(weights.begin(), weights.end());
    for (const std::size_t capacity : {200u, 2000u}) {
      Simulation ours(capacity, false);
      Simulation lru(capacity, true);
      std::mt19937_64 rng(7);
      std::size_t ours_hits = 0;
      std::size_t lru_hits = 0;
      for (std::size_t r = 0; r < reads; ++r) {
        const std::uint64_t key = zipf(rng) + 1;
        ours_hits += ours.Read(key) ? 1 : 0;
        lru_hits += lru.Read(key) ? 1 : 0;
      }
      EXPECT_GE(ours_hits, lru_hits) << "s " << s << " capacity " << capacity;
    }
  }
}

}  // namespace
}  // namespace strata::storage
