// `strata-admin prefetch start --wait`: one line of progress per poll of a prefetch job
// (GET /_strata/admin/prefetch/<id>, gateway/handlers/prefetch_admin.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strata::admin {

struct JobProgress {
  std::uint64_t id = 0;
  std::string state;  // running, done, cancelled, failed
  std::uint64_t listed = 0;
  std::uint64_t queued = 0;
  std::uint64_t fetched = 0;
  std::uint64_t fetched_bytes = 0;
  std::uint64_t already_local = 0;
  std::uint64_t failed = 0;
  bool budget_reached = false;
  std::string error;
};

// nullopt when `json` is not a job document.
std::optional<JobProgress> ParseJobProgress(const std::string& json);
// "job 3 running: 120 listed, 40 of 60 fetched (40.0 MiB), 20 local already, 0 failed"
std::string ProgressLine(const JobProgress& job);

}  // namespace strata::admin
