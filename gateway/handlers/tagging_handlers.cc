// Tagging: Put/Get/DeleteObjectTagging (?tagging on an object, with versionId) and
// Put/Get/DeleteBucketTagging (?tagging on a bucket). Tags live in the object version's
// and the bucket's records; changing an object's tags rewrites its record in place
// (storage::ObjectStore::SetObjectTags): no new version, same ETag and Last-Modified.
#include <optional>

#include "common/offload.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/tags.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

// Ten tags of at most 128 + 256 characters (4 bytes each in UTF-8) with their XML fit in
// a few tens of KiB; fifty in a few hundred.
constexpr std::size_t kMaxObjectTaggingBody = 64 * 1024;
constexpr std::size_t kMaxBucketTaggingBody = 256 * 1024;

// ?versionId when present (kInvalidArgument when empty).
Result<std::optional<VersionId>> VersionParam(const RequestContext& ctx) {
  auto version = ctx.target.Param("versionId");
  if (!version) {
    return std::optional<VersionId>();
  }
  if (version->empty()) {
    return Error(ErrorCode::kInvalidArgument, "Version id cannot be the empty string");
  }
  return std::optional<VersionId>(VersionId(*version));
}

// A tagging request body: read, checked against its digests, parsed and validated.
boost::asio::awaitable<Result<metadata::Tags>> ReadTagging(RequestContext& ctx, std::size_t limit,
                                                           TagOwner owner) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, limit));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto tags, body.Parse(ParseTagging));
  STRATA_CO_RETURN_IF_ERROR(ValidateTags(tags, owner));
  co_return std::move(tags);
}

std::string TaggingXml(const metadata::Tags& tags) {
  XmlWriter xml("Tagging");
  xml.Open("TagSet");
  for (const auto& [key, value] : tags) {
    xml.Open("Tag").Element("Key", key).Element("Value", value).Close();
  }
  return xml.Finish();
}

// Replaces the addressed version's tags and answers `status` with its version id.
HandlerResult SetTags(RequestContext& ctx, const metadata::Tags& tags, unsigned status) {
  STRATA_CO_TRY(auto version, VersionParam(ctx));
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));
  BucketName bucket(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto updated, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.SetObjectTags(bucket, key, version, tags);
                }));
  ResponseHeader header;
  SetVersionHeader(ctx, updated.version_id, header);
  co_return co_await SendEmpty(ctx, status, std::move(header));
}

}  // namespace

HandlerResult PutObjectTagging(RequestContext& ctx) {
  STRATA_CO_TRY(auto tags, co_await ReadTagging(ctx, kMaxObjectTaggingBody, TagOwner::kObject));
  co_return co_await SetTags(ctx, tags, 200);
}

HandlerResult DeleteObjectTagging(RequestContext& ctx) {
  const metadata::Tags none;
  co_return co_await SetTags(ctx, none, 204);
}

HandlerResult GetObjectTagging(RequestContext& ctx) {
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  if (record.delete_marker) {  // S3: a delete marker has no tags or ACL to show
    co_return co_await SendMarkerNotAllowed(ctx, record);
  }
  ResponseHeader header;
  SetVersionHeader(ctx, record.version_id, header);
  co_return co_await SendXml(ctx, 200, TaggingXml(record.tags), std::move(header));
}

HandlerResult PutBucketTagging(RequestContext& ctx) {
  STRATA_CO_TRY(auto tags, co_await ReadTagging(ctx, kMaxBucketTaggingBody, TagOwner::kBucket));
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));
  BucketName bucket(ctx.target.bucket);
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(ctx.services.blocking_pool,
                                             [&] { return store.SetBucketTags(bucket, tags); }));
  co_return co_await SendEmpty(ctx, 204);
}

HandlerResult GetBucketTagging(RequestContext& ctx) {
  if (ctx.bucket->tags.empty()) {
    co_return Error(ErrorCode::kNoSuchTagSet, "The TagSet does not exist");
  }
  co_return co_await SendXml(ctx, 200, TaggingXml(ctx.bucket->tags));
}

HandlerResult DeleteBucketTagging(RequestContext& ctx) {
  BucketName bucket(ctx.target.bucket);
  auto& store = ctx.services.store;
  const metadata::Tags none;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(ctx.services.blocking_pool,
                                             [&] { return store.SetBucketTags(bucket, none); }));
  co_return co_await SendEmpty(ctx, 204);
}

}  // namespace strata::gateway
