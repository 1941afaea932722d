// Object lock (WORM): Get/PutObjectLockConfiguration (?object-lock on a bucket),
// Get/PutObjectRetention (?retention) and Get/PutObjectLegalHold (?legal-hold) on a
// version. The configuration lives in the bucket's access settings; a version's lock in
// its record, changed in place under the key's lock, where the rules of
// metadata/object_lock.h are checked against the record as it is, so a lock is never
// weakened by a race. The index refuses to remove a locked version whoever asks.
#include <boost/beast/core/string.hpp>
#include <optional>

#include "common/offload.h"
#include "gateway/bucket_access.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/lock_request.h"
#include "gateway/handlers/object_io.h"
#include "gateway/object_lock_xml.h"
#include "metadata/object_lock.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxLockBody = 16 * 1024;

// A lock PUT's body: a digest required, read, verified.
boost::asio::awaitable<Result<std::string>> ReadLockBody(RequestContext& ctx) {
  STRATA_CO_RETURN_IF_ERROR(RequireDigest(ctx));
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxLockBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  co_return std::move(body.text);
}

Error NoLockConfiguration() {
  return Error(ErrorCode::kInvalidRequest, "Bucket is missing Object Lock Configuration");
}

// The addressed version for a lock read or change: kMethodNotAllowed for a delete marker.
boost::asio::awaitable<Result<metadata::ObjectRecord>> LockedVersion(RequestContext& ctx) {
  if (!ctx.bucket->access.object_lock.enabled) {
    co_return NoLockConfiguration();
  }
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  if (record.delete_marker) {
    co_return Error(ErrorCode::kMethodNotAllowed,
                    "The specified method is not allowed against this resource.");
  }
  co_return std::move(record);
}

// Applies `change` to the version read (by its id) and answers 200 with its version id.
HandlerResult ChangeLock(RequestContext& ctx, const metadata::ObjectRecord& record,
                         const metadata::VersionSettingsChange& change) {
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  const std::optional<VersionId> version(record.version_id);
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto updated, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.UpdateVersionSettings(bucket, key, version, change);
                }));
  ResponseHeader header;
  SetVersionHeader(ctx, updated.version_id, header);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

}  // namespace

Result<void> RequireDigest(const RequestContext& ctx) {
  if (!ctx.Header("content-md5").empty()) {
    return Ok();
  }
  constexpr std::string_view kChecksumPrefix = "x-amz-checksum-";
  for (const auto& field : ctx.request()) {
    const auto name = field.name_string();
    if (name.size() > kChecksumPrefix.size() &&
        boost::beast::iequals(name.substr(0, kChecksumPrefix.size()), kChecksumPrefix)) {
      return Ok();
    }
  }
  if (!ctx.Header("x-amz-sdk-checksum-algorithm").empty()) {
    return Ok();  // a trailing checksum, verified as the body is read
  }
  return Error(ErrorCode::kInvalidRequest,
               "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object "
               "requests with Object Lock parameters");
}

bool HasLockHeaders(const RequestContext& ctx) {
  return !ctx.Header("x-amz-object-lock-mode").empty() ||
         !ctx.Header("x-amz-object-lock-retain-until-date").empty() ||
         !ctx.Header("x-amz-object-lock-legal-hold").empty();
}

Result<void> DescribeLock(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                          metadata::ObjectRecord& record, const AccessFields& fields) {
  auto requested = ParseLockHeaders(fields("x-amz-object-lock-mode"),
                                    fields("x-amz-object-lock-retain-until-date"),
                                    fields("x-amz-object-lock-legal-hold"), ctx.NowMs());
  if (!requested.ok()) {
    return std::move(requested).error();
  }
  const auto& config = bucket.access.object_lock;
  if (requested->any() && !config.enabled) {
    return NoLockConfiguration();
  }
  Retention retention = DefaultRetention(config, ctx.NowMs());
  const std::string_view key = ctx.target.key;
  if (requested->retention) {
    STRATA_RETURN_IF_ERROR(AuthorizeBucketAccess(
        ctx, bucket, AccessRequest{.action = "s3:PutObjectRetention", .key = key}));
    retention = *requested->retention;
  }
  if (requested->legal_hold) {
    STRATA_RETURN_IF_ERROR(AuthorizeBucketAccess(
        ctx, bucket, AccessRequest{.action = "s3:PutObjectLegalHold", .key = key}));
    record.legal_hold = *requested->legal_hold;
  }
  record.retention_mode = std::move(retention.mode);
  record.retain_until_ms = retention.until_ms;
  return Ok();
}

