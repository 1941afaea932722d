#include "gateway/handlers/context.h"

#include <chrono>

namespace strata::gateway {

std::string_view RequestContext::Header(std::string_view name) const {
  auto it = request().find(name);
  return it == request().end() ? std::string_view() : std::string_view(it->value());
}

std::int64_t RequestContext::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             services.clock.Now().time_since_epoch())
      .count();
}

bool MayAccess(const auth::Credential& principal, const metadata::BucketRecord& bucket) {
  return principal.admin || bucket.owner == principal.access_key;
}

HandlerResult SendXml(RequestContext& ctx, unsigned status, std::string xml) {
  ResponseHeader header;
  header.result(status);
  header.set(http::field::content_type, "application/xml");
  co_return co_await ctx.exchange.Send(std::move(header), std::move(xml));
}

HandlerResult SendEmpty(RequestContext& ctx, unsigned status, ResponseHeader header) {
  header.result(status);
  co_return co_await ctx.exchange.Send(std::move(header), std::string());
}

}  // namespace strata::gateway
