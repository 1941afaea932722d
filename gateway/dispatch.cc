#include "gateway/dispatch.h"

#include <array>
#include <chrono>

#include "common/log.h"
#include "common/text.h"
#include "gateway/bucket_access.h"
#include "gateway/bucket_cors.h"
#include "gateway/error_table.h"
#include "gateway/forward.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/read_through.h"
#include "gateway/operation.h"
#include "gateway/operation_table.h"
#include "gateway/replicating_exchange.h"
#include "gateway/xml.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

Error NotImplemented() {
  return Error(ErrorCode::kNotImplemented,
               "A header or query you provided implies functionality that is not implemented");
}

Error MethodNotAllowed() {
  return Error(ErrorCode::kMethodNotAllowed,
               "The specified method is not allowed against this resource.");
}

// What `op` asks of the bucket's policy: the operation's permission, refined as S3 refines
// it for a version named by id, on the bucket or the addressed key.
// The operations whose action is another one when they address a version by its id.
constexpr std::pair<S3Operation, std::string_view> kVersionActions[] = {
    {S3Operation::kGetObject, "s3:GetObjectVersion"},
    {S3Operation::kHeadObject, "s3:GetObjectVersion"},
    {S3Operation::kDeleteObject, "s3:DeleteObjectVersion"},
    {S3Operation::kGetObjectTagging, "s3:GetObjectVersionTagging"},
    {S3Operation::kPutObjectTagging, "s3:PutObjectVersionTagging"},
    {S3Operation::kDeleteObjectTagging, "s3:DeleteObjectVersionTagging"},
    {S3Operation::kGetObjectAttributes, "s3:GetObjectVersionAttributes"},
    {S3Operation::kGetObjectAcl, "s3:GetObjectVersionAcl"},
    {S3Operation::kPutObjectAcl, "s3:PutObjectVersionAcl"},
};

AccessRequest AccessFor(const RequestContext& ctx, S3Operation op) {
  AccessRequest access{.action = LookupOperation(op).iam_action};
  if (ctx.target.HasParam("versionId")) {
    for (const auto& [versioned, action] : kVersionActions) {
      if (versioned == op) {
        access.action = action;
      }
    }
  }
  access.policy_operation = op == S3Operation::kGetBucketPolicy ||
                            op == S3Operation::kPutBucketPolicy ||
                            op == S3Operation::kDeleteBucketPolicy;
  access.key = ctx.target.key;
  return access;
}

// The operations on an existing version whose policy conditions may read its tags
// (s3:ExistingObjectTag/KEY), and whose ACL may grant them.
bool ReadsExistingObject(S3Operation op) {
  switch (op) {
    case S3Operation::kGetObject:
    case S3Operation::kHeadObject:
    case S3Operation::kGetObjectAcl:
    case S3Operation::kPutObjectAcl:
    case S3Operation::kGetObjectRetention:
    case S3Operation::kPutObjectRetention:
    case S3Operation::kGetObjectLegalHold:
    case S3Operation::kPutObjectLegalHold:
    case S3Operation::kGetObjectTagging:
    case S3Operation::kPutObjectTagging:
    case S3Operation::kDeleteObjectTagging:
    case S3Operation::kGetObjectAttributes:
    case S3Operation::kDeleteObject:
    case S3Operation::kRestoreObject:
      return true;
    default:
      return false;
  }
}

// Whether the bucket's policy reads the addressed version's tags (s3:ExistingObjectTag/).
bool PolicyReadsTags(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                     S3Operation op) {
  if (ctx.target.key.empty() || bucket.access.policy.empty() || !ReadsExistingObject(op)) {
    return false;
  }
  auto policy = PolicyOf(bucket);
  return policy != nullptr && policy->NamesConditionKeys("s3:existingobjecttag/");
}

// The version the request addresses (its versionId, or the current one), for its tags
// and ACL; nullopt when there is no such version or it is a delete marker. A failed read
// fails the request: a Deny on a tag must never be skipped for want of it.
asio::awaitable<Result<std::optional<metadata::ObjectRecord>>> VersionForAccess(
    RequestContext& ctx) {
  std::optional<metadata::ObjectRecord> none;
  const BucketName name(ctx.target.bucket);
  const ObjectKey key(ctx.target.key);
  const auto version = ctx.target.Param("versionId");
  auto& store = ctx.services.store;
  auto record = co_await metadata::ReadInline(ctx.services.blocking_pool, [&] {
    return version ? store.HeadVersion(name, key, VersionId(std::string(*version)))
                   : store.HeadObject(name, key);
  });
  if (!record.ok()) {
    const ErrorCode code = record.error().code;
    if (code == ErrorCode::kNoSuchKey || code == ErrorCode::kNoSuchVersion ||
        code == ErrorCode::kInvalidArgument) {
      co_return none;  // the handler gives its own answer
    }
    co_return std::move(record).error();
  }
  if (record->delete_marker) {
    co_return none;
  }
  co_return std::optional<metadata::ObjectRecord>(std::move(*record));
}

