// The scrubber's part of the admin API (admin users only, routed by HandleAdmin):
//   GET  /_strata/admin/scrub -> {"running": bool, "passes_completed": N, "objects": N,
//                                "chunks": N, "bytes": N, "errors": N, "repaired": N,
//                                "unrepairable": N, "repair_failed": N,
//                                "pass_objects_total": N, "pass_objects_done": N,
//                                "last_started_ms": T, "last_finished_ms": T}
//   POST /_strata/admin/scrub[?wait=SECONDS] -> starts a pass now (unless one runs) and
//        answers {"started": bool, ...the state}; with wait, once that pass (or the one
//        running) has completed: 200, or 503 with the state when SECONDS pass first.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "gateway/handlers/context.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxWaitSeconds = 24 * 3600;

std::string StatsJson(const storage::ScrubStats& s) {
  auto field = [](std::string_view name, std::uint64_t v) {
    return ",\"" + std::string(name) + "\":" + std::to_string(v);
  };
  return std::string("\"running\":") + (s.running ? "true" : "false") +
         field("passes_completed", s.passes_completed) + field("objects", s.objects) +
         field("chunks", s.chunks) + field("bytes", s.bytes) + field("errors", s.errors) +
         field("repaired", s.repaired) + field("unrepairable", s.unrepairable) +
         field("repair_failed", s.repair_failed) +
         field("pass_objects_total", s.pass_objects_total) +
         field("pass_objects_done", s.pass_objects_done) +
         ",\"last_started_ms\":" + std::to_string(s.last_started_ms) +
         ",\"last_finished_ms\":" + std::to_string(s.last_finished_ms);
}

}  // namespace

HandlerResult HandleScrubAdmin(RequestContext& ctx) {
  auto& engine = ctx.services.engine;
  const auto scrub_stats = [&engine] {
    return engine.Stats().scrub.value_or(storage::ScrubStats{});
  };
  const auto verb = ctx.request().method();
  if (verb == http::verb::get) {
    co_return co_await SendJson(ctx, 200, "{" + StatsJson(scrub_stats()) + "}");
  }
  if (verb != http::verb::post) {
    co_return Error(ErrorCode::kNotFound, "no such admin API resource");
  }
  STRATA_CO_TRY(auto seconds, CountParam(ctx, "wait", 0, kMaxWaitSeconds));
  // The pass to wait for: the one started now, or the one running already.
  const std::uint64_t before = scrub_stats().passes_completed;
  const bool started = engine.StartScrubPass();
  bool done = seconds == 0;
  if (!done) {
    const auto deadline =
        ctx.services.clock.SteadyNow() + std::chrono::seconds(static_cast<std::int64_t>(seconds));
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    while (!(done = scrub_stats().passes_completed > before) &&
           ctx.services.clock.SteadyNow() < deadline) {
      timer.expires_after(std::chrono::milliseconds(50));
      co_await timer.async_wait(boost::asio::use_awaitable);
    }
  }
  co_return co_await SendJson(ctx, done ? 200 : 503,
                              std::string("{\"started\":") + (started ? "true" : "false") + "," +
                                  StatsJson(scrub_stats()) + "}");
}

}  // namespace strata::gateway
