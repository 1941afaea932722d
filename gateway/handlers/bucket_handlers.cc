// Service- and bucket-level operations: ListBuckets, CreateBucket, HeadBucket,
// DeleteBucket, GetBucketLocation, ListObjects (v1 and v2).
#include <spdlog/spdlog.h>

#include <charconv>
#include <limits>
#include <map>
#include <set>

#include "auth/payload_decoder.h"
#include "auth/signer.h"
#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/access_xml.h"
#include "gateway/acl.h"
#include "gateway/bucket_access.h"
#include "gateway/cluster_listing.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/identity.h"
#include "gateway/xml.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

// CreateBucketConfiguration is tiny; anything larger is not one.
constexpr std::size_t kMaxBucketConfigBytes = 64 * 1024;
// ListBuckets' page size when a page is asked for (S3's maximum and default).
constexpr std::size_t kMaxBucketsPage = 10000;
// How long DeleteBucket waits for the bucket's waiting changes to reach the upstream.
constexpr auto kDeleteBucketDrain = std::chrono::milliseconds(10'000);

// One page of a listing: the index's, merged with the upstream's in a bound bucket.
boost::asio::awaitable<Result<metadata::ListObjectsPage>> ListPage(RequestContext& ctx,
                                                                   const std::string& prefix,
                                                                   const std::string& cursor,
                                                                   std::size_t want) {
  if (ctx.services.cluster != nullptr) {
    // Every member holds its own keys' records (gateway/cluster_listing.h).
    co_return co_await ListObjectsInCluster(ctx.services, ctx.target.bucket, prefix, cursor, want);
  }
  if (ctx.bucket) {
    co_return co_await ctx.services.engine.ListMerged(*ctx.bucket, prefix, cursor, want);
  }
  auto& index = ctx.services.index;
  const BucketName bucket(ctx.target.bucket);
  co_return co_await metadata::ReadInline(
      ctx.services.blocking_pool, [&] { return index.ListObjects(bucket, prefix, cursor, want); });
}

// S3 in us-east-1 keeps its legacy answer to a CreateBucket of a bucket the caller
// already owns: 200, changing nothing (every other region: 409 BucketAlreadyOwnedByYou).
// Scripts that "ensure" a bucket by creating it rely on it.
bool LegacyRecreateIsOk(const std::string& region) { return region == "us-east-1"; }

HandlerResult SendCreated(RequestContext& ctx) {
  ResponseHeader header;
  header.set(http::field::location, "/" + ctx.target.bucket);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

}  // namespace

HandlerResult ListBuckets(RequestContext& ctx) {
  const auto& t = ctx.target;
  // Paging (max-buckets, continuation-token) and filters (prefix, bucket-region). As in
  // S3, any of them without max-buckets pages by 10000; none lists every bucket.
  const bool paged = t.HasParam("max-buckets") || t.HasParam("continuation-token") ||
                     t.HasParam("prefix") || t.HasParam("bucket-region");
  std::size_t max_buckets = paged ? kMaxBucketsPage : std::numeric_limits<std::size_t>::max();
  if (auto text = t.Param("max-buckets")) {
    std::size_t v = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || p != text->data() + text->size() || v < 1 || v > kMaxBucketsPage) {
      co_return Error(ErrorCode::kInvalidArgument,
                      "Argument max-buckets must be an integer between 1 and 10000");
    }
    max_buckets = v;
  }
  const std::string prefix(t.Param("prefix").value_or(""));
  const std::string token(t.Param("continuation-token").value_or(""));
  const std::string region_filter(t.Param("bucket-region").value_or(""));
  const std::string& server_region = ctx.services.config.server.region;

  auto& store = ctx.services.store;
  STRATA_CO_TRY(auto buckets, co_await metadata::ReadInline(ctx.services.blocking_pool, [&store] {
                  return store.ListBuckets();
                }));
  XmlWriter xml("ListAllMyBucketsResult");
  WriteOwner(xml, "Owner", UserName(ctx.auth.principal));
  // Name -> (creation date, region): the caller's buckets here, and the upstream's (an
  // existing store shows through; its buckets are bound on first use, in this region).
  std::map<std::string, std::pair<std::string, std::string>> listed;
  for (const auto& b : buckets) {
    if (MayAccess(ctx.auth.principal, b)) {
      listed.emplace(b.name.str(), std::pair(FormatIso8601(b.created_ms),
                                             b.region.empty() ? server_region : b.region));
    }
  }
  if (ctx.services.engine.has_upstream()) {
    auto upstream = co_await ctx.services.engine.ListUpstreamBuckets();
    if (upstream.ok()) {
      std::set<std::string> local;
      for (const auto& b : buckets) {
        local.insert(b.name.str());
      }
      for (const auto& b : *upstream) {
        if (!local.contains(b.name)) {
          listed.emplace(b.name, std::pair(b.creation_date, server_region));
        }
      }
    } else {
      // The buckets strata has still answer while the upstream is away.
      spdlog::warn("ListBuckets: the upstream's buckets are left out: {}",
                   upstream.error().message);
    }
  }
  xml.Open("Buckets");
  std::size_t count = 0;
  std::string last_listed;
  std::string next_token;
  for (auto it = listed.upper_bound(token); it != listed.end(); ++it) {
    const auto& [name, about] = *it;
    if (!name.starts_with(prefix)) {
      if (name > prefix) {
        break;  // sorted: no later name has the prefix
      }
      continue;
    }
    if (!region_filter.empty() && about.second != region_filter) {
      continue;
    }
    if (count == max_buckets) {
      next_token = last_listed;
      break;
    }
    ++count;
    last_listed = name;
    xml.Open("Bucket")
        .Element("Name", name)
        .Element("CreationDate", about.first)
        .Element("BucketRegion", about.second)
        .Close();
  }
  xml.Close();
  // The token is where the next page starts: the name of this page's last bucket.
  if (!next_token.empty()) {
    xml.Element("ContinuationToken", next_token);
  }
  if (t.HasParam("prefix")) {
    xml.Element("Prefix", prefix);
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

namespace {

// A new bucket's access settings: x-amz-object-ownership, else the gateway's defaults
// (server.default_object_ownership and default_public_access_block). ObjectWriter, the
// mode of a bucket without ownership controls, is not written down unless asked for, so
// GetBucketOwnershipControls answers OwnershipControlsNotFoundError as for any bucket
// made before they existed.
Result<metadata::BucketAccess> NewBucketAccess(const RequestContext& ctx) {
  const auto& server = ctx.services.config.server;
  metadata::BucketAccess access;
  const std::string_view ownership = ctx.Header("x-amz-object-ownership");
  if (!ownership.empty()) {
    if (!IsObjectOwnership(ownership)) {
      return Error(ErrorCode::kInvalidArgument,
                   "Invalid x-amz-object-ownership header: " + std::string(ownership));
    }
    access.object_ownership = ownership;
  } else if (server.default_object_ownership != "ObjectWriter") {
    access.object_ownership = server.default_object_ownership;
  }
  if (server.default_public_access_block) {
    access.public_access_block = metadata::PublicAccessBlock{true, true, true, true};
  }
  const std::string_view lock = ctx.Header("x-amz-bucket-object-lock-enabled");
  if (!lock.empty()) {
    if (lock != "true" && lock != "True" && lock != "false" && lock != "False") {
      return Error(ErrorCode::kInvalidArgument,
                   "Invalid x-amz-bucket-object-lock-enabled header: " + std::string(lock));
    }
    access.object_lock.enabled = lock == "true" || lock == "True";
  }
  return access;
}

// The new bucket's ACL from x-amz-acl or the grant headers (its owner's private one when
// they name none). With ACLs off (BucketOwnerEnforced) only the private ACL is accepted.
boost::asio::awaitable<Result<void>> NewBucketAcl(RequestContext& ctx, const std::string& owner,
                                                  metadata::BucketAccess& access) {
  const AccessFields headers = RequestHeaders(ctx);
  STRATA_CO_TRY(auto requested, co_await AclFromHeaders(ctx, owner, owner, headers));
  if (!requested) {
    co_return Ok();  // the store gives it its owner's private ACL
  }
  metadata::BucketRecord bucket;
  bucket.owner = owner;
  bucket.access = access;
  if (AclsDisabled(bucket) && !GrantsOnlyTo(requested->acl, owner)) {
    co_return Error(ErrorCode::kInvalidBucketAclWithObjectOwnership,
                    "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced "
                    "setting");
  }
  STRATA_CO_RETURN_IF_ERROR(CheckAclAllowed(bucket, requested->acl));
  access.acl = std::move(requested->acl);
  co_return Ok();
}

}  // namespace

HandlerResult CreateBucket(RequestContext& ctx) {
  STRATA_CO_TRY(auto access, NewBucketAccess(ctx));
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxBucketConfigBytes));
  auto location = body.Parse(ParseCreateBucketConfiguration);
  if (!location.ok()) {
    co_return location.error();
  }
  const std::string& region = ctx.services.config.server.region;
  if (!location->empty() && *location != region) {
    co_return Error(ErrorCode::kIllegalLocationConstraint,
                    "The " + *location +
                        " location constraint is incompatible for the region specific endpoint "
                        "this request was sent to.");
  }
  BucketName name(ctx.target.bucket);
  auto& store = ctx.services.store;
  std::string owner(UserName(ctx.auth.principal));
  STRATA_CO_RETURN_IF_ERROR(co_await NewBucketAcl(ctx, owner, access));
  std::string upstream_tier;
  auto& engine = ctx.services.engine;
  if (engine.has_upstream()) {
    // Upstream first: a bound bucket's objects must have somewhere to go. S3 answers
    // success when strata's credentials already own the bucket there.
    if (!storage::IsValidBucketName(name.view())) {
      co_return Error(ErrorCode::kInvalidBucketName, "The specified bucket is not valid.");
    }
    auto existing = store.GetBucket(name);
    if (existing.ok()) {
      if (existing->owner == owner && LegacyRecreateIsOk(region)) {
        co_return co_await SendCreated(ctx);
      }
      co_return existing->owner == owner
          ? Error(ErrorCode::kBucketAlreadyOwnedByYou,
                  "Your previous request to create the named bucket succeeded and you already "
                  "own it.")
          : Error(ErrorCode::kBucketAlreadyExists, "The requested bucket name is not available.");
    }
    STRATA_CO_RETURN_IF_ERROR(co_await engine.CreateUpstreamBucket(name));
    upstream_tier = engine.upstream_tier();
  }
  auto created = co_await Offload(ctx.services.blocking_pool, [&] {
    return store.CreateBucket(name, owner, *location, upstream_tier, access);
  });
  if (!created.ok()) {
    if (created.error().code == ErrorCode::kBucketAlreadyOwnedByYou && LegacyRecreateIsOk(region)) {
      co_return co_await SendCreated(ctx);
    }
    co_return created.error();
  }
  if (access.object_lock.enabled) {
    // Object lock keeps versions, upstream too (the store made the bucket versioned).
    STRATA_CO_RETURN_IF_ERROR(co_await engine.SetUpstreamVersioning(*created, "Enabled"));
  }
  co_return co_await SendCreated(ctx);
}

