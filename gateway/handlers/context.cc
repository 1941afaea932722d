#include "gateway/handlers/context.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "auth/payload_decoder.h"
#include "common/utf8.h"
#include "gateway/identity.h"

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
  return principal.admin || bucket.owner == UserName(principal);
}

boost::asio::awaitable<Result<XmlBody>> ReadXmlBody(RequestContext& ctx, std::size_t limit) {
  XmlBody body{std::string(), std::make_unique<XmlLease>(kXmlLeaseFactor * limit + (64 << 10))};
  // The declared size is taken from the budget before any byte is read, so a burst of
  // large bodies is refused up front instead of each holding a part of one.
  std::uint64_t declared = 0;
  for (std::string_view name : {"x-amz-decoded-content-length", "content-length"}) {
    auto text = ctx.Header(name);
    if (!text.empty()) {
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), declared);
      (void)p;
      if (ec != std::errc()) {
        declared = 0;
      }
      break;
    }
  }
  std::uint64_t counted = std::min<std::uint64_t>(declared, limit);
  if (!body.lease->Reserve(kXmlReserveFactor * counted) || !body.lease->Take(counted)) {
    co_return body.lease->Refusal();
  }
  body.text.reserve(counted);
  char buf[8192];
  std::string decoded;
  auto decoder = auth::MakePayloadDecoder(ctx.auth);
  for (;;) {
    STRATA_CO_TRY(auto got, co_await ctx.exchange.ReadBody(std::span<char>(buf, sizeof buf)));
    if (got == 0) {
      break;
    }
    decoded.clear();
    STRATA_CO_RETURN_IF_ERROR(decoder->Feed(std::string_view(buf, got), decoded));
    if (body.text.size() + decoded.size() > limit) {
      co_return Error(ErrorCode::kMalformedXml, "request body is too large");
    }
    body.text += decoded;
    if (body.text.capacity() > counted) {
      if (!body.lease->Take(body.text.capacity() - counted)) {
        co_return body.lease->Refusal();
      }
      counted = body.text.capacity();
    }
  }
  STRATA_CO_RETURN_IF_ERROR(decoder->Finish());
  co_return body;
}

Result<const metadata::BucketRecord*> ExistingBucket(const RequestContext& ctx) {
  if (!ctx.bucket) {
    return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist");
  }
  return &*ctx.bucket;
}

Result<void> CheckDirtyLimit(const RequestContext& ctx) {
  if (!ctx.bucket || ctx.bucket->upstream_tier.empty()) {
    return Ok();
  }
  const std::uint64_t dirty = ctx.services.index.WritebackBacklog().bytes;
  if (dirty >= ctx.services.config.writeback.dirty_limit) {
    return Error(ErrorCode::kUnavailable,
                 "Please reduce your request rate: " + std::to_string(dirty) +
                     " bytes wait to be written back upstream",
                 true);
  }
  return Ok();
}

Result<std::size_t> CountParam(const RequestContext& ctx, std::string_view name,
                               std::size_t fallback, std::size_t cap) {
  auto text = ctx.target.Param(name);
  if (!text) {
    return fallback;
  }
  long long v = -1;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || p != text->data() + text->size() || v < 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "Provided " + std::string(name) + " not an integer or within integer range");
  }
  return static_cast<std::size_t>(std::min<long long>(v, static_cast<long long>(cap)));
}

std::string ResumeAfter(const std::string& marker, const std::string& prefix,
                        const std::string& delimiter) {
  if (delimiter.empty() || !marker.starts_with(prefix)) {
    return marker;
  }
  auto pos = marker.find(delimiter, prefix.size());
  if (pos == std::string::npos) {
    return marker;
  }
  return marker.substr(0, pos + delimiter.size()) + std::string(1025, '\xff');
}

Result<bool> UrlEncodingParam(const RequestContext& ctx) {
  auto enc = ctx.target.Param("encoding-type");
  if (!enc) {
    return false;
  }
  if (*enc != "url") {
    return Error(ErrorCode::kInvalidArgument, "Invalid Encoding Method specified in Request");
  }
  return true;
}

bool ListingNeedsUrlEncoding(std::initializer_list<std::string_view> texts) {
  for (std::string_view text : texts) {
    if (!IsXmlText(text)) {
      return true;
    }
  }
  return false;
}

HandlerResult SendXml(RequestContext& ctx, unsigned status, std::string xml,
                      ResponseHeader header) {
  header.result(status);
  header.set(http::field::content_type, "application/xml");
  co_return co_await ctx.exchange.Send(std::move(header), std::move(xml));
}

HandlerResult SendEmpty(RequestContext& ctx, unsigned status, ResponseHeader header) {
  header.result(status);
  co_return co_await ctx.exchange.Send(std::move(header), std::string());
}

HandlerResult SendJson(RequestContext& ctx, unsigned status, std::string json) {
  ResponseHeader header;
  header.result(status);
  header.set(http::field::content_type, "application/json");
  co_return co_await ctx.exchange.Send(std::move(header), std::move(json));
}

}  // namespace strata::gateway
