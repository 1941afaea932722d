#include "gateway/handlers/object_io.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <exception>
#include <memory>
#include <optional>

#include "auth/payload_decoder.h"
#include "common/http_time.h"
#include "gateway/bucket_access.h"
#include "gateway/conditions.h"
#include "gateway/send_budget.h"
#include "gateway/tags.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

// Drops "aws-chunked" from a Content-Encoding list: it describes the transfer, not the
// object.
std::string StripAwsChunked(std::string_view encoding) {
  std::string out;
  while (!encoding.empty()) {
    auto comma = encoding.find(',');
    std::string_view item = encoding.substr(0, comma);
    encoding = comma == std::string_view::npos ? std::string_view() : encoding.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') {
      item.remove_prefix(1);
    }
    while (!item.empty() && item.back() == ' ') {
      item.remove_suffix(1);
    }
    if (item.empty() || item == "aws-chunked") {
      continue;
    }
    if (!out.empty()) {
      out += ',';
    }
    out += item;
  }
  return out;
}

// Which checksums the client declared, in headers, x-amz-trailer, or
// x-amz-sdk-checksum-algorithm.
Result<std::vector<ChecksumExpectation>> DeclaredChecksums(const RequestContext& ctx) {
  std::vector<ChecksumExpectation> out;
  for (auto algorithm : kAllChecksums) {
    auto value = ctx.Header(storage::ChecksumHeaderName(algorithm));
    if (!value.empty()) {
      out.push_back({algorithm, std::string(value), false});
    }
  }
  auto trailer = ctx.Header("x-amz-trailer");
  if (!trailer.empty()) {
    auto algorithm = Lower(trailer).starts_with("x-amz-checksum-")
                         ? storage::ParseChecksumAlgorithm(trailer.substr(15))
                         : std::nullopt;
    if (!algorithm) {
      return Error(ErrorCode::kInvalidArgument,
                   "The value specified in the x-amz-trailer header is not supported");
    }
    out.push_back({*algorithm, "", true});
  }
  if (out.size() > 1) {
    return Error(
        ErrorCode::kInvalidRequest,
        "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
  }
  auto sdk = ctx.Header("x-amz-sdk-checksum-algorithm");
  if (!sdk.empty()) {
    auto algorithm = storage::ParseChecksumAlgorithm(sdk);
    if (!algorithm) {
      return Error(ErrorCode::kInvalidRequest,
                   "Value for x-amz-sdk-checksum-algorithm header is invalid.");
    }
    if (out.empty()) {
      return Error(ErrorCode::kInvalidRequest,
                   "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* "
                   "or x-amz-trailer headers were found.");
    }
    if (out.front().algorithm != *algorithm) {
      return Error(ErrorCode::kInvalidRequest,
                   "Value for x-amz-sdk-checksum-algorithm header is invalid.");
    }
  }
  return out;
}

}  // namespace

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

boost::asio::awaitable<Result<metadata::ObjectRecord>> AddressedVersion(RequestContext& ctx) {
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  std::optional<VersionId> version;
  if (auto id = ctx.target.Param("versionId")) {
    if (id->empty()) {
      co_return Error(ErrorCode::kInvalidArgument, "Version id cannot be the empty string");
    }
    version = VersionId(*id);
  }
  auto& store = ctx.services.store;
  co_return co_await metadata::ReadInline(
      ctx.services.blocking_pool, [&store, &bucket, &key, &version] {
        return version ? store.HeadVersion(bucket, key, *version) : store.HeadObject(bucket, key);
      });
}

HandlerResult SendMarkerNotAllowed(RequestContext& ctx, const metadata::ObjectRecord& marker) {
  ResponseHeader header;
  header.set("x-amz-delete-marker", "true");
  header.set("x-amz-version-id", marker.version_id.str());
  const Error error(ErrorCode::kMethodNotAllowed,
                    "The specified method is not allowed against this resource.");
  co_return co_await SendS3Error(ctx, error, std::move(header));
}

