// The prefetch part of the admin API (admin users only, routed by HandleAdmin): bulk
// prefetch of a prefix onto the hot tier, as a job (TierEngine::StartPrefetch).
//   POST   /_strata/admin/prefetch?bucket=B[&prefix=P][&budget=SIZE] -> 202, the new job
//          (SIZE: bytes, or "512MiB"; none or 0: no limit)
//   GET    /_strata/admin/prefetch        -> {"jobs": [job, ...]} (bulk and learned)
//   GET    /_strata/admin/prefetch/<id>   -> the job
//   DELETE /_strata/admin/prefetch/<id>   -> cancels it; the job as it is now
// A job: {"id", "bucket", "prefix", "learned", "budget", "state" (running, done,
// cancelled, failed), "listed", "already_local", "queued", "queued_bytes", "fetched",
// "fetched_bytes", "skipped", "failed", "budget_reached", "error", "started", "ended"}.
#include <charconv>

#include "common/config.h"
#include "common/http_time.h"
#include "common/text.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/read_through.h"
#include "storage/prefetch_job.h"

namespace strata::gateway {
namespace {

std::string JobJson(const storage::PrefetchJobInfo& job) {
  auto number = [](std::uint64_t n) { return std::to_string(n); };
  return "{\"id\":" + number(job.id) + ",\"bucket\":\"" + JsonEscape(job.bucket) +
         "\",\"prefix\":\"" + JsonEscape(job.prefix) +
         "\",\"learned\":" + (job.learned ? "true" : "false") +
         ",\"budget\":" + number(job.budget) + ",\"state\":\"" +
         std::string(storage::PrefetchStateName(job.state)) +
         "\",\"listed\":" + number(job.listed) + ",\"already_local\":" + number(job.already_local) +
         ",\"queued\":" + number(job.queued) + ",\"queued_bytes\":" + number(job.queued_bytes) +
         ",\"fetched\":" + number(job.fetched) + ",\"fetched_bytes\":" + number(job.fetched_bytes) +
         ",\"skipped\":" + number(job.skipped) + ",\"failed\":" + number(job.failed) +
         ",\"budget_reached\":" + (job.budget_reached ? "true" : "false") + ",\"error\":\"" +
         JsonEscape(job.error) + "\",\"started\":\"" + FormatIso8601(job.started_ms) +
         "\",\"ended\":" +
         (job.ended_ms == 0 ? "null" : "\"" + FormatIso8601(job.ended_ms) + "\"") + "}";
}

// The job id after /_strata/admin/prefetch/ (kInvalidArgument when it is not a number).
Result<std::uint64_t> JobId(std::string_view path) {
  const std::string_view id = path.substr(kPrefetchPath.size() + 1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size()) {
    return Error(ErrorCode::kInvalidArgument, "a prefetch job id is a number");
  }
  return value;
}

HandlerResult StartJob(RequestContext& ctx) {
  auto bucket_param = ctx.target.Param("bucket");
  if (!bucket_param || bucket_param->empty()) {
    co_return Error(ErrorCode::kInvalidArgument, "prefetch needs ?bucket=...");
  }
  std::uint64_t budget = 0;
  if (auto text = ctx.target.Param("budget"); text && !text->empty()) {
    auto parsed = ParseByteSize(*text);
    if (!parsed.ok()) {
      co_return Error(ErrorCode::kInvalidArgument, "budget: " + parsed.error().message);
    }
    budget = *parsed;
  }
  const BucketName name{std::string(*bucket_param)};
  const std::string prefix(ctx.target.Param("prefix").value_or(""));
  if (!ctx.services.store.GetBucket(name).ok()) {
    // A bucket of the upstream's that no request has touched yet is adopted now.
    STRATA_CO_RETURN_IF_ERROR(co_await AdoptUpstreamBucket(ctx, name));
  }
  STRATA_CO_TRY(auto started, ctx.services.engine.StartPrefetch(name, prefix, budget));
  co_return co_await SendJson(ctx, 202, JobJson(started));
}

}  // namespace

HandlerResult HandlePrefetchAdmin(RequestContext& ctx) {
  auto& engine = ctx.services.engine;
  if (!engine.CanPrefetch()) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "prefetch needs an upstream: no tier of kind s3 is configured");
  }
  const std::string_view path = ctx.target.raw_path;
  const auto verb = ctx.request().method();
  if (path == kPrefetchPath) {
    if (verb == http::verb::post) {
      co_return co_await StartJob(ctx);
    }
    if (verb == http::verb::get) {
      std::string json = "{\"jobs\":[";
      for (const auto& job : engine.ListPrefetches()) {
        json += (json.back() == '[' ? "" : ",") + JobJson(job);
      }
      json += "]}";
      co_return co_await SendJson(ctx, 200, std::move(json));
    }
    co_return Error(ErrorCode::kMethodNotAllowed, "prefetch takes GET and POST");
  }
  STRATA_CO_TRY(auto id, JobId(path));
  if (verb != http::verb::get && verb != http::verb::delete_) {
    co_return Error(ErrorCode::kMethodNotAllowed, "a prefetch job takes GET and DELETE");
  }
  STRATA_CO_TRY(auto job,
                verb == http::verb::get ? engine.GetPrefetch(id) : engine.CancelPrefetch(id));
  co_return co_await SendJson(ctx, 200, JobJson(job));
}

}  // namespace strata::gateway
