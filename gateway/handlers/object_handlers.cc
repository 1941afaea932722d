// Whole-object operations: PutObject, GetObject/HeadObject, DeleteObject.
#include <array>
#include <charconv>
#include <vector>

#include "auth/payload_decoder.h"
#include "gateway/conditions.h"
#include "gateway/error_table.h"
#include "gateway/handlers/context.h"
#include "gateway/http_time.h"
#include "gateway/offload.h"
#include "gateway/xml.h"
#include "storage/checksum.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxKeyBytes = 1024;
constexpr std::size_t kMaxUserMetadataBytes = 2048;
constexpr std::uint64_t kMaxSinglePut = 5ull << 30;
// Network and disk move in blocks of this size: the only per-request data buffer.
constexpr std::size_t kIoBlock = 256 * 1024;
constexpr std::string_view kMetaPrefix = "x-amz-meta-";
constexpr std::array<storage::ChecksumAlgorithm, 5> kAllChecksums = {
    storage::ChecksumAlgorithm::kCrc32, storage::ChecksumAlgorithm::kCrc32c,
    storage::ChecksumAlgorithm::kCrc64Nvme, storage::ChecksumAlgorithm::kSha1,
    storage::ChecksumAlgorithm::kSha256};
// Standard headers S3 stores with an object and returns on GET and HEAD.
constexpr std::array<std::string_view, 5> kStoredHeaders = {
    "cache-control", "content-disposition", "content-encoding", "content-language", "expires"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

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

struct ChecksumExpectation {
  storage::ChecksumAlgorithm algorithm;
  std::string value;  // from the header; empty when it comes in the trailer
  bool in_trailer = false;
};

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

// S3's conditional writes: If-None-Match: * (create only) and If-Match: "<etag>".
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

Result<std::optional<std::string>> ExpectedMd5(const RequestContext& ctx) {
  auto md5 = ctx.Header("content-md5");
  if (md5.empty()) {
    return std::optional<std::string>();
  }
  auto raw = storage::Base64Decode(md5);
  if (!raw || raw->size() != 16) {
    return Error(ErrorCode::kInvalidDigest, "The Content-MD5 you specified is not valid.");
  }
  return std::optional<std::string>(std::string(md5));
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
    std::string sc(storage_class);
    bool known = ctx.services.config.storage_classes.contains(sc) || sc == "HOT" || sc == "WARM" ||
                 sc == "COLD";
    if (!known) {
      return Error(ErrorCode::kInvalidStorageClass, "The storage class you specified is not valid");
    }
    record.storage_class = sc;
  }
  return Ok();
}

}  // namespace

