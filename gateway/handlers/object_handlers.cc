// Whole-object operations: PutObject, GetObject/HeadObject, DeleteObject.
#include <array>
#include <charconv>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <vector>

#include "auth/payload_decoder.h"
#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/bucket_access.h"
#include "gateway/conditions.h"
#include "gateway/error_table.h"
#include "gateway/forward.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/lock_request.h"
#include "gateway/handlers/object_io.h"
#include "gateway/handlers/read_through.h"
#include "gateway/xml.h"
#include "gateway/xml_load.h"
#include "storage/checksum.h"
#include "storage/read_cache.h"

namespace strata::gateway {
namespace {

// How often a GET re-reads a record whose data files an overwrite unlinked meanwhile.
constexpr int kOpenAttempts = 8;

// GET/HEAD ?partNumber=N: the bytes of part N of a multipart object; part 1 of any other
// object is all of it.
Result<std::optional<ByteRange>> PartRange(const RequestContext& ctx,
                                           const metadata::ObjectRecord& record) {
  if (!ctx.Header("range").empty()) {
    return Error(ErrorCode::kInvalidRequest,
                 "Cannot specify both Range header and partNumber query parameter");
  }
  auto text = ctx.target.Param("partNumber").value_or("");
  std::uint32_t number = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || p != text.data() + text.size() || number < 1 ||
      number > storage::kMaxPartNumber) {
    return Error(ErrorCode::kInvalidArgument,
                 "Part number must be an integer between 1 and 10000, inclusive");
  }
  const Error beyond(ErrorCode::kInvalidPartNumber, "The requested partnumber is not satisfiable");
  if (record.parts.empty()) {
    if (number != 1) {
      return beyond;
    }
    if (record.size == 0) {
      return std::optional<ByteRange>();
    }
    return std::optional<ByteRange>(ByteRange{0, record.size - 1});
  }
  std::uint64_t offset = 0;
  for (const auto& part : record.parts) {
    if (part.number == number) {
      if (part.size == 0) {
        return std::optional<ByteRange>();
      }
      return std::optional<ByteRange>(ByteRange{offset, offset + part.size - 1});
    }
    offset += part.size;
  }
  return beyond;
}

// Whether the forwarding gateway's cached copy, `tag`, holds the bytes of `record`.
bool ForwarderHolds(std::string_view tag, const metadata::ObjectRecord& record) {
  auto version = storage::ReadCacheVersionOf(record);
  return version && version->tag == tag;
}

}  // namespace

HandlerResult PutObject(RequestContext& ctx) {
  if (HasLockHeaders(ctx)) {
    STRATA_CO_RETURN_IF_ERROR(RequireDigest(ctx));
  }
  STRATA_CO_TRY(auto expect, ExpectBody(ctx, kMaxSinglePut));
  STRATA_CO_TRY(auto condition, WriteConditionFromHeaders(ctx));
  metadata::ObjectRecord record;
  record.bucket = BucketName(ctx.target.bucket);
  record.key = ObjectKey(ctx.target.key);
  STRATA_CO_RETURN_IF_ERROR(DescribeFromHeaders(ctx, record));
  STRATA_CO_RETURN_IF_ERROR(co_await DescribeAccess(ctx, record));
  STRATA_CO_TRY(auto pending, ctx.services.store.BeginWrite(record.bucket, expect.Algorithms()));
  STRATA_CO_TRY(auto received,
                co_await ReceiveBody(ctx, std::move(expect), *pending, kMaxSinglePut));
  ResponseHeader header = std::move(received);

  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto committed, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.CommitWrite(std::move(pending), std::move(record), condition);
                }));
  header.set(http::field::etag, "\"" + committed.etag + "\"");
  SetVersionHeader(ctx, committed.version_id, header);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

