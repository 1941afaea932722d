// CopyObject: a new object from an existing one's bytes, which the store shares instead
// of copying (storage::ObjectStore::CopyObject); a source another member of the cluster
// owns is streamed from it into a new write (gateway/remote_copy_source.h).
#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/copy_source.h"
#include "gateway/handlers/object_io.h"
#include "gateway/remote_copy_source.h"
#include "gateway/xml.h"

namespace strata::gateway {

HandlerResult CopyObject(RequestContext& ctx) {
  std::string_view directive = ctx.Header("x-amz-metadata-directive");
  if (!directive.empty() && directive != "COPY" && directive != "REPLACE") {
    co_return Error(ErrorCode::kInvalidArgument, "Unknown metadata directive.");
  }
  std::string_view tagging = ctx.Header("x-amz-tagging-directive");
  if (!tagging.empty() && tagging != "COPY" && tagging != "REPLACE") {
    co_return Error(ErrorCode::kInvalidArgument, "Unknown tagging directive.");
  }
  const bool replace = directive == "REPLACE";
  STRATA_CO_TRY(auto source, co_await ResolveCopySource(ctx));
  if (source.size > kMaxSinglePut) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "The specified copy source is larger than the maximum allowable size for a "
                    "copy source: 5368709120");
  }

  // The request's description: the new metadata with REPLACE, the new tags with
  // tagging REPLACE, and in any case the storage class (S3 does not carry the source's
  // class over).
  metadata::ObjectRecord requested;
  STRATA_CO_RETURN_IF_ERROR(DescribeFromHeaders(ctx, requested));
  STRATA_CO_RETURN_IF_ERROR(co_await DescribeAccess(ctx, requested));
  metadata::ObjectRecord record = replace ? requested : source;
  // Who owns the copy and its lock come from the request, never from the source.
  record.owner = requested.owner;
  record.acl = requested.acl;
  record.retention_mode = requested.retention_mode;
  record.retain_until_ms = requested.retain_until_ms;
  record.legal_hold = requested.legal_hold;
  record.bucket = BucketName(ctx.target.bucket);
  record.key = ObjectKey(ctx.target.key);
  record.storage_class = requested.storage_class;
  // x-amz-tagging-directive: the source's tags (COPY, the default) or x-amz-tagging's.
  record.tags = tagging == "REPLACE" ? requested.tags : source.tags;

  const bool onto_itself = source.bucket == record.bucket && source.key == record.key;
  if (onto_itself && !replace && record.storage_class == source.storage_class) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "This copy request is illegal because it is trying to copy an object to "
                    "itself without changing the object's metadata, storage class, website "
                    "redirect location or encryption attributes.");
  }

  auto& store = ctx.services.store;
  metadata::ObjectRecord copied;
  if (auto owner = RemoteSourceOwner(ctx)) {
    // The bytes stream from the source's owner; the checksums the source has are computed
    // again over them, as S3 keeps the source's algorithm on a copy.
    STRATA_CO_TRY(auto write, store.BeginWrite(record.bucket, ChecksumAlgorithmsOf(source)));
    STRATA_CO_RETURN_IF_ERROR(
        co_await CopyRemoteBytes(ctx, *owner, source, 0, source.size, *write));
    STRATA_CO_TRY(copied, co_await Offload(ctx.services.blocking_pool, [&] {
                    return store.CommitWrite(std::move(write), std::move(record));
                  }));
  } else {
    STRATA_CO_TRY(copied, co_await Offload(ctx.services.blocking_pool, [&] {
                    return store.CopyObject(source, std::move(record));
                  }));
  }
  ResponseHeader header;
  SetVersionHeader(ctx, copied.version_id, header);
  if (source.version_id.str() != "null") {
    header.set("x-amz-copy-source-version-id", source.version_id.str());
  }
  XmlWriter xml("CopyObjectResult");
  xml.Element("LastModified", FormatIso8601(copied.last_modified_ms))
      .Element("ETag", "\"" + copied.etag + "\"");
  for (const auto& [name, value] : copied.checksums) {
    xml.Element("Checksum" + name, value);
  }
  if (!copied.checksums.empty()) {
    xml.Element("ChecksumType", copied.checksum_type);
  }
  co_return co_await SendXml(ctx, 200, xml.Finish(), std::move(header));
}

}  // namespace strata::gateway