boost::asio::awaitable<std::optional<Result<void>>> AnswerUnreadable(
    RequestContext& ctx, const metadata::ObjectRecord& record) {
  if (record.delete_marker) {
    ResponseHeader header;
    header.set("x-amz-delete-marker", "true");
    header.set("x-amz-version-id", record.version_id.str());
    if (ctx.target.HasParam("versionId")) {
      header.set(http::field::last_modified, FormatHttpDate(record.last_modified_ms));
      co_return co_await SendS3Error(
          ctx,
          Error(ErrorCode::kMethodNotAllowed,
                "The specified method is not allowed against this resource."),
          std::move(header));
    }
    // A deleted key looks missing: to a caller who may not list the bucket, as forbidden
    // (dispatch.cc's HideMissingKey), without a word of the marker.
    if (ctx.bucket &&
        !AuthorizeBucketAccess(ctx, *ctx.bucket, AccessRequest{.action = "s3:ListBucket"}).ok()) {
      co_return Result<void>(Error(ErrorCode::kAccessDenied, "Access Denied"));
    }
    co_return co_await SendS3Error(
        ctx, Error(ErrorCode::kNoSuchKey, "The specified key does not exist."), std::move(header));
  }
  Preconditions conditions{ctx.Header("if-match"), ctx.Header("if-none-match"),
                           ctx.Header("if-modified-since"), ctx.Header("if-unmodified-since")};
  if (auto status = EvaluatePreconditions(conditions, record.etag, record.last_modified_ms)) {
    if (*status == 412) {
      co_return Result<void>(
          Error(ErrorCode::kPreconditionFailed,
                "At least one of the pre-conditions you specified did not hold"));
    }
    ResponseHeader header;
    header.set(http::field::etag, "\"" + record.etag + "\"");
    header.set(http::field::last_modified, FormatHttpDate(record.last_modified_ms));
    co_return co_await SendEmpty(ctx, 304, std::move(header));
  }
  co_return std::nullopt;
}

void SetVersionHeader(const RequestContext& ctx, const VersionId& version_id,
                      ResponseHeader& header) {
  const bool versioned = ctx.bucket && !ctx.bucket->versioning.empty();
  if (versioned || (!version_id.empty() && version_id.str() != "null")) {
    header.set("x-amz-version-id", version_id.str());
  }
}

Result<metadata::WriteCondition> WriteConditionFromHeaders(const RequestContext& ctx) {
  metadata::WriteCondition condition;
  std::string_view none_match = ctx.Header("if-none-match");
  if (!none_match.empty()) {
    if (none_match != "*") {
      return Error(ErrorCode::kNotImplemented,
                   "A header you provided implies functionality that is not implemented: "
                   "If-None-Match on PUT accepts only *");
    }
    condition.if_absent = true;
  }
  std::string_view match = ctx.Header("if-match");
  if (!match.empty()) {
    if (match.size() >= 2 && match.front() == '"' && match.back() == '"') {
      match = match.substr(1, match.size() - 2);
    }
    condition.if_etag = std::string(match);
  }
  return condition;
}

Result<void> CheckKeyLength(const RequestContext& ctx) {
  if (ctx.target.key.size() > kMaxKeyBytes) {
    return Error(ErrorCode::kKeyTooLong, "Your key is too long");
  }
  return Ok();
}

Result<std::optional<std::string>> ExpectedMd5(const RequestContext& ctx) {
  // A Content-MD5 header that is present but empty is no digest at all: S3 refuses it
  // (InvalidDigest) rather than treating it as absent.
  if (ctx.request().find("content-md5") == ctx.request().end()) {
    return std::optional<std::string>();
  }
  auto md5 = ctx.Header("content-md5");
  auto raw = storage::Base64Decode(md5);
  if (!raw || raw->size() != 16) {
    return Error(ErrorCode::kInvalidDigest, "The Content-MD5 you specified is not valid.");
  }
  return std::optional<std::string>(std::string(md5));
}

bool KnownStorageClass(const RequestContext& ctx, std::string_view storage_class) {
  const std::string sc(storage_class);
  return ctx.services.config.storage_classes.contains(sc) || sc == "HOT" || sc == "WARM" ||
         sc == "COLD";
}

// Fills the record's descriptive fields from the request headers.
Result<void> DescribeFromHeaders(const RequestContext& ctx, metadata::ObjectRecord& record) {
  auto content_type = ctx.Header("content-type");
  record.content_type = content_type.empty() ? "binary/octet-stream" : std::string(content_type);
  std::size_t meta_bytes = 0;
  for (const auto& field : ctx.request()) {
    std::string name = Lower(field.name_string());
    if (name.starts_with(kMetaPrefix)) {
      std::string key = name.substr(kMetaPrefix.size());
      meta_bytes += key.size() + field.value().size();
      record.user_metadata.emplace_back(std::move(key), std::string(field.value()));
    }
  }
  if (meta_bytes > kMaxUserMetadataBytes) {
    return Error(ErrorCode::kMetadataTooLarge,
                 "Your metadata headers exceed the maximum allowed metadata size.");
  }
  for (auto name : kStoredHeaders) {
    std::string value(ctx.Header(name));
    if (name == "content-encoding") {
      value = StripAwsChunked(value);
    }
    if (!value.empty()) {
      record.system_metadata.emplace_back(std::string(name), std::move(value));
    }
  }
  auto storage_class = ctx.Header("x-amz-storage-class");
  if (!storage_class.empty()) {
    if (!KnownStorageClass(ctx, storage_class)) {
      return Error(ErrorCode::kInvalidStorageClass, "The storage class you specified is not valid");
    }
    record.storage_class = std::string(storage_class);
  }
  auto tags = ParseTaggingHeader(ctx.Header("x-amz-tagging"));
  if (!tags.ok()) {
    return std::move(tags).error();
  }
  record.tags = std::move(*tags);
  return Ok();
}

