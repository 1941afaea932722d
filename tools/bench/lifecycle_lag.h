// strata-bench lifecycle: the cost of a lifecycle pass against the number of objects in
// the bucket (the due-time queue keeps it flat), measured in-process on a scratch index.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"

namespace strata::bench {

struct LifecycleLagResult {
  std::uint64_t objects = 0;   // versions queued but not due
  std::uint64_t due = 0;       // versions due at each measured pass
  double fill_s = 0;           // writing them all into the index
  double first_pass_s = 0;     // the pass after the rules were set: reseed + the due ones
  double pass_s = 0;           // a later pass with `due` versions due
  double idle_pass_s = 0;      // a pass with nothing due
  std::uint64_t expired = 0;   // versions the worker expired in all passes (2 x due)
  std::uint64_t due_left = 0;  // due versions still there afterwards (0)
};

// Fills an index under `dir` (removed before and after) and times worker passes.
Result<LifecycleLagResult> RunLifecycleLag(const std::string& dir, std::uint64_t objects,
                                           std::uint64_t due);

}  // namespace strata::bench