HandlerResult PutObject(RequestContext& ctx) {
  if (ctx.target.key.size() > kMaxKeyBytes) {
    co_return Error(ErrorCode::kKeyTooLong, "Your key is too long");
  }
  bool streaming = ctx.auth.payload == auth::PayloadMode::kStreamingSigned ||
                   ctx.auth.payload == auth::PayloadMode::kStreamingSignedTrailer ||
                   ctx.auth.payload == auth::PayloadMode::kStreamingUnsignedTrailer;
  bool chunked = ctx.Header("transfer-encoding").find("chunked") != std::string_view::npos;
  auto length_field = ctx.Header("content-length");
  if (length_field.empty() && !chunked) {
    co_return Error(ErrorCode::kMissingContentLength,
                    "You must provide the Content-Length HTTP header.");
  }
  std::int64_t expected_size = -1;  // of the object, when known up front
  if (streaming) {
    expected_size = ctx.auth.decoded_content_length;
    if (expected_size < 0 && !chunked) {
      co_return Error(ErrorCode::kMissingContentLength,
                      "You must provide the x-amz-decoded-content-length header.");
    }
  } else if (!length_field.empty()) {
    std::uint64_t v = 0;
    auto [p, ec] =
        std::from_chars(length_field.data(), length_field.data() + length_field.size(), v);
    if (ec != std::errc() || p != length_field.data() + length_field.size()) {
      co_return Error(ErrorCode::kInvalidArgument, "bad Content-Length");
    }
    expected_size = static_cast<std::int64_t>(v);
  }
  if (expected_size > static_cast<std::int64_t>(kMaxSinglePut)) {
    co_return Error(ErrorCode::kEntityTooLarge,
                    "Your proposed upload exceeds the maximum allowed object size.");
  }

  auto condition = WriteConditionFromHeaders(ctx);
  if (!condition.ok()) {
    co_return condition.error();
  }
  auto checksums = DeclaredChecksums(ctx);
  if (!checksums.ok()) {
    co_return checksums.error();
  }
  auto md5 = ExpectedMd5(ctx);
  if (!md5.ok()) {
    co_return md5.error();
  }
  metadata::ObjectRecord record;
  record.bucket = BucketName(ctx.target.bucket);
  record.key = ObjectKey(ctx.target.key);
  auto described = DescribeFromHeaders(ctx, record);
  if (!described.ok()) {
    co_return described.error();
  }

  std::vector<storage::ChecksumAlgorithm> algorithms;
  for (const auto& c : *checksums) {
    algorithms.push_back(c.algorithm);
  }
  auto pending = ctx.services.store.BeginWrite(record.bucket, algorithms);
  if (!pending.ok()) {
    co_return pending.error();
  }
  auto& write = **pending;

  auto decoder = auth::MakePayloadDecoder(ctx.auth);
  std::vector<char> raw(kIoBlock);
  std::string decoded;
  decoded.reserve(kIoBlock);
  for (;;) {
    auto got = co_await ctx.exchange.ReadBody(std::span<char>(raw.data(), raw.size()));
    if (!got.ok()) {
      co_return got.error();
    }
    if (*got == 0) {
      break;
    }
    decoded.clear();
    auto fed = decoder->Feed(std::string_view(raw.data(), *got), decoded);
    if (!fed.ok()) {
      co_return fed.error();
    }
    if (write.size() + decoded.size() > kMaxSinglePut) {
      co_return Error(ErrorCode::kEntityTooLarge,
                      "Your proposed upload exceeds the maximum allowed object size.");
    }
    auto appended = write.Append(decoded);
    if (!appended.ok()) {
      co_return appended.error();
    }
  }
  auto finished = decoder->Finish();
  if (!finished.ok()) {
    co_return finished.error();
  }
  if (expected_size >= 0 && write.size() != static_cast<std::uint64_t>(expected_size)) {
    co_return Error(
        ErrorCode::kIncompleteBody,
        "You did not provide the number of bytes specified by the Content-Length HTTP header");
  }
  if (md5->has_value() && write.Md5Base64() != **md5) {
    co_return Error(ErrorCode::kBadDigest,
                    "The Content-MD5 you specified did not match what we received.");
  }
  ResponseHeader header;
  for (auto& expectation : *checksums) {
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

  auto& store = ctx.services.store;
  auto committed = co_await Offload(ctx.services.blocking_pool, [&] {
    return store.CommitWrite(std::move(*pending), std::move(record), *condition);
  });
  if (!committed.ok()) {
    co_return committed.error();
  }
  header.set(http::field::etag, "\"" + committed->etag + "\"");
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

namespace {

void DescribeToHeaders(const RequestContext& ctx, const metadata::ObjectRecord& record,
                       ResponseHeader& header) {
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
  if (ctx.Header("x-amz-checksum-mode") == "ENABLED") {
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

}  // namespace

HandlerResult GetObject(RequestContext& ctx) {
  auto record =
      ctx.services.store.HeadObject(BucketName(ctx.target.bucket), ObjectKey(ctx.target.key));
  if (!record.ok()) {
    co_return record.error();
  }
  Preconditions conditions{ctx.Header("if-match"), ctx.Header("if-none-match"),
                           ctx.Header("if-modified-since"), ctx.Header("if-unmodified-since")};
  if (auto status = EvaluatePreconditions(conditions, record->etag, record->last_modified_ms)) {
    if (*status == 412) {
      co_return Error(ErrorCode::kPreconditionFailed,
                      "At least one of the pre-conditions you specified did not hold");
    }
    ResponseHeader header;
    header.set(http::field::etag, "\"" + record->etag + "\"");
    header.set(http::field::last_modified, FormatHttpDate(record->last_modified_ms));
    co_return co_await SendEmpty(ctx, 304, std::move(header));
  }
  auto range = ParseRange(ctx.Header("range"), record->size);
  if (!range.ok()) {
    co_return range.error();
  }

  ResponseHeader header;
  DescribeToHeaders(ctx, *record, header);
  std::uint64_t first = 0;
  std::uint64_t length = record->size;
  if (range->has_value()) {
    first = (*range)->first;
    length = (*range)->last - first + 1;
    header.result(http::status::partial_content);
    header.set(http::field::content_range, "bytes " + std::to_string(first) + "-" +
                                               std::to_string((*range)->last) + "/" +
                                               std::to_string(record->size));
  } else {
    header.result(http::status::ok);
  }
  if (ctx.is_head()) {
    co_return co_await ctx.exchange.SendHeader(std::move(header), length);
  }

  auto reader = ctx.services.store.OpenObject(*record);
  if (!reader.ok()) {
    co_return reader.error();
  }
  auto sent = co_await ctx.exchange.SendHeader(std::move(header), length);
  if (!sent.ok()) {
    co_return sent;
  }
  std::vector<char> block(std::min<std::uint64_t>(kIoBlock, std::max<std::uint64_t>(length, 1)));
  std::uint64_t offset = first;
  std::uint64_t end = first + length;
  while (offset < end) {
    std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), end - offset));
    auto n = (*reader)->Read(offset, std::span<char>(block.data(), want));
    if (!n.ok()) {
      co_return n.error();
    }
    if (*n == 0) {
      co_return Error(ErrorCode::kCorruption, "object data is shorter than its record");
    }
    auto wrote = co_await ctx.exchange.SendBody(std::string_view(block.data(), *n));
    if (!wrote.ok()) {
      co_return wrote;
    }
    offset += *n;
  }
  co_return Ok();
}

HandlerResult DeleteObject(RequestContext& ctx) {
  if (ctx.target.key.size() > kMaxKeyBytes) {
    co_return Error(ErrorCode::kKeyTooLong, "Your key is too long");
  }
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  auto exists = ExistingBucket(ctx);
  if (!exists.ok()) {
    co_return exists.error();
  }
  auto& store = ctx.services.store;
  auto deleted =
      co_await Offload(ctx.services.blocking_pool, [&] { return store.DeleteObject(bucket, key); });
  if (!deleted.ok()) {
    co_return deleted.error();
  }
  co_return co_await SendEmpty(ctx, 204);
}

HandlerResult DeleteObjects(RequestContext& ctx) {
  // 1000 keys of up to 1024 bytes, with their XML.
  constexpr std::size_t kMaxDeleteBody = 2 * 1024 * 1024;
  auto body = co_await ReadSmallBody(ctx, kMaxDeleteBody);
  if (!body.ok()) {
    co_return body.error();
  }
  // S3 asks for Content-MD5 or a checksum on this call; whichever came must match.
  auto md5 = ExpectedMd5(ctx);
  if (!md5.ok()) {
    co_return md5.error();
  }
  if (md5->has_value()) {
    storage::Md5 digest;
    digest.Update(*body);
    if (digest.FinalBase64() != **md5) {
      co_return Error(ErrorCode::kBadDigest,
                      "The Content-MD5 you specified did not match what we received.");
    }
  }
  for (auto algorithm : kAllChecksums) {
    auto expected = ctx.Header(storage::ChecksumHeaderName(algorithm));
    if (expected.empty()) {
      continue;
    }
    auto checksummer = storage::MakeChecksummer(algorithm);
    checksummer->Update(*body);
    if (checksummer->FinalBase64() != expected) {
      co_return Error(ErrorCode::kBadDigest,
                      "The " + std::string(storage::ChecksumName(algorithm)) +
                          " you specified did not match the calculated checksum.");
    }
  }
  auto request = ParseDeleteRequest(*body);
  if (!request.ok()) {
    co_return request.error();
  }
  BucketName bucket(ctx.target.bucket);
  auto exists = ExistingBucket(ctx);
  if (!exists.ok()) {
    co_return exists.error();
  }

  struct Outcome {
    const DeleteRequest::Entry* entry;
    Result<void> result;
  };
  auto& store = ctx.services.store;
  // One trip to the blocking pool for the whole batch.
  auto outcomes = co_await Offload(ctx.services.blocking_pool, [&] {
    std::vector<Outcome> out;
    out.reserve(request->objects.size());
    for (const auto& entry : request->objects) {
      if (entry.key.size() > kMaxKeyBytes) {
        out.push_back({&entry, Error(ErrorCode::kKeyTooLong, "Your key is too long")});
      } else if (!entry.version_id.empty() && entry.version_id != "null") {
        out.push_back({&entry, Error(ErrorCode::kNotImplemented,
                                     "Deleting a version other than null is not implemented")});
      } else {
        out.push_back({&entry, store.DeleteObject(bucket, ObjectKey(entry.key))});
      }
    }
    return out;
  });

  XmlWriter xml("DeleteResult");
  for (const auto& outcome : outcomes) {
    if (outcome.result.ok()) {
      if (!request->quiet) {
        xml.Open("Deleted").Element("Key", outcome.entry->key);
        if (!outcome.entry->version_id.empty()) {
          xml.Element("VersionId", outcome.entry->version_id);
        }
        xml.Close();
      }
      continue;
    }
    xml.Open("Error")
        .Element("Key", outcome.entry->key)
        .Element("Code", LookupS3Error(outcome.result.error().code).code)
        .Element("Message", outcome.result.error().message)
        .Close();
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
