// strata-bench cache: the hot tier's eviction policy (storage/cache_policy.h, with
// the server's sketch size and default high mark) against plain LRU of the same capacity,
// replayed over two access patterns of ids: training epochs (every object once per epoch,
// in a new random order, a dataset larger than the cache) and Zipf-distributed reads.
#pragma once

#include <cstdint>

namespace strata::bench {

struct CacheSimOptions {
  std::uint64_t objects = 100'000;  // the dataset, in equal-sized objects
  double capacity_fraction = 0.3;   // C / D
  int epochs = 4;
  double zipf_s = 0.9;
  std::uint64_t zipf_reads = 2'000'000;
  double zipf_capacity_fraction = 0.05;
  double high_watermark = 0.95;  // strata's default: the policy may fill this much of C
};

struct CacheSimResult {
  double optimum = 0;       // C / D: the best any cache can do on shuffled epochs
  double epoch_policy = 0;  // hit ratio of epochs 2..E
  double epoch_lru = 0;
  double zipf_policy = 0;
  double zipf_lru = 0;
  double seconds = 0;
};

CacheSimResult RunCacheSim(const CacheSimOptions& options);

}  // namespace strata::bench