HandlerResult GetObject(RequestContext& ctx) {
  auto record = co_await AddressedVersion(ctx);
  // In a bucket bound to an upstream, the upstream holds what the index lacks.
  auto& engine = ctx.services.engine;
  const bool bound = ctx.bucket && engine.Bound(*ctx.bucket);
  const bool current_version = !ctx.target.HasParam("versionId");
  if (bound && current_version && !record.ok() && record.error().code == ErrorCode::kNoSuchKey) {
    co_return co_await ReadThrough(ctx);  // a key only the upstream may have
  }
  if (bound && current_version && record.ok()) {
    STRATA_CO_TRY(auto current, co_await engine.Revalidate(*ctx.bucket, *record));
    if (!current) {
      co_return co_await GetObject(ctx);  // the stale copy is gone: read through again
    }
  }
  if (record.ok() && bound && !record->delete_marker && !ctx.is_head() &&
      !ctx.services.store.HasLocalCopy(*record)) {
    if (engine.RestoreRequired(*ctx.bucket, *record)) {
      co_return Error(ErrorCode::kInvalidObjectState,
                      "The operation is not valid for the object's storage class");
    }
    co_return co_await ReadEvicted(ctx, std::move(*record));  // evicted: the upstream has it
  }
  // A GET forwarded by a gateway whose read cache holds this very version: that gateway
  // sends the bytes, this one only answers (the version is current, the conditions hold).
  const bool forwarder_holds = record.ok() && !ctx.is_head() &&
                               !ctx.exchange.forwarder_cached_tag().empty() &&
                               ForwarderHolds(ctx.exchange.forwarder_cached_tag(), *record);
  std::unique_ptr<storage::ObjectReader> reader;
  // An overwrite or delete may unlink the data files of the version just read before
  // they are opened: read the record again, so a GET racing a PUT gets the old or the
  // new version (as S3 does), never a 404. Open files stay readable whatever happens next.
  for (int attempt = 1; record.ok() && !record->delete_marker && !ctx.is_head() && !forwarder_holds;
       ++attempt) {
    auto opened = ctx.services.store.OpenObject(*record);
    if (opened.ok()) {
      reader = std::move(opened).value();
      engine.OnLocalRead(*record);  // eviction and the prefetcher learn from hits
      break;
    }
    if (opened.error().code != ErrorCode::kNoSuchKey || attempt == kOpenAttempts) {
      co_return opened.error();
    }
    record = co_await AddressedVersion(ctx);
  }
  if (!record.ok()) {
    co_return record.error();
  }
  auto answered = co_await AnswerUnreadable(ctx, *record);
  if (answered) {
    co_return std::move(*answered);
  }
  STRATA_CO_TRY(auto range, ctx.target.HasParam("partNumber")
                                ? PartRange(ctx, *record)
                                : ParseRange(ctx.Header("range"), record->size));

  ResponseHeader header;
  DescribeToHeaders(ctx, *record, !range.has_value(), header);
  SetVersionHeader(ctx, record->version_id, header);
  if (ctx.target.HasParam("partNumber") && !record->parts.empty()) {
    header.set("x-amz-mp-parts-count", std::to_string(record->parts.size()));
  }
  std::uint64_t first = 0;
  std::uint64_t length = record->size;
  if (range.has_value()) {
    first = range->first;
    length = range->last - first + 1;
    header.result(http::status::partial_content);
    header.set(http::field::content_range, "bytes " + std::to_string(first) + "-" +
                                               std::to_string(range->last) + "/" +
                                               std::to_string(record->size));
  } else {
    header.result(http::status::ok);
  }
  if (ctx.is_head()) {
    co_return co_await ctx.exchange.SendHeader(std::move(header), length, std::string_view());
  }
  if (forwarder_holds) {
    engine.OnLocalRead(*record);  // a read all the same: eviction and prefetch learn from it
    co_return co_await ctx.exchange.SendFromForwarderCache(std::move(header), first, length);
  }
  if (ctx.exchange.forwarded() && !range.has_value()) {
    if (auto version = storage::ReadCacheVersionOf(*record)) {
      ctx.exchange.OfferToForwarderCache(*version);
    }
  }
  co_return co_await SendObject(ctx, std::move(header), *reader, first, length);
}

HandlerResult DeleteObject(RequestContext& ctx) {
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  auto version = ctx.target.Param("versionId");
  if (version && version->empty()) {
    co_return Error(ErrorCode::kInvalidArgument, "Version id cannot be the empty string");
  }
  VersionId version_id(version.value_or(""));
  // Only a version removed by id can be held by its lock: a delete marker is always made.
  const bool bypass = version && ctx.bucket && BypassesGovernance(ctx, *ctx.bucket, key.view());
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto deleted, co_await Offload(ctx.services.blocking_pool, [&] {
                  return version ? store.DeleteVersion(bucket, key, version_id, bypass)
                                 : store.DeleteObject(bucket, key);
                }));
  ResponseHeader header;
  if (deleted.delete_marker) {
    header.set("x-amz-delete-marker", "true");
  }
  if (!deleted.version_id.empty()) {
    header.set("x-amz-version-id", deleted.version_id.str());
  }
  co_return co_await SendEmpty(ctx, 204, std::move(header));
}

namespace {

// Which of a DeleteObjects' keys this gateway deletes, and the other members that own the
// rest (their peer addresses).
struct KeyOwners {
  std::vector<bool> here;
  std::set<std::string> elsewhere;
};

KeyOwners OwnersOfKeys(const RequestContext& ctx, const DeleteRequest& request) {
  KeyOwners owners;
  owners.here.assign(request.objects.size(), true);
  if (ctx.services.cluster == nullptr) {
    return owners;
  }
  for (std::size_t i = 0; i < request.objects.size(); ++i) {
    auto owner = ctx.services.cluster->PrimaryOf(ctx.target.bucket, request.objects[i].key);
    if (owner && !owner->self) {
      owners.here[i] = false;
      if (!ctx.exchange.fan_out()) {
        owners.elsewhere.insert(owner->peer);
      }
    }
  }
  return owners;
}

// A member's DeleteResult, its Deleted and Error entries copied into `xml`.
Result<void> AppendDeleteResults(const FanOutAnswer& answer, XmlWriter& xml) {
  pugi::xml_document doc;
  if (answer.status != 200 || !LoadXmlDocument(doc, answer.body).ok()) {
    return Error(ErrorCode::kUnavailable,
                 "a member of the cluster could not delete its keys now, retry",
                 /*retryable=*/true);
  }
  for (const auto& entry : doc.child("DeleteResult").children()) {
    xml.Open(entry.name());
    for (const auto& field : entry.children()) {
      xml.Element(field.name(), field.text().get());
    }
    xml.Close();
  }
  return Ok();
}

}  // namespace

