// Multipart uploads: Create, UploadPart, UploadPartCopy, Complete, Abort, ListParts,
// ListMultipartUploads.
#include <charconv>

#include "auth/signer.h"
#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/cluster_listing.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/copy_source.h"
#include "gateway/handlers/object_io.h"
#include "gateway/identity.h"
#include "gateway/remote_copy_source.h"
#include "gateway/xml.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

// 10000 parts with their checksums and XML.
constexpr std::size_t kMaxCompleteBody = 4 * 1024 * 1024;

Result<std::uint32_t> PartNumberParam(const RequestContext& ctx) {
  auto text = ctx.target.Param("partNumber").value_or("");
  std::uint32_t number = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || p != text.data() + text.size() || number < 1 ||
      number > storage::kMaxPartNumber) {
    return Error(ErrorCode::kInvalidArgument,
                 "Part number must be an integer between 1 and 10000, inclusive");
  }
  return number;
}

// The upload the request's uploadId names, for its bucket and key (kNoSuchUpload).
Result<metadata::UploadRecord> AddressedUpload(const RequestContext& ctx) {
  auto bucket = ExistingBucket(ctx);
  if (!bucket.ok()) {
    return std::move(bucket).error();
  }
  return ctx.services.store.GetUpload(BucketName(ctx.target.bucket), ObjectKey(ctx.target.key),
                                      UploadId(ctx.target.Param("uploadId").value_or("")));
}

// <ChecksumCRC32>... for the checksum of `algorithm` among `sums`; nothing for "".
void ChecksumElement(XmlWriter& xml, const std::vector<std::pair<std::string, std::string>>& sums,
                     const std::string& algorithm) {
  for (const auto& [name, value] : sums) {
    if (name == algorithm) {
      xml.Element("Checksum" + name, value);
    }
  }
}

void SetChecksumHeaders(ResponseHeader& header, const std::string& algorithm,
                        const std::vector<std::pair<std::string, std::string>>& sums) {
  for (const auto& [name, value] : sums) {
    if (name == algorithm) {
      header.set(storage::ChecksumHeaderName(*storage::ParseChecksumAlgorithm(name)), value);
    }
  }
}

// In a cluster, the upload's change reaches its key's other owners before the answer
// (storage/replication.h's SyncUpload), so the key's next primary can go on with it.
asio::awaitable<Result<void>> ReplicateUpload(RequestContext& ctx, storage::UploadChange change) {
  if (ctx.services.replication == nullptr) {
    co_return Ok();
  }
  co_return co_await ctx.services.replication->SyncUpload(std::move(change));
}

}  // namespace

HandlerResult CreateMultipartUpload(RequestContext& ctx) {
  metadata::UploadRecord upload;
  upload.owner = UserName(ctx.auth.principal);
  upload.object.bucket = BucketName(ctx.target.bucket);
  upload.object.key = ObjectKey(ctx.target.key);
  STRATA_CO_RETURN_IF_ERROR(DescribeFromHeaders(ctx, upload.object));
  STRATA_CO_RETURN_IF_ERROR(co_await DescribeAccess(ctx, upload.object));
  std::string algorithm(ctx.Header("x-amz-checksum-algorithm"));
  if (!algorithm.empty()) {
    auto parsed = storage::ParseChecksumAlgorithm(algorithm);
    if (!parsed) {
      co_return Error(ErrorCode::kInvalidRequest, "Checksum algorithm provided is unsupported.");
    }
    algorithm = std::string(storage::ChecksumName(*parsed));
  }
  STRATA_CO_TRY(auto type, storage::ResolveChecksumType(
                               algorithm, std::string(ctx.Header("x-amz-checksum-type"))));
  upload.checksum_algorithm = algorithm;
  upload.checksum_type = type;

  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto created, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.CreateUpload(std::move(upload));
                }));
  storage::UploadChange change{created};
  STRATA_CO_RETURN_IF_ERROR(co_await ReplicateUpload(ctx, std::move(change)));
  ResponseHeader header;
  if (!created.checksum_algorithm.empty()) {
    header.set("x-amz-checksum-algorithm", created.checksum_algorithm);
    header.set("x-amz-checksum-type", created.checksum_type);
  }
  XmlWriter xml("InitiateMultipartUploadResult");
  xml.Element("Bucket", ctx.target.bucket)
      .Element("Key", ctx.target.key)
      .Element("UploadId", created.upload_id.view());
  co_return co_await SendXml(ctx, 200, xml.Finish(), std::move(header));
}

