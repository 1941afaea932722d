// RestoreObject (POST /bucket/key?restore): brings a version of a cold class (one whose
// class names the upstream tier: GLACIER, GLACIER_IR, COLD) back onto the hot tier and
// pins it there for Days lifecycle days ([lifecycle] day; a real day by default), rounded
// up to the next day boundary as S3 does.
//   - 202 Accepted: the fetch is queued (TierEngine::QueueRestore); HEAD answers
//     x-amz-restore: ongoing-request="true" until it lands, then
//     ongoing-request="false", expiry-date="...".
//   - 200 OK: the version has a local copy already; only the expiry is set anew.
//   - 409 RestoreAlreadyInProgress while a fetch is under way; 403 InvalidObjectState for
//     a class that is not cold; MalformedXML for a bad body; 503 SlowDown when the
//     fetcher's queue is full.
// The pin keeps eviction away (the tier engine's eviction); after the expiry the copy is
// an ordinary clean copy again.
#include <spdlog/spdlog.h>

#include <chrono>

#include "common/offload.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxRestoreBody = 64 * 1024;

std::int64_t ExpiryMs(std::int64_t now_ms, std::int64_t days, std::int64_t day_ms) {
  const std::int64_t until = now_ms + days * day_ms;
  return (until + day_ms - 1) / day_ms * day_ms;
}

// Sets (or clears) the restore state of the version `record` names, if it is unchanged:
// whether it is (so the state is as asked now).
Result<bool> SetRestore(metadata::Index& index, const metadata::ObjectRecord& record,
                        std::int64_t expiry_ms, bool ongoing) {
  const metadata::VersionChange change{
      .version_id = record.version_id,
      .etag = record.etag,
      .last_modified_ms = record.last_modified_ms,
      .edits = {metadata::SetRestoreState{expiry_ms, ongoing}},
  };
  auto changed = index.ChangeVersion(record.bucket, record.key, change);
  if (!changed.ok()) {
    return std::move(changed).error();
  }
  return changed->applied;
}

}  // namespace

HandlerResult RestoreObject(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxRestoreBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto request, body.Parse(ParseRestoreRequest));
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  if (record.delete_marker) {
    if (ctx.target.HasParam("versionId")) {
      co_return Error(ErrorCode::kMethodNotAllowed,
                      "The specified method is not allowed against this resource.");
    }
    co_return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
  }
  const Config& config = ctx.services.config;
  auto& engine = ctx.services.engine;
  if (!engine.Restorable(record)) {
    co_return Error(ErrorCode::kInvalidObjectState,
                    "Restore is not allowed for the object's current storage class");
  }
  if (record.restore_ongoing) {
    co_return Error(ErrorCode::kRestoreAlreadyInProgress, "Object restore is already in progress");
  }
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  ctx.services.clock.Now().time_since_epoch())
                                  .count();
  const std::int64_t expiry = ExpiryMs(now_ms, request.days, config.lifecycle.day.count());
  const bool local = ctx.services.store.HasLocalCopy(record);
  auto& index = ctx.services.index;
  STRATA_CO_TRY(auto set, co_await Offload(ctx.services.blocking_pool, [&] {
                  return SetRestore(index, record, expiry, !local);
                }));
  if (!set) {
    co_return Error(ErrorCode::kUnavailable, "The object changed while it was being restored",
                    true);
  }
  if (local) {
    co_return co_await SendEmpty(ctx, 200);  // restored already: a new expiry only
  }
  metadata::ObjectRecord fetched = record;
  const bool queued =
      engine.QueueRestore(record, [&index, fetched, expiry](const Result<bool>& done) {
        if (!done.ok()) {
          spdlog::warn("restore: {}/{} failed: {}", fetched.bucket.str(), fetched.key.str(),
                       done.error().message);
        }
        // Landed (or failed: a new RestoreObject may try again): no longer ongoing. A
        // failed fetch leaves no pin behind.
        auto cleared = SetRestore(index, fetched, done.ok() ? expiry : 0, false);
        if (!cleared.ok()) {
          spdlog::warn("restore: {}/{}: cannot record the outcome: {}", fetched.bucket.str(),
                       fetched.key.str(), cleared.error().message);
        }
      });
  if (!queued) {
    auto undone = co_await Offload(ctx.services.blocking_pool,
                                   [&] { return SetRestore(index, record, 0, false); });
    (void)undone;
    co_return Error(ErrorCode::kUnavailable, "Too many restores in progress; retry later", true);
  }
  co_return co_await SendEmpty(ctx, 202);
}

}  // namespace strata::gateway
