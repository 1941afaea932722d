// Bucket versioning: PutBucketVersioning, GetBucketVersioning, ListObjectVersions.
#include <boost/asio/this_coro.hpp>
#include <charconv>

#include "auth/signer.h"
#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/acl.h"
#include "gateway/cluster_listing.h"
#include "gateway/handlers/context.h"
#include "gateway/identity.h"
#include "gateway/xml.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxVersioningBody = 64 * 1024;

}  // namespace

HandlerResult PutBucketVersioning(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxVersioningBody));
  STRATA_CO_TRY(auto status, body.Parse(ParseVersioningConfiguration));
  STRATA_CO_TRY(auto exists, ExistingBucket(ctx));
  const metadata::BucketRecord& record = *exists;
  if (record.access.object_lock.enabled && status != "Enabled") {
    co_return Error(ErrorCode::kInvalidBucketState,
                    "An Object Lock configuration is present on this bucket, so the versioning "
                    "state cannot be changed.");
  }
  // The upstream first, as CreateBucket does: its version history must follow strata's
  // from the first push after this.
  STRATA_CO_RETURN_IF_ERROR(co_await ctx.services.engine.SetUpstreamVersioning(record, status));
  BucketName bucket(ctx.target.bucket);
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      ctx.services.blocking_pool, [&] { return store.SetBucketVersioning(bucket, status); }));
  co_return co_await SendEmpty(ctx, 200);
}

HandlerResult GetBucketVersioning(RequestContext& ctx) {
  XmlWriter xml("VersioningConfiguration");
  if (!ctx.bucket->versioning.empty()) {
    xml.Element("Status", ctx.bucket->versioning);
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

HandlerResult ListObjectVersions(RequestContext& ctx) {
  const auto& t = ctx.target;
  std::string prefix(t.Param("prefix").value_or(""));
  std::string delimiter(t.Param("delimiter").value_or(""));
  std::string key_marker(t.Param("key-marker").value_or(""));
  std::string version_marker(t.Param("version-id-marker").value_or(""));
  if (!version_marker.empty() && key_marker.empty()) {
    co_return Error(ErrorCode::kInvalidArgument,
                    "A version-id marker cannot be specified without a key marker.");
  }
  auto url_encode = UrlEncodingParam(ctx);
  if (!url_encode.ok()) {
    co_return url_encode.error();
  }
  STRATA_CO_TRY(auto max_keys_param, CountParam(ctx, "max-keys", 1000, 1000));
  const std::size_t max_keys = max_keys_param;
  STRATA_CO_TRY(auto exists, ExistingBucket(ctx));

  // Walk the versions, folding keys that share a delimited prefix into one CommonPrefix.
  std::vector<metadata::VersionEntry> entries;
  std::vector<std::string> common_prefixes;
  std::string cursor_key = ResumeAfter(key_marker, prefix, delimiter);
  std::string cursor_version = cursor_key == key_marker ? version_marker : "";
  bool truncated = false;
  BucketName bucket(t.bucket);
  while (!truncated && max_keys > 0) {
    const std::size_t have = entries.size() + common_prefixes.size();
    metadata::ListVersionsPage page;
    if (ctx.services.cluster != nullptr) {
      // Every member holds its own keys' versions (gateway/cluster_listing.h).
      STRATA_CO_TRY(page, co_await ListVersionsInCluster(ctx.services, t.bucket, prefix, cursor_key,
                                                         cursor_version, max_keys - have + 1));
    } else {
      STRATA_CO_TRY(page, co_await metadata::ReadInline(ctx.services.blocking_pool, [&] {
                      return ctx.services.index.ListVersions(bucket, prefix, cursor_key,
                                                             cursor_version, max_keys - have + 1);
                    }));
    }
    bool skipped = false;
    for (auto& entry : page.versions) {
      const std::string key = entry.record.key.str();
      std::string rolled;
      if (!delimiter.empty()) {
        auto pos = key.find(delimiter, prefix.size());
        if (pos != std::string::npos) {
          rolled = key.substr(0, pos + delimiter.size());
        }
      }
      if (entries.size() + common_prefixes.size() >= max_keys) {
        truncated = true;
        break;
      }
      if (!rolled.empty()) {
        common_prefixes.push_back(rolled);
        // Skip every other version under this prefix: keys are at most 1024 bytes.
        cursor_key = rolled + std::string(1025, '\xff');
        cursor_version.clear();
        skipped = true;
        break;
      }
      cursor_key = key;
      cursor_version = entry.record.version_id.str();
      entries.push_back(std::move(entry));
    }
    if (!skipped && !page.truncated) {
      break;
    }
  }

  *url_encode =
      *url_encode || ListingNeedsUrlEncoding({prefix, delimiter, key_marker}) ||
      ListingNeedsUrlEncoding(entries, [](const auto& e) { return e.record.key.view(); }) ||
      ListingNeedsUrlEncoding(common_prefixes, [](const auto& cp) { return std::string_view(cp); });
  auto enc = [&](const std::string& s) { return *url_encode ? auth::UriEncode(s, false) : s; };
  XmlWriter xml("ListVersionsResult");
  xml.Element("Name", t.bucket)
      .Element("Prefix", enc(prefix))
      .Element("KeyMarker", enc(key_marker))
      .Element("VersionIdMarker", version_marker)
      .Element("MaxKeys", std::to_string(max_keys));
  if (!delimiter.empty()) {
    xml.Element("Delimiter", enc(delimiter));
  }
  if (*url_encode) {
    xml.Element("EncodingType", "url");
  }
  xml.Element("IsTruncated", truncated ? "true" : "false");
  if (truncated) {
    const bool last_is_prefix =
        !common_prefixes.empty() &&
        (entries.empty() || common_prefixes.back() > entries.back().record.key.str());
    if (last_is_prefix) {
      xml.Element("NextKeyMarker", enc(common_prefixes.back()));
    } else {
      xml.Element("NextKeyMarker", enc(entries.back().record.key.str()))
          .Element("NextVersionIdMarker", entries.back().record.version_id.view());
    }
  }
  for (const auto& entry : entries) {
    const auto& r = entry.record;
    xml.Open(r.delete_marker ? "DeleteMarker" : "Version")
        .Element("Key", enc(r.key.str()))
        .Element("VersionId", r.version_id.view())
        .Element("IsLatest", entry.latest ? "true" : "false")
        .Element("LastModified", FormatIso8601(r.last_modified_ms));
    if (!r.delete_marker) {
      xml.Element("ETag", "\"" + r.etag + "\"")
          .Element("Size", std::to_string(r.size))
          .Element("StorageClass", r.storage_class);
    }
    WriteOwner(xml, "Owner", EffectiveOwner(r, *exists));
    xml.Close();
  }
  for (const auto& cp : common_prefixes) {
    xml.Open("CommonPrefixes").Element("Prefix", enc(cp)).Close();
  }
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