HandlerResult UploadPart(RequestContext& ctx) {
  STRATA_CO_TRY(auto number, PartNumberParam(ctx));
  STRATA_CO_TRY(auto expect, ExpectBody(ctx, storage::kMaxPartSize));
  STRATA_CO_TRY(auto upload, AddressedUpload(ctx));
  // The upload's algorithm is computed for every part, declared or not, so completion
  // can combine it.
  auto algorithms = expect.Algorithms();
  if (auto algorithm = storage::ParseChecksumAlgorithm(upload.checksum_algorithm)) {
    algorithms.push_back(*algorithm);
  }
  STRATA_CO_TRY(auto pending, ctx.services.store.BeginWrite(upload.object.bucket, algorithms));
  STRATA_CO_TRY(auto received,
                co_await ReceiveBody(ctx, std::move(expect), *pending, storage::kMaxPartSize));
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto part, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.CommitPart(std::move(pending), upload, number);
                }));
  storage::UploadChange change{upload, part};
  STRATA_CO_RETURN_IF_ERROR(co_await ReplicateUpload(ctx, std::move(change)));
  ResponseHeader header = std::move(received);
  header.set(http::field::etag, "\"" + part.etag + "\"");
  SetChecksumHeaders(header, upload.checksum_algorithm, part.checksums);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

HandlerResult UploadPartCopy(RequestContext& ctx) {
  STRATA_CO_TRY(auto number, PartNumberParam(ctx));
  STRATA_CO_TRY(auto upload, AddressedUpload(ctx));
  STRATA_CO_TRY(auto source, co_await ResolveCopySource(ctx));
  CopyRange range{0, source.size};
  if (auto header = ctx.Header("x-amz-copy-source-range"); !header.empty()) {
    STRATA_CO_TRY(auto parsed, ParseCopySourceRange(header, source.size));
    range = parsed;
  }
  if (range.length > storage::kMaxPartSize) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "The specified copy source is larger than the maximum allowable size for a "
                    "copy source: 5368709120");
  }
  auto& store = ctx.services.store;
  metadata::PartRecord part;
  if (auto owner = RemoteSourceOwner(ctx)) {
    // The range streams from the source's owner into a part written here.
    std::vector<storage::ChecksumAlgorithm> algorithms;
    if (auto algorithm = storage::ParseChecksumAlgorithm(upload.checksum_algorithm)) {
      algorithms.push_back(*algorithm);
    }
    STRATA_CO_TRY(auto write, store.BeginWrite(upload.object.bucket, algorithms));
    STRATA_CO_RETURN_IF_ERROR(
        co_await CopyRemoteBytes(ctx, *owner, source, range.first, range.length, *write));
    STRATA_CO_TRY(part, co_await Offload(ctx.services.blocking_pool, [&] {
                    return store.CommitPart(std::move(write), upload, number);
                  }));
  } else {
    STRATA_CO_TRY(part, co_await Offload(ctx.services.blocking_pool, [&] {
                    return store.CopyPart(source, range.first, range.length, upload, number);
                  }));
  }
  storage::UploadChange change{upload, part};
  STRATA_CO_RETURN_IF_ERROR(co_await ReplicateUpload(ctx, std::move(change)));
  XmlWriter xml("CopyPartResult");
  xml.Element("LastModified", FormatIso8601(part.last_modified_ms))
      .Element("ETag", "\"" + part.etag + "\"");
  ChecksumElement(xml, part.checksums, upload.checksum_algorithm);
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

HandlerResult CompleteMultipartUpload(RequestContext& ctx) {
  Result<std::vector<storage::CompletedPart>> parts = std::vector<storage::CompletedPart>();
  {
    STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxCompleteBody));
    parts = body.Parse(ParseCompleteMultipartUpload);
  }  // the body and its share of the XML budget go before the completion's disk work
  if (!parts.ok()) {
    co_return parts.error();
  }
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));
  STRATA_CO_TRY(auto condition, WriteConditionFromHeaders(ctx));
  storage::CompletionRequest request;
  request.parts = std::move(*parts);
  request.condition = std::move(condition);
  for (auto algorithm : kAllChecksums) {
    auto value = ctx.Header(storage::ChecksumHeaderName(algorithm));
    if (!value.empty()) {
      request.object_checksum.emplace(algorithm, std::string(value));
    }
  }
  if (auto size = ctx.Header("x-amz-mp-object-size"); !size.empty()) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), v);
    if (ec != std::errc() || p != size.data() + size.size()) {
      co_return Error(ErrorCode::kInvalidArgument, "Invalid x-amz-mp-object-size header");
    }
    request.object_size = v;
  }
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  UploadId upload_id(ctx.target.Param("uploadId").value_or(""));
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto object, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.CompleteUpload(bucket, key, upload_id, request);
                }));
  XmlWriter xml("CompleteMultipartUploadResult");
  xml.Element("Location", "/" + ctx.target.bucket + "/" + ctx.target.key)
      .Element("Bucket", ctx.target.bucket)
      .Element("Key", ctx.target.key)
      .Element("ETag", "\"" + object.etag + "\"");
  for (const auto& [name, value] : object.checksums) {
    xml.Element("Checksum" + name, value);
  }
  xml.Element("ChecksumType", object.checksum_type);
  ResponseHeader header;
  SetVersionHeader(ctx, object.version_id, header);
  co_return co_await SendXml(ctx, 200, xml.Finish(), std::move(header));
}