// Whether the caller may do `op` on `bucket` (gateway/bucket_access.h). DeleteObjects is
// judged key by key by its handler, as S3 judges it; only a caller whom nothing could
// allow (not the owner, and no policy) is refused before its body is read.
HandlerResult Authorize(RequestContext& ctx, const metadata::BucketRecord& bucket, S3Operation op) {
  if (op == S3Operation::kOptionsObject) {
    co_return Ok();  // a preflight is answered from the CORS rules, whoever asks
  }
  if (op == S3Operation::kPostObject) {
    // The form's signer is the caller, known only once its fields are read: the handler
    // authorizes s3:PutObject on the key as that signer (or as anonymous).
    co_return Ok();
  }
  if (op == S3Operation::kDeleteObjects) {
    if (bucket.access.policy.empty()) {  // else judged key by key
      co_return AuthorizeBucketAccess(ctx, bucket, AccessRequest{.action = "s3:DeleteObject"});
    }
    co_return Ok();
  }
  std::optional<metadata::ObjectRecord> version;
  if (PolicyReadsTags(ctx, bucket, op)) {
    STRATA_CO_TRY(version, co_await VersionForAccess(ctx));
  }
  AccessRequest access = AccessFor(ctx, op);
  access.object = version ? &*version : nullptr;
  auto decided = AuthorizeBucketAccess(ctx, bucket, access);
  // The version's ACL is read only for a caller the bucket alone does not allow.
  if (decided.ok() || !ReadsExistingObject(op) || !ObjectAclMayAllow(ctx.auth, bucket, access)) {
    co_return decided;
  }
  STRATA_CO_TRY(version, co_await VersionForAccess(ctx));
  if (!version) {
    // No such key (or a delete marker is current): a caller who may list the bucket may
    // learn so, 404 as HideMissingKey gives; anyone else the refusal. Answered here: the
    // handler never runs for a caller nothing allows (the key may appear meanwhile).
    const bool lister =
        AuthorizeBucketAccess(ctx, bucket, AccessRequest{.action = "s3:ListBucket"}).ok();
    if (lister && !ctx.target.Param("versionId")) {
      co_return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
    }
    co_return decided;
  }
  access.object = &*version;
  co_return AuthorizeBucketAccess(ctx, bucket, access);
}

// AWS answers a read of a key that does not exist with 404 NoSuchKey only to a caller who
// may list the bucket, so that no one else learns which keys exist: 403 AccessDenied.
// (Not a copy's: its NoSuchKey is about the source, in another bucket perhaps.)
Result<void> HideMissingKey(const RequestContext& ctx, S3Operation op, Result<void> handled) {
  const bool read = op == S3Operation::kGetObject || op == S3Operation::kHeadObject ||
                    op == S3Operation::kGetObjectTagging || op == S3Operation::kGetObjectAttributes;
  if (!read || handled.ok() || handled.error().code != ErrorCode::kNoSuchKey || !ctx.bucket ||
      ctx.exchange.response_started()) {
    return handled;
  }
  if (!AuthorizeBucketAccess(ctx, *ctx.bucket, AccessRequest{.action = "s3:ListBucket"}).ok()) {
    return Error(ErrorCode::kAccessDenied, "Access Denied");
  }
  return handled;
}

// The addressed bucket into ctx.bucket, when it exists (here, in the cluster's catalog,
// or, adopted now, upstream), and the caller may do `op` on it. A missing bucket is left
// to the handler, which answers NoSuchBucket.
HandlerResult ResolveBucket(RequestContext& ctx, S3Operation op) {
  const BucketName name(ctx.target.bucket);
  auto& store = ctx.services.store;
  auto bucket = co_await metadata::ReadInline(ctx.services.blocking_pool,
                                              [&store, &name] { return store.GetBucket(name); });
  if (bucket.ok()) {
    AddCorsHeaders(ctx, *bucket);
    STRATA_CO_RETURN_IF_ERROR(co_await Authorize(ctx, *bucket, op));
    ctx.bucket = std::move(*bucket);
    co_return Ok();
  }
  if (bucket.error().code != ErrorCode::kNoSuchBucket) {
    co_return bucket.error();
  }
  if (ctx.services.catalog != nullptr) {
    // Cluster mode: perhaps made a moment ago through another gateway, and not mirrored
    // here yet. etcd's answer is the truth (mirrored here before it comes back).
    STRATA_CO_TRY(auto shared, co_await ctx.services.catalog->LookupAsync(name));
    if (shared.has_value()) {
      AddCorsHeaders(ctx, *shared);
      STRATA_CO_RETURN_IF_ERROR(co_await Authorize(ctx, *shared, op));
      ctx.bucket = std::move(shared);
      co_return Ok();
    }
  }
  if (ctx.services.engine.has_upstream()) {
    // Unknown here but perhaps upstream: an existing store shows through strata.
    STRATA_CO_TRY(auto adopted, co_await AdoptUpstreamBucket(ctx, name));
    if (adopted.has_value()) {
      STRATA_CO_RETURN_IF_ERROR(co_await Authorize(ctx, *adopted, op));
    }
    ctx.bucket = std::move(adopted);
  }
  co_return Ok();
}

