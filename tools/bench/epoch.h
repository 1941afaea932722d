// The epoch workload: how a training job reads its dataset. R readers (a data loader's
// workers) go through every key once per epoch, each epoch in a new random order dealt
// out among them. A reader loads a batch of B objects (GETs one after another on its own
// connection) while the batch before it "computes" for compute_ms, so loading is hidden
// as long as it keeps up: utilisation is the compute time over the wall time (1.0 when
// the loader always has the next batch ready). Per epoch: seconds, utilisation, MB/s and,
// with a strata endpoint whose hot tier has a capacity, its read-through misses (the
// hot tier's strata_read_through_fills_total, read from /metrics before and after).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/load.h"

namespace strata::bench {

struct EpochOptions {
  KeySet keys;
  int readers = 8;
  int batch = 8;
  int epochs = 3;
  double compute_ms = 20;  // per batch
  std::uint64_t seed = 1;
  bool count_misses = false;  // read strata's /metrics around each epoch
};

struct EpochResult {
  double seconds = 0;
  double utilisation = 0;
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  std::int64_t misses = -1;  // -1: not counted
  std::string first_error;
};

std::vector<EpochResult> RunEpochs(const Endpoint& endpoint, const EpochOptions& options);

}  // namespace strata::bench
