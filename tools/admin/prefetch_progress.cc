#include "tools/admin/prefetch_progress.h"

#include <boost/json.hpp>  // the implementation is compiled in usage_table.cc

#include "tools/admin/usage_table.h"

namespace strata::admin {

std::optional<JobProgress> ParseJobProgress(const std::string& json) {
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(json, ec);
  const boost::json::object* job = ec ? nullptr : doc.if_object();
  if (job == nullptr) {
    return std::nullopt;
  }
  JobProgress out;
  auto number = [job](const char* name, std::uint64_t& into) {
    const boost::json::value* v = job->if_contains(name);
    if (v == nullptr || !v->is_number()) {
      return false;
    }
    boost::system::error_code conversion;
    into = v->to_number<std::uint64_t>(conversion);
    return !conversion;
  };
  const boost::json::value* state = job->if_contains("state");
  if (state == nullptr || !state->is_string() || !number("id", out.id) ||
      !number("listed", out.listed) || !number("queued", out.queued) ||
      !number("fetched", out.fetched) || !number("fetched_bytes", out.fetched_bytes) ||
      !number("already_local", out.already_local) || !number("failed", out.failed)) {
    return std::nullopt;
  }
  out.state = std::string(state->as_string());
  if (const boost::json::value* reached = job->if_contains("budget_reached")) {
    out.budget_reached = reached->is_bool() && reached->as_bool();
  }
  if (const boost::json::value* error = job->if_contains("error"); error && error->is_string()) {
    out.error = std::string(error->as_string());
  }
  return out;
}

std::string ProgressLine(const JobProgress& job) {
  std::string line = "job " + std::to_string(job.id) + " " + job.state + ": " +
                     std::to_string(job.listed) + " listed, " + std::to_string(job.fetched) +
                     " of " + std::to_string(job.queued) + " fetched (" +
                     HumanBytes(static_cast<double>(job.fetched_bytes)) + "), " +
                     std::to_string(job.already_local) + " local already, " +
                     std::to_string(job.failed) + " failed";
  if (job.budget_reached) {
    line += "; stopped at its byte budget";
  }
  if (!job.error.empty()) {
    line += "; " + job.error;
  }
  return line;
}

}  // namespace strata::admin