// Runs the classified operation here: its handler from the operation table after the
// checks the table declares, or the refusal of a method fallback.
HandlerResult RouteHere(RequestContext& ctx, const Classification& route) {
  if (route.bucket_first) {
    STRATA_CO_RETURN_IF_ERROR(co_await ResolveBucket(ctx, route.op));
  }
  switch (route.refusal) {
    case Refusal::kNotImplemented:
      co_return NotImplemented();
    case Refusal::kMethodNotAllowed:
      co_return MethodNotAllowed();
    case Refusal::kNone:
      break;
  }
  const OperationEntry& entry = LookupOperation(route.op);
  if (entry.handler == nullptr) {
    co_return NotImplemented();  // not reached: Classify refuses what has no handler
  }
  STRATA_CO_RETURN_IF_ERROR(RunPrologue(ctx, entry));
  auto handled = co_await entry.handler(ctx);
  co_return HideMissingKey(ctx, route.op, std::move(handled));
}

// A change of one key that its other owners must hold before it is acknowledged
// (storage/replication.h); nullopt for any other operation. The value: whether the change
// makes a new version, whose bytes go along at once.
std::optional<bool> ReplicatedChange(S3Operation op) {
  switch (op) {
    case S3Operation::kPutObject:
    case S3Operation::kCopyObject:
      return true;
    // The other owners hold the upload's parts (SyncUpload): they make the version from
    // them and ask for bytes only when they cannot.
    case S3Operation::kCompleteMultipartUpload:
    case S3Operation::kDeleteObject:
    case S3Operation::kPutObjectTagging:
    case S3Operation::kDeleteObjectTagging:
    case S3Operation::kPutObjectAcl:
    case S3Operation::kPutObjectRetention:
    case S3Operation::kPutObjectLegalHold:
      return false;
    default:
      return std::nullopt;
  }
}

// A change of a multipart upload in progress, which its handler syncs to the key's other
// owners itself (storage/replication.h's SyncUpload).
bool ChangesAnUpload(S3Operation op) {
  return op == S3Operation::kCreateMultipartUpload || op == S3Operation::kUploadPart ||
         op == S3Operation::kUploadPartCopy || op == S3Operation::kAbortMultipartUpload;
}

// Runs the classified operation: on the key's primary owner in a cluster
// (gateway/forward.h), here otherwise; a change served here as the primary is acknowledged
// only once the key's other owners hold it.
HandlerResult Route(RequestContext& ctx, const Classification& route) {
  if (route.refusal != Refusal::kNone) {
    co_return co_await RouteHere(ctx, route);
  }
  STRATA_CO_TRY(const bool forwarded, co_await ForwardToOwner(ctx, route.op));
  if (forwarded) {
    co_return Ok();
  }
  const auto change = ReplicatedChange(route.op);
  if ((!change && !ChangesAnUpload(route.op)) || ctx.services.replication == nullptr) {
    co_return co_await RouteHere(ctx, route);
  }
  // A primary that may have lost its registration stops taking writes before another
  // member can take its keys over (storage/membership.h's fence).
  if (!ctx.services.cluster->MayAcceptWrites()) {
    co_return Error(ErrorCode::kUnavailable,
                    "this gateway is not sure of its cluster membership now; try again", true);
  }
  if (!change) {
    co_return co_await RouteHere(ctx, route);
  }
  ReplicatingExchange exchange(ctx.exchange, *ctx.services.replication,
                               BucketName(ctx.target.bucket), ObjectKey(ctx.target.key), *change);
  RequestContext replicated{exchange, ctx.services, ctx.target, ctx.view, ctx.auth, ctx.bucket};
  co_return co_await RouteHere(replicated, route);
}