HandlerResult DeleteObjects(RequestContext& ctx) {
  // 1000 keys of up to 1024 bytes, with their XML.
  constexpr std::size_t kMaxDeleteBody = 2 * 1024 * 1024;
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxDeleteBody));
  // S3 asks for Content-MD5 or a checksum on this call; whichever came must match.
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto request, body.Parse(ParseDeleteRequest));
  BucketName bucket(ctx.target.bucket);
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));

  struct Outcome {
    const DeleteRequest::Entry* entry;
    Result<storage::ObjectStore::Deleted> result;
  };
  // In a cluster, each key's owner deletes it: the keys of other members go to them as
  // one fan-out each, whose answers join this one's (a member sent a fan-out answers for
  // its own keys only).
  const KeyOwners owners = OwnersOfKeys(ctx, request);
  // Each key as S3 judges it: s3:DeleteObject, or s3:DeleteObjectVersion by id.
  std::vector<Result<void>> allowed;
  std::vector<bool> bypass;  // GOVERNANCE retention, for a version removed by id
  allowed.reserve(request.objects.size());
  bypass.reserve(request.objects.size());
  for (const auto& entry : request.objects) {
    allowed.push_back(AuthorizeBucketAccess(
        ctx, *ctx.bucket,
        AccessRequest{
            .action = entry.version_id.empty() ? "s3:DeleteObject" : "s3:DeleteObjectVersion",
            .key = entry.key}));
    bypass.push_back(!entry.version_id.empty() && BypassesGovernance(ctx, *ctx.bucket, entry.key));
  }
  auto& store = ctx.services.store;
  // One trip to the blocking pool for the whole batch.
  auto outcomes = co_await Offload(ctx.services.blocking_pool, [&] {
    std::vector<Outcome> out;
    out.reserve(request.objects.size());
    for (std::size_t i = 0; i < request.objects.size(); ++i) {
      const auto& entry = request.objects[i];
      if (!owners.here[i]) {
        continue;
      } else if (!allowed[i].ok()) {
        out.push_back({&entry, allowed[i].error()});
      } else if (entry.key.size() > kMaxKeyBytes) {
        out.push_back({&entry, Error(ErrorCode::kKeyTooLong, "Your key is too long")});
      } else if (!entry.version_id.empty()) {
        out.push_back({&entry, store.DeleteVersion(bucket, ObjectKey(entry.key),
                                                   VersionId(entry.version_id), bypass[i])});
      } else {
        out.push_back({&entry, store.DeleteObject(bucket, ObjectKey(entry.key))});
      }
    }
    return out;
  });

  if (ctx.services.replication != nullptr) {
    // Each key deleted here, as its primary, is on its other owners before the answer.
    for (auto& outcome : outcomes) {
      if (!outcome.result.ok()) {
        continue;
      }
      auto synced = co_await ctx.services.replication->SyncKey(
          bucket, ObjectKey(outcome.entry->key), /*newest_is_new=*/false);
      if (!synced.ok()) {
        outcome.result = std::move(synced).error();
      }
    }
  }
  XmlWriter xml("DeleteResult");
  for (const auto& outcome : outcomes) {
    if (outcome.result.ok()) {
      if (!request.quiet) {
        const auto& deleted = *outcome.result;
        xml.Open("Deleted").Element("Key", outcome.entry->key);
        if (!outcome.entry->version_id.empty()) {
          xml.Element("VersionId", outcome.entry->version_id);
        }
        if (deleted.delete_marker) {
          xml.Element("DeleteMarker", "true");
          if (outcome.entry->version_id.empty()) {
            xml.Element("DeleteMarkerVersionId", deleted.version_id.view());
          }
        }
        xml.Close();
      }
      continue;
    }
    xml.Open("Error").Element("Key", outcome.entry->key);
    if (!outcome.entry->version_id.empty()) {
      xml.Element("VersionId", outcome.entry->version_id);
    }
    xml.Element("Code", LookupS3Error(outcome.result.error().code).code)
        .Element("Message", outcome.result.error().message)
        .Close();
  }
  for (const auto& peer : owners.elsewhere) {
    STRATA_CO_TRY(auto answer, co_await FanOut(ctx, peer, body.text));
    STRATA_CO_RETURN_IF_ERROR(AppendDeleteResults(answer, xml));
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
