#include "gateway/dispatch.h"

#include <array>
#include <chrono>

#include "common/log.h"
#include "common/text.h"
#include "gateway/error_table.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/read_through.h"
#include "gateway/operation.h"
#include "gateway/xml.h"

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

// ?tagging on a bucket or an object.
HandlerResult RouteTagging(RequestContext& ctx) {
  const bool bucket = ctx.target.key.empty();
  switch (ctx.request().method()) {
    case http::verb::put:
      if (bucket) {
        co_return co_await PutBucketTagging(ctx);
      }
      co_return co_await PutObjectTagging(ctx);
    case http::verb::get:
      if (bucket) {
        co_return co_await GetBucketTagging(ctx);
      }
      co_return co_await GetObjectTagging(ctx);
    case http::verb::delete_:
      if (bucket) {
        co_return co_await DeleteBucketTagging(ctx);
      }
      co_return co_await DeleteObjectTagging(ctx);
    default:
      co_return MethodNotAllowed();
  }
}

// ?lifecycle on a bucket.
HandlerResult RouteLifecycle(RequestContext& ctx) {
  if (!ctx.target.key.empty()) {
    co_return NotImplemented();
  }
  switch (ctx.request().method()) {
    case http::verb::put:
      co_return co_await PutBucketLifecycleConfiguration(ctx);
    case http::verb::get:
      co_return co_await GetBucketLifecycleConfiguration(ctx);
    case http::verb::delete_:
      co_return co_await DeleteBucketLifecycleConfiguration(ctx);
    default:
      co_return MethodNotAllowed();
  }
}

HandlerResult Route(RequestContext& ctx) {
  const auto& t = ctx.target;
  auto verb = ctx.request().method();
  if (t.raw_path.starts_with(kAdminPrefix) && !t.virtual_hosted) {
    co_return co_await HandleAdmin(ctx);
  }
  if (t.bucket.empty()) {
    if (HasUnsupportedSubresource(t)) {
      co_return NotImplemented();
    }
    if (verb == http::verb::get) {
      co_return co_await ListBuckets(ctx);
    }
    co_return MethodNotAllowed();
  }
  // PUT on a bucket creates it, unless it configures a sub-resource of an existing one.
  bool creating_bucket = t.key.empty() && verb == http::verb::put && !t.HasParam("versioning") &&
                         !t.HasParam("tagging") && !t.HasParam("lifecycle");
  if (!creating_bucket) {
    // A missing bucket is left to the handler, which answers NoSuchBucket.
    auto bucket = ctx.services.store.GetBucket(BucketName(t.bucket));
    if (bucket.ok()) {
      if (!MayAccess(ctx.auth.principal, *bucket)) {
        co_return Error(ErrorCode::kAccessDenied, "Access Denied");
      }
      ctx.bucket = std::move(*bucket);
    } else if (bucket.error().code != ErrorCode::kNoSuchBucket) {
      co_return bucket.error();
    } else if (ctx.services.upstream != nullptr) {
      // Unknown here but perhaps upstream: an existing store shows through strata.
      auto adopted = co_await AdoptUpstreamBucket(ctx, BucketName(t.bucket));
      if (!adopted.ok()) {
        co_return adopted.error();
      }
      if (adopted->has_value() && !MayAccess(ctx.auth.principal, **adopted)) {
        co_return Error(ErrorCode::kAccessDenied, "Access Denied");
      }
      ctx.bucket = std::move(*adopted);
    }
  }
  if (t.key.empty() && verb == http::verb::post && t.HasParam("delete")) {
    co_return co_await DeleteObjects(ctx);
  }
  if (HasUnsupportedSubresource(t)) {
    co_return NotImplemented();
  }
  if (t.HasParam("tagging")) {
    co_return co_await RouteTagging(ctx);
  }
  if (t.HasParam("lifecycle")) {
    co_return co_await RouteLifecycle(ctx);
  }
  if (t.HasParam("restore")) {
    if (t.key.empty()) {
      co_return NotImplemented();
    }
    if (verb != http::verb::post) {
      co_return MethodNotAllowed();
    }
    co_return co_await RestoreObject(ctx);
  }
  if (!t.key.empty() && t.HasParam("attributes")) {
    if (verb != http::verb::get) {
      co_return MethodNotAllowed();
    }
    co_return co_await GetObjectAttributes(ctx);
  }
  if (t.key.empty()) {
    switch (verb) {
      case http::verb::put:
        if (t.HasParam("versioning")) {
          co_return co_await PutBucketVersioning(ctx);
        }
        co_return co_await CreateBucket(ctx);
      case http::verb::head:
        co_return co_await HeadBucket(ctx);
      case http::verb::delete_:
        co_return co_await DeleteBucket(ctx);
      case http::verb::get:
        if (t.HasParam("location")) {
          co_return co_await GetBucketLocation(ctx);
        }
        if (t.HasParam("uploads")) {
          co_return co_await ListMultipartUploads(ctx);
        }
        if (t.HasParam("versioning")) {
          co_return co_await GetBucketVersioning(ctx);
        }
        if (t.HasParam("versions")) {
          co_return co_await ListObjectVersions(ctx);
        }
        co_return co_await ListObjects(ctx);
      case http::verb::post:
        co_return NotImplemented();
      default:
        co_return MethodNotAllowed();
    }
  }
  const bool copy = !ctx.Header("x-amz-copy-source").empty();
  const bool in_upload = t.HasParam("uploadId");
  switch (verb) {
    case http::verb::put:
      // No ?: between awaitables: GCC 12 frees the unchosen temporary wrongly.
      if (in_upload || t.HasParam("partNumber")) {
        if (copy) {
          co_return co_await UploadPartCopy(ctx);
        }
        co_return co_await UploadPart(ctx);
      }
      if (copy) {
        co_return co_await CopyObject(ctx);
      }
      co_return co_await PutObject(ctx);
    case http::verb::get:
      if (in_upload) {
        co_return co_await ListParts(ctx);
      }
      co_return co_await GetObject(ctx);
    case http::verb::head:
      co_return co_await GetObject(ctx);
    case http::verb::delete_:
      if (in_upload) {
        co_return co_await AbortMultipartUpload(ctx);
      }
      co_return co_await DeleteObject(ctx);
    case http::verb::post:
      if (t.HasParam("uploads")) {
        co_return co_await CreateMultipartUpload(ctx);
      }
      if (in_upload) {
        co_return co_await CompleteMultipartUpload(ctx);
      }
      co_return NotImplemented();
    default:
      co_return MethodNotAllowed();
  }
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
    exchange.SetOperation(
        ClassifyOperation(ctx->target, req.method(), !ctx->Header("x-amz-copy-source").empty()));
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
    auto auth = services.verifier.Verify(view);
    if (!auth.ok()) {
      outcome = auth.error();
    } else {
      ctx->auth = std::move(*auth);
      outcome = co_await Route(*ctx);
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