std::string ErrorXml(const Error& error, std::string_view s3code, const RequestContext* ctx,
                     const std::string& request_id) {
  XmlWriter xml("Error", false);
  xml.Element("Code", s3code).Element("Message", error.message);
  for (const auto& [element, text] : error.details) {
    xml.Element(element, text);
  }
  if (ctx != nullptr) {
    if (!ctx->target.bucket.empty()) {
      xml.Element("BucketName", ctx->target.bucket);
    }
    if (!ctx->target.key.empty()) {
      xml.Element("Key", ctx->target.key);
    }
    xml.Element("Resource", ctx->target.raw_path);
  }
  xml.Element("RequestId", request_id);
  return xml.Finish();
}

asio::awaitable<void> SendError(Exchange& exchange, const Error& error, const RequestContext* ctx,
                                ResponseHeader header = {}) {
  if (exchange.response_started()) {
    // Too late for an error document: end the connection so the client sees a failure.
    exchange.CloseAfterResponse();
    co_return;
  }
  auto info = LookupS3Error(error.code);
  header.result(info.status);
  std::string body;
  if (exchange.request().method() != http::verb::head) {
    header.set(http::field::content_type, "application/xml");
    body = ErrorXml(error, info.code, ctx, exchange.request_id());
  }
  if (error.code == ErrorCode::kUnavailable) {
    header.set(http::field::retry_after, "1");
  }
  if (!exchange.body_complete() && info.status >= 500) {
    exchange.CloseAfterResponse();
  }
  (void)co_await exchange.Send(std::move(header), std::move(body));
}

// An operation an anonymous caller can never be granted: it is not on a bucket (listing
// the caller's buckets, the admin API), or it makes one.
bool NeedsAUser(const S3Target& target, S3Operation op) {
  return target.bucket.empty() || op == S3Operation::kCreateBucket || op == S3Operation::kAdmin;
}

}  // namespace

HandlerResult SendS3Error(RequestContext& ctx, const Error& error, ResponseHeader header) {
  co_await SendError(ctx.exchange, error, &ctx, std::move(header));
  co_return Ok();
}

asio::awaitable<void> HandleRequest(Exchange& exchange, Services& services) {
  auto started = std::chrono::steady_clock::now();
  const auto& req = exchange.request();
  auto host_it = req.find(http::field::host);
  std::string_view host =
      host_it == req.end() ? std::string_view() : std::string_view(host_it->value());

  Result<void> outcome = Ok();
  std::optional<RequestContext> ctx;
  auto target = ParseS3Target(req.target(), host, services.config.server.domain);
  if (!target.ok()) {
    outcome = target.error();
  } else {
    ctx.emplace(RequestContext{exchange, services, std::move(*target), {}, {}, {}});
    const Classification route =
        Classify(ctx->target, req.method(), !ctx->Header("x-amz-copy-source").empty());
    exchange.SetOperation(route.op);
    auto& view = ctx->view;
    view.method = req.method_string();
    view.raw_path = ctx->target.raw_path;
    view.raw_query = ctx->target.raw_query;
    if (ctx->target.virtual_hosted) {
      view.virtual_host_bucket = ctx->target.bucket;
    }
    for (const auto& field : req) {
      view.headers.emplace_back(field.name_string(), field.value());
    }
    // A CORS preflight is answered from the bucket's rules whoever asks, as S3 does: a
    // browser sends it without credentials, and a presigned URL's signature is for the
    // method it names, not OPTIONS.
    auth::AuthResult preflight;
    preflight.anonymous = true;
    auto auth = route.op == S3Operation::kOptionsObject ? Result<auth::AuthResult>(preflight)
                                                        : services.verifier.Verify(view);
    if (!auth.ok()) {
      outcome = auth.error();
    } else if (auth->anonymous && NeedsAUser(ctx->target, route.op)) {
      outcome = Error(ErrorCode::kAccessDenied, "Access Denied");
    } else {
      ctx->auth = std::move(*auth);
      outcome = co_await Route(*ctx, route);
    }
  }
  if (!outcome.ok()) {
    co_await SendError(exchange, outcome.error(), ctx ? &*ctx : nullptr);
  }

  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - started)
                    .count();
  // A server-side failure (an upstream that refuses, a disk error) is the operator's to
  // fix: its cause goes into the line too.
  std::string detail;
  if (!outcome.ok() && exchange.status() >= 500) {
    detail = " detail=\"" + JsonEscape(outcome.error().message) + "\"";
  }
  spdlog::info(
      "request id={} remote={} method={} bucket=\"{}\" key=\"{}\" status={} in={} out={} "
      "us={}{}{}{}",
      exchange.request_id(), exchange.remote_address(), std::string_view(req.method_string()),
      ctx ? ctx->target.bucket : "", ctx ? ctx->target.key : "", exchange.status(),
      exchange.bytes_in(), exchange.bytes_out(), micros, outcome.ok() ? "" : " error=",
      outcome.ok() ? "" : std::string(LookupS3Error(outcome.error().code).code), detail);
}

}  // namespace strata::gateway
