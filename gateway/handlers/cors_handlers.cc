// CORS: Put/Get/DeleteBucketCors (?cors on a bucket) and the preflight OPTIONS request a
// browser sends before a cross-origin request, answered from the bucket's rules. The
// configuration lives in the bucket's record (metadata::BucketAccess::cors) as the GET
// answers it; gateway/bucket_cors.h applies it to the other requests.
#include <algorithm>

#include "common/offload.h"
#include "gateway/bucket_cors.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"

namespace strata::gateway {
namespace {

HandlerResult SetCors(RequestContext& ctx, std::string cors, unsigned status) {
  const storage::ObjectStore::AccessChange change =
      [&cors](metadata::BucketAccess& access) -> Result<void> {
    access.cors = cors;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, status);
}

Error NotAllowed() {
  return Error(ErrorCode::kCorsNotAllowed,
               "CORSResponse: This CORS request is not allowed. This is usually because the "
               "evalution of Origin, request method / Access-Control-Request-Method or "
               "Access-Control-Request-Headers are not whitelisted by the resource's CORS "
               "spec.");
}

}  // namespace

HandlerResult PutBucketCors(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxCorsBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto config, body.Parse(ParseCorsConfiguration));
  co_return co_await SetCors(ctx, CorsConfigurationXml(config), 200);
}

HandlerResult GetBucketCors(RequestContext& ctx) {
  const std::string& cors = ctx.bucket->access.cors;
  if (cors.empty()) {
    co_return Error(ErrorCode::kNoSuchCorsConfiguration, "The CORS configuration does not exist");
  }
  co_return co_await SendXml(ctx, 200, cors);
}

HandlerResult DeleteBucketCors(RequestContext& ctx) {
  co_return co_await SetCors(ctx, std::string(), 204);
}

HandlerResult OptionsObject(RequestContext& ctx) {
  const std::string_view origin = ctx.Header("origin");
  if (origin.empty()) {
    co_return Error(ErrorCode::kBadRequest,
                    "Insufficient information. Origin request header needed.");
  }
  const std::string_view method = ctx.Header("access-control-request-method");
  constexpr std::string_view kMethods[] = {"GET", "PUT", "POST", "DELETE", "HEAD"};
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
    co_return Error(ErrorCode::kBadRequest,
                    "Invalid Access-Control-Request-Method: " + std::string(method));
  }
  auto config = CorsOf(*ctx.bucket);
  if (config == nullptr) {
    co_return NotAllowed();
  }
  const CorsRequest request{origin, method,
                            SplitHeaderList(ctx.Header("access-control-request-headers"))};
  const CorsRule* rule = MatchCorsRule(*config, request);
  if (rule == nullptr) {
    co_return NotAllowed();
  }
  ResponseHeader header;
  for (auto& [name, value] : CorsResponseHeaders(*rule, request, /*preflight=*/true)) {
    header.set(name, value);
  }
  header.set(http::field::vary, kCorsVary);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

}  // namespace strata::gateway
