#include "gateway/handlers/copy_source.h"

#include <charconv>

#include "common/text.h"
#include "common/utf8.h"
#include "gateway/conditions.h"
#include "gateway/handlers/read_through.h"
#include "gateway/remote_copy_source.h"
#include "metadata/read_inline.h"

namespace strata::gateway {
namespace {

Error BadSource() {
  return Error(ErrorCode::kInvalidArgument,
               "Copy Source must mention the source bucket and key: sourcebucket/sourcekey");
}

bool ParseU64(std::string_view text, std::uint64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && p == text.data() + text.size();
}

}  // namespace

Result<CopySourceName> ParseCopySource(std::string_view header) {
  CopySourceName name;
  std::string_view path = header;
  if (auto q = path.find('?'); q != std::string_view::npos) {
    std::string_view query = path.substr(q + 1);
    path = path.substr(0, q);
    if (!query.starts_with("versionId=")) {
      return BadSource();
    }
    name.version_id = std::string(query.substr(10));
    if (name.version_id.empty()) {
      return BadSource();
    }
  }
  if (path.starts_with('/')) {
    path.remove_prefix(1);
  }
  std::string decoded;
  if (!strata::PercentDecode(path, decoded)) {
    return BadSource();
  }
  // Keys are UTF-8 (ParseS3Target refuses others in the path); S3 says this of a copy
  // source whose decoded bytes are not.
  if (!IsValidUtf8(decoded)) {
    return Error(ErrorCode::kInvalidArgument, "Invalid copy source encoding");
  }
  auto slash = decoded.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == decoded.size()) {
    return BadSource();
  }
  name.bucket = decoded.substr(0, slash);
  name.key = decoded.substr(slash + 1);
  return name;
}

AccessRequest CopySourceAccess(const CopySourceName& name) {
  return AccessRequest{
      .action = name.version_id.empty() ? "s3:GetObject" : "s3:GetObjectVersion",
      .key = name.key,
  };
}

Result<metadata::ObjectRecord> ReadCopySource(const RequestContext& ctx) {
  auto name = ParseCopySource(ctx.Header("x-amz-copy-source"));
  if (!name.ok()) {
    return std::move(name).error();
  }
  auto bucket = ctx.services.store.GetBucket(BucketName(name->bucket));
  if (!bucket.ok()) {
    return std::move(bucket).error();
  }
  AccessRequest access = CopySourceAccess(*name);
  auto decided = AuthorizeBucketAccess(ctx, *bucket, access);
  // Without the bucket's leave, only the source version's ACL may still allow the read.
  if (!decided.ok() && !ObjectAclMayAllow(ctx.auth, *bucket, access)) {
    return std::move(decided).error();
  }
  BucketName source_bucket(name->bucket);
  ObjectKey source_key(name->key);
  auto source =
      name->version_id.empty()
          ? ctx.services.store.HeadObject(source_bucket, source_key)
          : ctx.services.store.HeadVersion(source_bucket, source_key, VersionId(name->version_id));
  if (!decided.ok()) {
    if (!source.ok() || source->delete_marker) {
      return std::move(decided).error();  // no ACL to allow it: and no hint what exists
    }
    access.object = &*source;
    STRATA_RETURN_IF_ERROR(AuthorizeBucketAccess(ctx, *bucket, access));
  }
  if (!source.ok()) {
    return std::move(source).error();
  }
  if (auto checked = CheckCopySourceVersion(ctx, *name, *source); !checked.ok()) {
    return std::move(checked).error();
  }
  return source;
}