HandlerResult AbortMultipartUpload(RequestContext& ctx) {
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  UploadId upload_id(ctx.target.Param("uploadId").value_or(""));
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      ctx.services.blocking_pool, [&] { return store.AbortUpload(bucket, key, upload_id); }));
  storage::UploadChange change;
  change.upload.object.bucket = bucket;
  change.upload.object.key = key;
  change.upload.upload_id = upload_id;
  change.gone = true;
  STRATA_CO_RETURN_IF_ERROR(co_await ReplicateUpload(ctx, std::move(change)));
  co_return co_await SendEmpty(ctx, 204);
}

HandlerResult ListParts(RequestContext& ctx) {
  STRATA_CO_TRY(auto max_parts, CountParam(ctx, "max-parts", 1000, 1000));
  STRATA_CO_TRY(auto marker, CountParam(ctx, "part-number-marker", 0, storage::kMaxPartNumber));
  auto& store = ctx.services.store;
  auto& pool = ctx.services.blocking_pool;
  STRATA_CO_TRY(auto upload,
                co_await metadata::ReadInline(pool, [&] { return AddressedUpload(ctx); }));
  STRATA_CO_TRY(auto page, co_await metadata::ReadInline(pool, [&] {
                  return store.ListParts(upload, static_cast<std::uint32_t>(marker), max_parts);
                }));
  XmlWriter xml("ListPartsResult");
  xml.Element("Bucket", ctx.target.bucket)
      .Element("Key", ctx.target.key)
      .Element("UploadId", upload.upload_id.view());
  WriteOwner(xml, "Initiator", upload.owner);
  WriteOwner(xml, "Owner", upload.owner);
  xml.Element("StorageClass", upload.object.storage_class)
      .Element("PartNumberMarker", std::to_string(marker));
  if (!page.parts.empty()) {
    xml.Element("NextPartNumberMarker", std::to_string(page.parts.back().number));
  }
  xml.Element("MaxParts", std::to_string(max_parts))
      .Element("IsTruncated", page.truncated ? "true" : "false");
  if (!upload.checksum_algorithm.empty()) {
    xml.Element("ChecksumAlgorithm", upload.checksum_algorithm)
        .Element("ChecksumType", upload.checksum_type);
  }
  for (const auto& part : page.parts) {
    xml.Open("Part")
        .Element("PartNumber", std::to_string(part.number))
        .Element("LastModified", FormatIso8601(part.last_modified_ms))
        .Element("ETag", "\"" + part.etag + "\"")
        .Element("Size", std::to_string(part.size));
    ChecksumElement(xml, part.checksums, upload.checksum_algorithm);
    xml.Close();
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

HandlerResult ListMultipartUploads(RequestContext& ctx) {
  const auto& t = ctx.target;
  std::string prefix(t.Param("prefix").value_or(""));
  std::string delimiter(t.Param("delimiter").value_or(""));
  std::string key_marker(t.Param("key-marker").value_or(""));
  std::string upload_id_marker(key_marker.empty() ? "" : t.Param("upload-id-marker").value_or(""));
  auto url_encode = UrlEncodingParam(ctx);
  if (!url_encode.ok()) {
    co_return url_encode.error();
  }
  STRATA_CO_TRY(auto max_uploads, CountParam(ctx, "max-uploads", 1000, 1000));
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));

  // Walk the uploads, folding keys that share a delimited prefix into one CommonPrefix.
  std::vector<metadata::UploadRecord> uploads;
  std::vector<std::string> common_prefixes;
  std::string cursor_key = ResumeAfter(key_marker, prefix, delimiter);
  std::string cursor_id = cursor_key == key_marker ? upload_id_marker : "";
  bool truncated = false;
  BucketName bucket(t.bucket);
  // max-uploads=0 asks for nothing and, as in S3, is never truncated.
  while (!truncated && max_uploads > 0) {
    const std::size_t have = uploads.size() + common_prefixes.size();
    const std::size_t want = std::max<std::size_t>(max_uploads - have, 1);
    metadata::ListUploadsPage page;
    if (ctx.services.cluster != nullptr) {
      // Every member holds its own keys' uploads (gateway/cluster_listing.h).
      STRATA_CO_TRY(page, co_await ListUploadsInCluster(ctx.services, t.bucket, prefix, cursor_key,
                                                        cursor_id, want));
    } else {
      STRATA_CO_TRY(page, co_await metadata::ReadInline(ctx.services.blocking_pool, [&] {
                      return ctx.services.store.ListUploads(bucket, prefix, cursor_key, cursor_id,
                                                            want);
                    }));
    }
    if (page.uploads.empty()) {
      break;
    }
    bool skipped = false;
    for (auto& upload : page.uploads) {
      const std::string& key = upload.object.key.str();
      std::string rolled;
      if (!delimiter.empty()) {
        auto pos = key.find(delimiter, prefix.size());
        if (pos != std::string::npos) {
          rolled = key.substr(0, pos + delimiter.size());
        }
      }
      if (uploads.size() + common_prefixes.size() >= max_uploads) {
        truncated = true;
        break;
      }
      if (!rolled.empty()) {
        common_prefixes.push_back(rolled);
        // Skip every other upload under this prefix: keys are at most 1024 bytes.
        cursor_key = rolled + std::string(1025, '\xff');
        cursor_id.clear();
        skipped = true;
        break;
      }
      cursor_key = key;
      cursor_id = upload.upload_id.str();
      uploads.push_back(std::move(upload));
    }
    if (!skipped && !page.truncated) {
      break;
    }
  }
  if (!truncated && uploads.size() + common_prefixes.size() >= max_uploads && max_uploads > 0) {
    metadata::ListUploadsPage more;
    if (ctx.services.cluster != nullptr) {
      STRATA_CO_TRY(more, co_await ListUploadsInCluster(ctx.services, t.bucket, prefix, cursor_key,
                                                        cursor_id, 1));
    } else {
      STRATA_CO_TRY(more, co_await metadata::ReadInline(ctx.services.blocking_pool, [&] {
                      return ctx.services.store.ListUploads(bucket, prefix, cursor_key, cursor_id,
                                                            1);
                    }));
    }
    truncated = !more.uploads.empty();
  }

  *url_encode =
      *url_encode || ListingNeedsUrlEncoding({prefix, delimiter, key_marker}) ||
      ListingNeedsUrlEncoding(uploads, [](const auto& u) { return u.object.key.view(); }) ||
      ListingNeedsUrlEncoding(common_prefixes, [](const auto& cp) { return std::string_view(cp); });
  auto enc = [&](const std::string& s) { return *url_encode ? auth::UriEncode(s, false) : s; };
  XmlWriter xml("ListMultipartUploadsResult");
  xml.Element("Bucket", t.bucket)
      .Element("KeyMarker", enc(key_marker))
      .Element("UploadIdMarker", upload_id_marker);
  if (truncated) {
    const bool last_is_prefix =
        !common_prefixes.empty() &&
        (uploads.empty() || common_prefixes.back() > uploads.back().object.key.str());
    xml.Element("NextKeyMarker",
                enc(last_is_prefix ? common_prefixes.back() : uploads.back().object.key.str()))
        .Element("NextUploadIdMarker", last_is_prefix ? "" : uploads.back().upload_id.str());
  }
  if (!delimiter.empty()) {
    xml.Element("Delimiter", enc(delimiter));
  }
  xml.Element("Prefix", enc(prefix)).Element("MaxUploads", std::to_string(max_uploads));
  if (*url_encode) {
    xml.Element("EncodingType", "url");
  }
  xml.Element("IsTruncated", truncated ? "true" : "false");
  for (const auto& upload : uploads) {
    xml.Open("Upload")
        .Element("Key", enc(upload.object.key.str()))
        .Element("UploadId", upload.upload_id.view());
    WriteOwner(xml, "Initiator", upload.owner);
    WriteOwner(xml, "Owner", upload.owner);
    xml.Element("StorageClass", upload.object.storage_class)
        .Element("Initiated", FormatIso8601(upload.initiated_ms));
    if (!upload.checksum_algorithm.empty()) {
      xml.Element("ChecksumAlgorithm", upload.checksum_algorithm)
          .Element("ChecksumType", upload.checksum_type);
    }
    xml.Close();
  }
  for (const auto& cp : common_prefixes) {
    xml.Open("CommonPrefixes").Element("Prefix", enc(cp)).Close();
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