Result<void> VerifyBodyDigests(const RequestContext& ctx, std::string_view body) {
  auto md5 = ExpectedMd5(ctx);
  if (!md5.ok()) {
    return std::move(md5).error();
  }
  if (md5->has_value()) {
    storage::Md5 digest;
    digest.Update(body);
    if (digest.FinalBase64() != **md5) {
      return Error(ErrorCode::kBadDigest,
                   "The Content-MD5 you specified did not match what we received.");
    }
  }
  for (auto algorithm : kAllChecksums) {
    auto expected = ctx.Header(storage::ChecksumHeaderName(algorithm));
    if (expected.empty()) {
      continue;
    }
    auto checksummer = storage::MakeChecksummer(algorithm);
    checksummer->Update(body);
    if (checksummer->FinalBase64() != expected) {
      return Error(ErrorCode::kBadDigest,
                   "The " + std::string(storage::ChecksumName(algorithm)) +
                       " you specified did not match the calculated checksum.");
    }
  }
  return Ok();
}

void DescribeToHeaders(const RequestContext& ctx, const metadata::ObjectRecord& record,
                       bool whole_object, ResponseHeader& header) {
  header.set(http::field::etag, "\"" + record.etag + "\"");
  header.set(http::field::last_modified, FormatHttpDate(record.last_modified_ms));
  header.set(http::field::accept_ranges, "bytes");
  header.set(http::field::content_type, record.content_type);
  for (const auto& [name, value] : record.system_metadata) {
    header.set(name, value);
  }
  for (const auto& [name, value] : record.user_metadata) {
    header.set(std::string(kMetaPrefix) + name, value);
  }
  if (record.storage_class != "STANDARD") {
    header.set("x-amz-storage-class", record.storage_class);
  }
  if (!record.tags.empty()) {
    header.set("x-amz-tagging-count", std::to_string(record.tags.size()));
  }
  if (!record.retention_mode.empty()) {
    header.set("x-amz-object-lock-mode", record.retention_mode);
    header.set("x-amz-object-lock-retain-until-date", FormatIso8601(record.retain_until_ms));
  }
  if (record.legal_hold) {
    header.set("x-amz-object-lock-legal-hold", "ON");
  }
  if (record.restore_ongoing) {
    header.set("x-amz-restore", "ongoing-request=\"true\"");
  } else if (record.restore_expiry_ms > std::chrono::duration_cast<std::chrono::milliseconds>(
                                            ctx.services.clock.Now().time_since_epoch())
                                            .count()) {
    header.set("x-amz-restore", "ongoing-request=\"false\", expiry-date=\"" +
                                    FormatHttpDate(record.restore_expiry_ms) + "\"");
  }
  if (ctx.bucket && !ctx.bucket->upstream_tier.empty()) {
    const bool clean = std::any_of(
        record.placements.begin(), record.placements.end(),
        [&](const metadata::Placement& p) { return p.tier == ctx.bucket->upstream_tier; });
    header.set(kWritebackStateHeader, clean ? "done" : "pending");
  }
  if (whole_object && ctx.Header("x-amz-checksum-mode") == "ENABLED") {
    if (!record.checksums.empty()) {
      header.set("x-amz-checksum-type", record.checksum_type);
    }
    for (const auto& [algorithm, value] : record.checksums) {
      auto parsed = storage::ParseChecksumAlgorithm(algorithm);
      if (parsed) {
        header.set(storage::ChecksumHeaderName(*parsed), value);
      }
    }
  }
  // response-* query parameters override the stored headers (GET only in S3, but HEAD
  // answering the same is harmless).
  static constexpr std::pair<std::string_view, http::field> kOverrides[] = {
      {"response-content-type", http::field::content_type},
      {"response-content-language", http::field::content_language},
      {"response-expires", http::field::expires},
      {"response-cache-control", http::field::cache_control},
      {"response-content-disposition", http::field::content_disposition},
      {"response-content-encoding", http::field::content_encoding}};
  for (const auto& [param, field] : kOverrides) {
    if (auto value = ctx.target.Param(param)) {
      header.set(field, *value);
    }
  }
}