bool BypassesGovernance(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                        std::string_view key) {
  const std::string_view asked = ctx.Header("x-amz-bypass-governance-retention");
  if (asked != "true" && asked != "True" && asked != "TRUE") {
    return false;
  }
  return AuthorizeBucketAccess(ctx, bucket,
                               AccessRequest{.action = "s3:BypassGovernanceRetention", .key = key})
      .ok();
}

HandlerResult GetObjectLockConfiguration(RequestContext& ctx) {
  const auto& config = ctx.bucket->access.object_lock;
  if (!config.enabled) {
    co_return Error(ErrorCode::kObjectLockConfigurationNotFound,
                    "Object Lock configuration does not exist for this bucket");
  }
  std::string xml = ObjectLockConfigurationXml(config);
  co_return co_await SendXml(ctx, 200, std::move(xml));
}

HandlerResult PutObjectLockConfiguration(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadLockBody(ctx));
  STRATA_CO_TRY(auto config, ParseObjectLockConfiguration(body));
  if (ctx.bucket->versioning != "Enabled") {
    co_return Error(ErrorCode::kInvalidBucketState,
                    "Versioning must be 'Enabled' on the bucket to apply a Object Lock "
                    "configuration");
  }
  const storage::ObjectStore::AccessChange change =
      [&config](metadata::BucketAccess& access) -> Result<void> {
    access.object_lock = config;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 200);
}

HandlerResult GetObjectRetention(RequestContext& ctx) {
  STRATA_CO_TRY(auto record, co_await LockedVersion(ctx));
  if (record.retention_mode.empty()) {
    co_return Error(ErrorCode::kNoSuchObjectLockConfiguration,
                    "The specified object does not have a ObjectLock configuration");
  }
  // Named, not a temporary in the co_await (GCC 12 destroys such temporaries twice).
  const Retention retention{record.retention_mode, record.retain_until_ms};
  std::string xml = RetentionXml(retention);
  co_return co_await SendXml(ctx, 200, std::move(xml));
}

HandlerResult PutObjectRetention(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadLockBody(ctx));
  STRATA_CO_TRY(auto retention, ParseRetention(body));
  STRATA_CO_TRY(auto record, co_await LockedVersion(ctx));
  if (!retention.mode.empty() && retention.until_ms <= ctx.NowMs()) {
    co_return Error(ErrorCode::kInvalidArgument, "The retain until date must be in the future!");
  }
  metadata::VersionSettingsChange change;
  change.retention = metadata::VersionSettingsChange::Retention{retention.mode, retention.until_ms};
  change.lock =
      metadata::LockCheck{ctx.NowMs(), BypassesGovernance(ctx, *ctx.bucket, ctx.target.key)};
  co_return co_await ChangeLock(ctx, record, change);
}

HandlerResult GetObjectLegalHold(RequestContext& ctx) {
  STRATA_CO_TRY(auto record, co_await LockedVersion(ctx));
  std::string xml = LegalHoldXml(record.legal_hold);
  co_return co_await SendXml(ctx, 200, std::move(xml));
}

HandlerResult PutObjectLegalHold(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadLockBody(ctx));
  STRATA_CO_TRY(const bool on, ParseLegalHold(body));
  STRATA_CO_TRY(auto record, co_await LockedVersion(ctx));
  metadata::VersionSettingsChange change;
  change.legal_hold = on;
  co_return co_await ChangeLock(ctx, record, change);
}

}  // namespace strata::gateway
