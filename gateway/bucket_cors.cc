#include "gateway/bucket_cors.h"

#include "gateway/parsed_setting.h"

namespace strata::gateway {

std::shared_ptr<const CorsConfiguration> CorsOf(const metadata::BucketRecord& bucket) {
  return ParsedSetting<CorsConfiguration>(bucket.name, bucket.access.cors, "CORS configuration",
                                          [](std::string_view text, std::string_view /*bucket*/) {
                                            return ParseCorsConfiguration(text);
                                          });
}

void AddCorsHeaders(RequestContext& ctx, const metadata::BucketRecord& bucket) {
  const std::string_view origin = ctx.Header("origin");
  if (origin.empty() || bucket.access.cors.empty()) {
    return;
  }
  auto config = CorsOf(bucket);
  if (config == nullptr) {
    return;
  }
  const CorsRequest request{origin, std::string_view(ctx.request().method_string()), {}};
  const CorsRule* rule = MatchCorsRule(*config, request);
  if (rule == nullptr) {
    return;
  }
  for (auto& [name, value] : CorsResponseHeaders(*rule, request, /*preflight=*/false)) {
    ctx.exchange.AddResponseHeader(std::move(name), std::move(value));
  }
  ctx.exchange.AddResponseHeader("Vary", kCorsVary);
}

}  // namespace strata::gateway