std::vector<storage::ChecksumAlgorithm> BodyExpectations::Algorithms() const {
  std::vector<storage::ChecksumAlgorithm> out;
  for (const auto& c : checksums) {
    out.push_back(c.algorithm);
  }
  return out;
}

Result<BodyExpectations> ExpectBody(const RequestContext& ctx, std::uint64_t max_size) {
  BodyExpectations expect;
  const bool streaming = ctx.auth.payload == auth::PayloadMode::kStreamingSigned ||
                         ctx.auth.payload == auth::PayloadMode::kStreamingSignedTrailer ||
                         ctx.auth.payload == auth::PayloadMode::kStreamingUnsignedTrailer;
  const bool chunked = ctx.Header("transfer-encoding").find("chunked") != std::string_view::npos;
  auto length_field = ctx.Header("content-length");
  if (length_field.empty() && !chunked) {
    return Error(ErrorCode::kMissingContentLength,
                 "You must provide the Content-Length HTTP header.");
  }
  if (streaming) {
    expect.size = ctx.auth.decoded_content_length;
    if (expect.size < 0 && !chunked) {
      return Error(ErrorCode::kMissingContentLength,
                   "You must provide the x-amz-decoded-content-length header.");
    }
  } else if (!length_field.empty()) {
    std::uint64_t v = 0;
    auto [p, ec] =
        std::from_chars(length_field.data(), length_field.data() + length_field.size(), v);
    if (ec != std::errc() || p != length_field.data() + length_field.size()) {
      return Error(ErrorCode::kInvalidArgument, "bad Content-Length");
    }
    expect.size = static_cast<std::int64_t>(v);
  }
  if (expect.size > static_cast<std::int64_t>(max_size)) {
    return Error(ErrorCode::kEntityTooLarge,
                 "Your proposed upload exceeds the maximum allowed object size.");
  }
  auto checksums = DeclaredChecksums(ctx);
  if (!checksums.ok()) {
    return std::move(checksums).error();
  }
  expect.checksums = std::move(checksums).value();
  auto md5 = ExpectedMd5(ctx);
  if (!md5.ok()) {
    return std::move(md5).error();
  }
  expect.md5 = std::move(md5).value();
  return expect;
}

namespace {

// Reads the next piece of [offset, end) into `block`; an object shorter than its record
// is kCorruption.
boost::asio::awaitable<Result<std::size_t>> ReadBlock(storage::ObjectReader& reader,
                                                      std::uint64_t offset, std::uint64_t end,
                                                      std::vector<char>& block) {
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), end - offset));
  auto n = co_await reader.ReadAsync(offset, std::span<char>(block.data(), want));
  if (n.ok() && *n == 0) {
    co_return Error(ErrorCode::kCorruption, "object data is shorter than its record");
  }
  co_return n;
}

// Sends the next piece of a response body: the first goes out with the header, still
// `unsent`, in one write.
boost::asio::awaitable<Result<void>> SendPiece(RequestContext& ctx,
                                               std::optional<ResponseHeader>& unsent,
                                               std::uint64_t length, std::string_view piece) {
  if (!unsent) {
    co_return co_await ctx.exchange.SendBody(piece);
  }
  ResponseHeader header = std::move(*unsent);
  unsent.reset();
  co_return co_await ctx.exchange.SendHeader(std::move(header), length, piece);
}

// Runs `op` to `out`, for co_spawn, whose completions need default-constructible values.
template <typename T>
boost::asio::awaitable<void> Into(boost::asio::awaitable<T> op, std::optional<T>& out) {
  out.emplace(co_await std::move(op));
}

}  // namespace