Result<void> CheckCopySourceVersion(const RequestContext& ctx, const CopySourceName& name,
                                    const metadata::ObjectRecord& source) {
  if (source.delete_marker) {
    // S3: the current version being a marker means no such key; naming a marker's id is
    // a request that cannot be served.
    if (name.version_id.empty()) {
      return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
    }
    return Error(ErrorCode::kInvalidRequest,
                 "The source of a copy request may not specifically refer to a delete marker by "
                 "version id.");
  }
  Preconditions conditions{ctx.Header("x-amz-copy-source-if-match"),
                           ctx.Header("x-amz-copy-source-if-none-match"),
                           ctx.Header("x-amz-copy-source-if-modified-since"),
                           ctx.Header("x-amz-copy-source-if-unmodified-since")};
  // For a copy, every failed condition is 412 (there is nothing to answer 304 to).
  if (EvaluatePreconditions(conditions, source.etag, source.last_modified_ms)) {
    return Error(ErrorCode::kPreconditionFailed,
                 "At least one of the pre-conditions you specified did not hold");
  }
  return Ok();
}

namespace {

// ReadCopySource's index reads, inline when they are in memory (metadata/read_inline.h).
boost::asio::awaitable<Result<metadata::ObjectRecord>> ReadCopySourceInline(RequestContext& ctx) {
  co_return co_await metadata::ReadInline(ctx.services.blocking_pool,
                                          [&ctx] { return ReadCopySource(ctx); });
}

}  // namespace

boost::asio::awaitable<Result<metadata::ObjectRecord>> ResolveCopySource(RequestContext& ctx) {
  if (auto owner = RemoteSourceOwner(ctx)) {
    co_return co_await ReadRemoteSource(ctx, *owner);  // its bytes come with the copy
  }
  auto source = co_await ReadCopySourceInline(ctx);
  auto& engine = ctx.services.engine;
  if (!engine.has_upstream()) {
    co_return source;
  }
  auto name = ParseCopySource(ctx.Header("x-amz-copy-source"));
  if (!name.ok()) {
    co_return source;
  }
  const BucketName bucket_name(name->bucket);
  if (!source.ok() && source.error().code == ErrorCode::kNoSuchBucket) {
    // A bucket only the upstream has: bound now, as any request to it would.
    STRATA_CO_TRY(auto adopted, co_await AdoptUpstreamBucket(ctx, bucket_name));
    if (!adopted.has_value()) {
      co_return source;
    }
    source = co_await ReadCopySourceInline(ctx);
  }
  auto& store = ctx.services.store;
  if (source.ok() && store.HasLocalCopy(*source)) {
    co_return source;
  }
  const bool upstream_only =
      !source.ok() && source.error().code == ErrorCode::kNoSuchKey && name->version_id.empty();
  if (!source.ok() && !upstream_only) {
    co_return source;
  }
  auto bucket = co_await metadata::ReadInline(
      ctx.services.blocking_pool, [&store, &bucket_name] { return store.GetBucket(bucket_name); });
  if (!bucket.ok() || !engine.Bound(*bucket)) {
    co_return source;
  }
  if (source.ok() && engine.RestoreRequired(*bucket, *source)) {
    co_return Error(ErrorCode::kInvalidObjectState,
                    "The source object of the COPY operation is not in the active tier and is "
                    "only stored in Amazon Glacier.");
  }
  std::optional<metadata::ObjectRecord> known;
  if (source.ok()) {
    known = std::move(source).value();
  }
  const ObjectKey key(name->key);
  STRATA_CO_RETURN_IF_ERROR(co_await engine.FetchLocalCopy(*bucket, key, std::move(known)));
  // Read again: the conditions and the delete-marker rules apply to what is there now.
  co_return co_await ReadCopySourceInline(ctx);
}

Result<CopyRange> ParseCopySourceRange(std::string_view header, std::uint64_t size) {
  const Error invalid(
      ErrorCode::kInvalidArgument,
      "Range specified is not valid for source object of size: " + std::to_string(size));
  if (!header.starts_with("bytes=")) {
    return invalid;
  }
  std::string_view spec = header.substr(6);
  auto dash = spec.find('-');
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  if (dash == std::string_view::npos || !ParseU64(spec.substr(0, dash), first) ||
      !ParseU64(spec.substr(dash + 1), last) || first > last || last >= size) {
    return invalid;
  }
  return CopyRange{first, last - first + 1};
}

}  // namespace strata::gateway
