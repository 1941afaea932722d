#include "gateway/handlers/read_through.h"

#include "gateway/conditions.h"
#include "gateway/handlers/object_io.h"
#include "gateway/identity.h"

namespace strata::gateway {
namespace {

// What the request reads: storage decides from it whether the bytes are cached.
storage::ColdReadKind KindOf(const RequestContext& ctx) {
  if (ctx.is_head()) {
    return storage::ColdReadKind::kHead;
  }
  const bool whole = ctx.Header("range").empty() && !ctx.target.HasParam("partNumber");
  return whole ? storage::ColdReadKind::kWhole : storage::ColdReadKind::kPart;
}

// Answers a GET or HEAD from `read`: conditions, range, header, then the body.
HandlerResult Serve(RequestContext& ctx, storage::ColdRead& read) {
  const metadata::ObjectRecord& record = read.record();
  auto answered = co_await AnswerUnreadable(ctx, record);
  if (answered) {
    co_return std::move(*answered);
  }
  STRATA_CO_TRY(auto range, ParseRange(ctx.Header("range"), record.size));
  if (ctx.target.HasParam("partNumber")) {
    co_return Error(ErrorCode::kNotImplemented,
                    "partNumber of an object not on the local tier is not supported yet");
  }
  ResponseHeader header;
  DescribeToHeaders(ctx, record, !range.has_value(), header);
  SetVersionHeader(ctx, record.version_id, header);
  std::uint64_t length = record.size;
  std::optional<storage::ColdRange> cold_range;
  if (range.has_value()) {
    length = range->last - range->first + 1;
    cold_range = storage::ColdRange{range->first, range->last};
    header.result(http::status::partial_content);
    header.set(http::field::content_range, "bytes " + std::to_string(range->first) + "-" +
                                               std::to_string(range->last) + "/" +
                                               std::to_string(record.size));
  } else {
    header.result(http::status::ok);
  }
  auto sent = co_await ctx.exchange.SendHeader(std::move(header), length, std::string_view());
  if (!sent.ok() || ctx.is_head()) {
    co_return sent;
  }
  storage::ByteSink to_client = [&ctx](std::string_view block) {
    return ctx.exchange.SendBody(block);
  };
  auto streamed = co_await read.Stream(cold_range, std::move(to_client), ctx.services.background);
  if (!streamed.ok()) {
    ctx.exchange.CloseAfterResponse();  // the body is cut short: the client must see it
  }
  co_return streamed;
}

// Opens the cold read and serves it; a whole read that waited for another read of the key
// bringing it local reads the index again (a hit, most often).
HandlerResult OpenAndServe(RequestContext& ctx, std::optional<metadata::ObjectRecord> evicted) {
  STRATA_CO_TRY(auto read,
                co_await ctx.services.engine.OpenColdRead(*ctx.bucket, ObjectKey(ctx.target.key),
                                                          std::move(evicted), KindOf(ctx)));
  if (read == nullptr) {
    co_return co_await GetObject(ctx);
  }
  co_return co_await Serve(ctx, *read);
}

}  // namespace

HandlerResult ReadThrough(RequestContext& ctx) { return OpenAndServe(ctx, std::nullopt); }

HandlerResult ReadEvicted(RequestContext& ctx, metadata::ObjectRecord record) {
  return OpenAndServe(ctx, std::move(record));
}

boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> AdoptUpstreamBucket(
    RequestContext& ctx, const BucketName& name) {
  return ctx.services.engine.AdoptUpstreamBucket(name, std::string(UserName(ctx.auth.principal)));
}

}  // namespace strata::gateway