HandlerResult HeadBucket(RequestContext& ctx) {
  ResponseHeader header;
  header.set("x-amz-bucket-region", ctx.services.config.server.region);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

HandlerResult DeleteBucket(RequestContext& ctx) {
  BucketName name(ctx.target.bucket);
  auto& store = ctx.services.store;
  auto& engine = ctx.services.engine;
  const bool bound = ctx.bucket && engine.Bound(*ctx.bucket);
  if (bound) {
    STRATA_CO_RETURN_IF_ERROR(
        co_await engine.PrepareUpstreamDelete(*ctx.bucket, kDeleteBucketDrain));
  }
  STRATA_CO_RETURN_IF_ERROR(
      co_await Offload(ctx.services.blocking_pool, [&] { return store.DeleteBucket(name); }));
  if (bound) {
    STRATA_CO_RETURN_IF_ERROR(co_await engine.DeleteUpstreamBucket(*ctx.bucket));
  }
  co_return co_await SendEmpty(ctx, 204);
}

HandlerResult GetBucketLocation(RequestContext& ctx) {
  // S3 answers an empty LocationConstraint for us-east-1.
  std::string region = ctx.bucket->region == "us-east-1" ? "" : ctx.bucket->region;
  XmlWriter xml("LocationConstraint");
  std::string doc = xml.Finish();
  if (!region.empty()) {
    doc.insert(doc.rfind("</LocationConstraint>"), XmlEscape(region));
  }
  co_return co_await SendXml(ctx, 200, std::move(doc));
}

HandlerResult ListObjects(RequestContext& ctx) {
  const auto& t = ctx.target;
  bool v2 = t.Param("list-type") == std::optional<std::string_view>("2");
  std::string prefix(t.Param("prefix").value_or(""));
  std::string delimiter(t.Param("delimiter").value_or(""));
  auto url_encode = UrlEncodingParam(ctx);
  if (!url_encode.ok()) {
    co_return url_encode.error();
  }
  STRATA_CO_TRY(auto max_keys_param, CountParam(ctx, "max-keys", 1000, 1000));
  const std::size_t max_keys = max_keys_param;
  std::string start_after;
  if (v2) {
    if (auto token = t.Param("continuation-token")) {
      start_after = std::string(*token);
    } else {
      start_after = std::string(t.Param("start-after").value_or(""));
    }
  } else {
    start_after = std::string(t.Param("marker").value_or(""));
  }

  STRATA_CO_TRY(auto exists, ExistingBucket(ctx));

  // Walk the index, folding keys that share a delimited prefix into one CommonPrefix.
  std::vector<metadata::ObjectRecord> contents;
  std::vector<std::string> common_prefixes;
  std::string cursor = ResumeAfter(start_after, prefix, delimiter);
  std::string last_returned;
  bool truncated = false;
  while (contents.size() + common_prefixes.size() < max_keys) {
    std::size_t want = max_keys - contents.size() - common_prefixes.size();
    STRATA_CO_TRY(auto page, co_await ListPage(ctx, prefix, cursor, want));
    if (page.objects.empty()) {
      break;
    }
    for (auto& object : page.objects) {
      const std::string& key = object.key.str();
      cursor = key;
      if (contents.size() + common_prefixes.size() >= max_keys) {
        truncated = true;
        break;
      }
      if (!delimiter.empty()) {
        auto pos = key.find(delimiter, prefix.size());
        if (pos != std::string::npos) {
          std::string cp = key.substr(0, pos + delimiter.size());
          if (common_prefixes.empty() || common_prefixes.back() != cp) {
            common_prefixes.push_back(cp);
            last_returned = cp;
          }
          // Skip every other key under this prefix: keys are at most 1024 bytes.
          cursor = cp + std::string(1025, '\xff');
          break;
        }
      }
      last_returned = key;
      contents.push_back(std::move(object));
    }
    if (truncated) {
      break;
    }
    if (!page.truncated && cursor == page.objects.back().key.str()) {
      break;
    }
  }
  // max-keys=0 asks for nothing and, as in S3, is never truncated.
  if (!truncated && max_keys > 0 && contents.size() + common_prefixes.size() >= max_keys) {
    STRATA_CO_TRY(auto more, co_await ListPage(ctx, prefix, cursor, 1));
    truncated = !more.objects.empty();
  }

  *url_encode =
      *url_encode ||
      ListingNeedsUrlEncoding(
          {prefix, delimiter, start_after, last_returned, t.Param("start-after").value_or("")}) ||
      ListingNeedsUrlEncoding(contents, [](const auto& o) { return o.key.view(); }) ||
      ListingNeedsUrlEncoding(common_prefixes, [](const auto& cp) { return std::string_view(cp); });
  auto enc = [&](const std::string& s) { return *url_encode ? auth::UriEncode(s, false) : s; };
  XmlWriter xml("ListBucketResult");
  xml.Element("Name", t.bucket).Element("Prefix", enc(prefix));
  if (v2) {
    if (auto token = t.Param("continuation-token")) {
      xml.Element("ContinuationToken", *token);
    }
    if (auto sa = t.Param("start-after")) {
      xml.Element("StartAfter", enc(std::string(*sa)));
    }
    xml.Element("KeyCount", std::to_string(contents.size() + common_prefixes.size()));
  } else {
    xml.Element("Marker", enc(start_after));
  }
  xml.Element("MaxKeys", std::to_string(max_keys));
  if (!delimiter.empty()) {
    xml.Element("Delimiter", enc(delimiter));
  }
  if (*url_encode) {
    xml.Element("EncodingType", "url");
  }
  xml.Element("IsTruncated", truncated ? "true" : "false");
  if (truncated) {
    if (v2) {
      xml.Element("NextContinuationToken", last_returned);
    } else if (!delimiter.empty()) {
      xml.Element("NextMarker", enc(last_returned));
    }
  }
  bool fetch_owner = !v2 || t.Param("fetch-owner") == std::optional<std::string_view>("true");
  for (const auto& o : contents) {
    xml.Open("Contents")
        .Element("Key", enc(o.key.str()))
        .Element("LastModified", FormatIso8601(o.last_modified_ms))
        .Element("ETag", "\"" + o.etag + "\"")
        .Element("Size", std::to_string(o.size))
        .Element("StorageClass", o.storage_class);
    if (fetch_owner) {
      WriteOwner(xml, "Owner", EffectiveOwner(o, *exists));
    }
    xml.Close();
  }
  for (const auto& cp : common_prefixes) {
    xml.Open("CommonPrefixes").Element("Prefix", enc(cp)).Close();
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