boost::asio::awaitable<Result<void>> SendObject(RequestContext& ctx, ResponseHeader header,
                                                storage::ObjectReader& reader, std::uint64_t first,
                                                std::uint64_t length) {
  namespace asio = boost::asio;
  std::optional<ResponseHeader> unsent(std::move(header));
  if (length == 0) {
    co_return co_await SendPiece(ctx, unsent, length, std::string_view());
  }
  const std::uint64_t end = first + length;
  const std::size_t wanted = SendBudgetAllows(kIoBlock) ? kIoBlock : kMinSendBlock;
  const auto block_size = static_cast<std::size_t>(std::min<std::uint64_t>(wanted, length));
  SendBlock current(block_size);
  std::optional<SendBlock> spare;  // the second block, while the budget allows
  std::uint64_t offset = first;
  auto n = co_await ReadBlock(reader, offset, end, current.bytes());
  while (true) {
    if (!n.ok()) {
      co_return n.error();  // before the first block nothing is sent: an error response
    }
    const std::string_view out(current.bytes().data(), *n);
    offset += *n;
    if (offset >= end) {
      co_return co_await SendPiece(ctx, unsent, length, out);
    }
    if (!spare && SendBudgetAllows(block_size)) {
      spare.emplace(block_size);  // allocated once, for objects of more than one block
    }
    if (!spare) {
      auto sent = co_await SendPiece(ctx, unsent, length, out);
      if (!sent.ok()) {
        co_return sent;
      }
      n = co_await ReadBlock(reader, offset, end, current.bytes());
      continue;
    }
    // Both run on this core's io_context: the socket write and the disk read.
    auto ex = co_await asio::this_coro::executor;
    std::optional<Result<void>> sent;
    std::optional<Result<std::size_t>> next;
    auto [order, send_ex, read_ex] =
        co_await asio::experimental::make_parallel_group(
            asio::co_spawn(ex, Into(SendPiece(ctx, unsent, length, out), sent), asio::deferred),
            asio::co_spawn(ex, Into(ReadBlock(reader, offset, end, spare->bytes()), next),
                           asio::deferred))
            .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
    if (send_ex || read_ex || !sent || !next) {
      co_return Error(ErrorCode::kInternal, "unexpected exception while sending an object");
    }
    if (!sent->ok()) {
      co_return *sent;
    }
    n = std::move(*next);
    std::swap(current.bytes(), spare->bytes());
  }
}

boost::asio::awaitable<Result<ResponseHeader>> ReceiveBody(RequestContext& ctx,
                                                           BodyExpectations expect,
                                                           storage::PendingWrite& write,
                                                           std::uint64_t max_size) {
  auto decoder = auth::MakePayloadDecoder(ctx.auth);
  // A small body gets a small buffer: a whole kIoBlock for every 4 KiB PUT cost a large
  // allocation and its page faults each time. The slack takes an aws-chunked body's
  // framing in the same read.
  constexpr std::size_t kFramingSlack = 8 * 1024;
  const std::size_t block =
      expect.size < 0 ? kIoBlock
                      : std::min(kIoBlock, static_cast<std::size_t>(expect.size) + kFramingSlack);
  const std::unique_ptr<char[]> raw(new char[block]);  // not zeroed: only read bytes are used
  std::string decoded;
  decoded.reserve(block);
  for (;;) {
    STRATA_CO_TRY(auto got, co_await ctx.exchange.ReadBody(std::span<char>(raw.get(), block)));
    if (got == 0) {
      break;
    }
    decoded.clear();
    STRATA_CO_RETURN_IF_ERROR(decoder->Feed(std::string_view(raw.get(), got), decoded));
    if (write.size() + decoded.size() > max_size) {
      co_return Error(ErrorCode::kEntityTooLarge,
                      "Your proposed upload exceeds the maximum allowed object size.");
    }
    STRATA_CO_RETURN_IF_ERROR(co_await write.AppendAsync(decoded));
  }
  STRATA_CO_RETURN_IF_ERROR(decoder->Finish());
  if (expect.size >= 0 && write.size() != static_cast<std::uint64_t>(expect.size)) {
    co_return Error(
        ErrorCode::kIncompleteBody,
        "You did not provide the number of bytes specified by the Content-Length HTTP header");
  }
  if (expect.md5 && write.Md5Base64() != *expect.md5) {
    co_return Error(ErrorCode::kBadDigest,
                    "The Content-MD5 you specified did not match what we received.");
  }
  ResponseHeader header;
  for (auto& expectation : expect.checksums) {
    std::string header_name(storage::ChecksumHeaderName(expectation.algorithm));
    if (expectation.in_trailer) {
      for (const auto& [name, value] : decoder->Trailers()) {
        if (name == header_name) {
          expectation.value = value;
        }
      }
      if (expectation.value.empty()) {
        co_return Error(ErrorCode::kInvalidRequest, "The trailer " + header_name + " is missing.");
      }
    }
    auto actual = write.Checksum(expectation.algorithm);
    if (!actual || *actual != expectation.value) {
      co_return Error(ErrorCode::kBadDigest,
                      "The " + std::string(storage::ChecksumName(expectation.algorithm)) +
                          " you specified did not match the calculated checksum.");
    }
    header.set(header_name, expectation.value);
  }
  co_return header;
}

}  // namespace strata::gateway
