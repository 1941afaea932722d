// The write-back part of the admin API (admin users only, routed by HandleAdmin):
//   GET  /_strata/admin/writeback -> {"objects": N, "bytes": B, "oldest_age_seconds": S,
//                                     "pushes": P, "failures": F,
//                                     "failing": [{"bucket", "key", "attempts", "error"}]}
//   POST /_strata/admin/evict?bucket=B&key=K[&versionId=V] -> {"evicted": true|false}:
//        frees the local copy of K's current version (or of version V) if it is clean
//        (the upstream has it); false when it
//        is dirty or has no local copy. The record stays; a GET reads it through again.
//   POST /_strata/admin/flush[?timeout=SECONDS] -> pushes every waiting change now
//        (ignoring the delay and retry times) and answers 200 with the same document once
//        the backlog is empty, or 503 with it when the timeout (default 60 s) passes first.
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>

#include "common/offload.h"
#include "gateway/handlers/context.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxFailingListed = 100;
constexpr std::size_t kDefaultFlushSeconds = 60;
constexpr std::size_t kMaxFlushSeconds = 24 * 3600;

// The backlog as JSON: counts from memory, the oldest item and the failing ones from a
// scan of the queue (the admin API only; the request path never scans it).
Result<std::string> BacklogJson(Services& services) {
  const auto totals = services.index.WritebackBacklog();
  std::int64_t oldest_ms = 0;
  std::string failing;
  std::size_t listed = 0;
  auto scanned = services.index.ScanWriteback([&](const metadata::WritebackItem& item) {
    if (oldest_ms == 0 || item.enqueued_ms < oldest_ms) {
      oldest_ms = item.enqueued_ms;
    }
    if (item.attempts > 0 && listed < kMaxFailingListed) {
      ++listed;
      failing += std::string(failing.empty() ? "" : ",") + "{\"bucket\":\"" +
                 JsonEscape(item.bucket.view()) + "\",\"key\":\"" + JsonEscape(item.key.view()) +
                 "\",\"attempts\":" + std::to_string(item.attempts) + ",\"error\":\"" +
                 JsonEscape(item.last_error) + "\"}";
    }
    return true;
  });
  if (!scanned.ok()) {
    return std::move(scanned).error();
  }
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(services.clock.Now().time_since_epoch())
          .count();
  const double age = oldest_ms == 0 ? 0.0 : std::max<std::int64_t>(0, now_ms - oldest_ms) / 1000.0;
  const storage::WritebackStats stats =
      services.engine.Stats().writeback.value_or(storage::WritebackStats{});
  char age_text[32];
  std::snprintf(age_text, sizeof age_text, "%.3f", age);
  return "{\"objects\":" + std::to_string(totals.objects) +
         ",\"bytes\":" + std::to_string(totals.bytes) + ",\"oldest_age_seconds\":" + age_text +
         ",\"pushes\":" + std::to_string(stats.pushes) +
         ",\"failures\":" + std::to_string(stats.failures) + ",\"failing\":[" + failing + "]}";
}

HandlerResult Evict(RequestContext& ctx) {
  auto bucket_name = ctx.target.Param("bucket");
  auto key = ctx.target.Param("key");
  if (!bucket_name || !key || bucket_name->empty() || key->empty()) {
    co_return Error(ErrorCode::kInvalidArgument, "evict needs ?bucket=...&key=...");
  }
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto bucket, store.GetBucket(BucketName(std::string(*bucket_name))));
  // ?versionId=V: that version rather than the current one (a versioned bucket's older
  // versions are upstream each under its own upstream id).
  auto version = ctx.target.Param("versionId");
  STRATA_CO_TRY(auto record, version ? store.HeadVersion(bucket.name, ObjectKey(std::string(*key)),
                                                         VersionId(std::string(*version)))
                                     : store.HeadObject(bucket.name, ObjectKey(std::string(*key))));
  bool evicted = false;
  if (!bucket.upstream_tier.empty() && !record.delete_marker) {
    STRATA_CO_TRY(auto done, co_await Offload(ctx.services.blocking_pool, [&] {
                    return store.EvictLocalCopy(record, bucket.upstream_tier);
                  }));
    evicted = done;
  }
  co_return co_await SendJson(ctx, 200,
                              std::string("{\"evicted\":") + (evicted ? "true" : "false") + "}");
}

}  // namespace

HandlerResult HandleWritebackAdmin(RequestContext& ctx) {
  auto& services = ctx.services;
  const auto verb = ctx.request().method();
  if (ctx.target.raw_path == kWritebackPath && verb == http::verb::get) {
    STRATA_CO_TRY(auto json,
                  co_await Offload(services.blocking_pool, [&] { return BacklogJson(services); }));
    co_return co_await SendJson(ctx, 200, std::move(json));
  }
  if (ctx.target.raw_path == kEvictPath && verb == http::verb::post) {
    co_return co_await Evict(ctx);
  }
  if (ctx.target.raw_path != kFlushPath || verb != http::verb::post) {
    co_return Error(ErrorCode::kNotFound, "no such admin API resource");
  }
  STRATA_CO_TRY(auto seconds, CountParam(ctx, "timeout", kDefaultFlushSeconds, kMaxFlushSeconds));
  const auto deadline =
      services.clock.SteadyNow() + std::chrono::seconds(static_cast<std::int64_t>(seconds));
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  while (services.index.WritebackBacklog().objects > 0 && services.clock.SteadyNow() < deadline) {
    services.engine.FlushWriteback(deadline);
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(boost::asio::use_awaitable);
  }
  services.engine.FlushWriteback({});  // back to the delay
  const bool drained = services.index.WritebackBacklog().objects == 0;
  STRATA_CO_TRY(auto json,
                co_await Offload(services.blocking_pool, [&] { return BacklogJson(services); }));
  co_return co_await SendJson(ctx, drained ? 200 : 503, std::move(json));
}

}  // namespace strata::gateway
