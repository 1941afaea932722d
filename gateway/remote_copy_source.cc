#include "gateway/remote_copy_source.h"

#include <spdlog/spdlog.h>

#include <span>

#include "common/co_try.h"
#include "common/offload.h"
#include "gateway/copy_source_wire.h"
#include "gateway/forward.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/copy_source.h"
#include "metadata/codec.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;

// The owner's S3 errors (NoSuchKey, NoSuchVersion, PreconditionFailed, ...) reach the
// client as they are; a broken call is a retryable 503, a broken protocol a 500.
Error SourceError(const Error& error) {
  if (error.retryable) {
    return Error(ErrorCode::kUnavailable, "the copy source's owner cannot be reached now, retry",
                 /*retryable=*/true);
  }
  if (error.code == ErrorCode::kCorruption || error.code == ErrorCode::kAccessDenied) {
    spdlog::warn("reading a copy source from its owner failed: {}", error.message);
    return Error(ErrorCode::kInternal, "the copy source's owner could not serve it");
  }
  return error;
}

// Opens a kPeerOpReadVersion call for `request` and reads the owner's record.
struct OpenedSource {
  std::unique_ptr<HeldPeerCall> call;
  metadata::ObjectRecord record;
};
asio::awaitable<Result<OpenedSource>> OpenSource(RequestContext& ctx,
                                                 const storage::KeyOwner& owner,
                                                 const ReadVersionRequest& wanted) {
  storage::Cluster& cluster = *ctx.services.cluster;
  const auto executor = cluster.executor();
  storage::PeerRequest request;
  request.op = storage::kPeerOpReadVersion;
  request.payload = EncodeReadVersion(wanted);
  auto opened = co_await RunOn(executor, cluster.Call(owner.peer, request));
  if (!opened.ok()) {
    co_return SourceError(opened.error());
  }
  OpenedSource source;
  source.call = std::make_unique<HeldPeerCall>(executor, std::move(opened).value());
  auto response = co_await RunOn(executor, (*source.call)->Response());
  if (!response.ok()) {
    co_return SourceError(response.error());
  }
  auto record = metadata::DecodeObject(response->payload);
  if (!record.ok()) {
    co_return SourceError(Error(ErrorCode::kCorruption, record.error().message));
  }
  source.record = std::move(record).value();
  source.record.bucket = BucketName(wanted.bucket);
  source.record.key = ObjectKey(wanted.key);
  co_return source;
}

}  // namespace

std::vector<storage::ChecksumAlgorithm> ChecksumAlgorithmsOf(const metadata::ObjectRecord& source) {
  std::vector<storage::ChecksumAlgorithm> algorithms;
  for (const auto& [name, value] : source.checksums) {
    auto algorithm = storage::ParseChecksumAlgorithm(name);
    // CRC64NVME is computed always.
    if (algorithm && *algorithm != storage::ChecksumAlgorithm::kCrc64Nvme) {
      algorithms.push_back(*algorithm);
    }
  }
  return algorithms;
}

std::optional<storage::KeyOwner> RemoteSourceOwner(const RequestContext& ctx) {
  if (ctx.services.cluster == nullptr) {
    return std::nullopt;
  }
  auto name = ParseCopySource(ctx.Header("x-amz-copy-source"));
  if (!name.ok()) {
    return std::nullopt;
  }
  auto owner = ctx.services.cluster->PrimaryOf(name->bucket, name->key);
  if (!owner || owner->self) {
    return std::nullopt;
  }
  return owner;
}

asio::awaitable<Result<metadata::ObjectRecord>> ReadRemoteSource(RequestContext& ctx,
                                                                 const storage::KeyOwner& owner) {
  STRATA_CO_TRY(auto name, ParseCopySource(ctx.Header("x-amz-copy-source")));
  STRATA_CO_TRY(auto bucket, co_await Offload(ctx.services.blocking_pool, [&] {
                  return ctx.services.store.GetBucket(BucketName(name.bucket));
                }));
  AccessRequest access = CopySourceAccess(name);
  auto decided = AuthorizeBucketAccess(ctx, bucket, access);
  // Without the bucket's leave, only the source version's ACL may still allow the read.
  if (!decided.ok() && !ObjectAclMayAllow(ctx.auth, bucket, access)) {
    co_return std::move(decided).error();
  }
  ReadVersionRequest wanted;
  wanted.bucket = name.bucket;
  wanted.key = name.key;
  wanted.version_id = name.version_id;
  auto opened = co_await OpenSource(ctx, owner, wanted);
  if (!decided.ok()) {
    if (!opened.ok() || opened->record.delete_marker) {
      co_return std::move(decided).error();  // no ACL to allow it: and no hint what exists
    }
    access.object = &opened->record;
    STRATA_CO_RETURN_IF_ERROR(AuthorizeBucketAccess(ctx, bucket, access));
  }
  STRATA_CO_TRY(auto source, std::move(opened));
  STRATA_CO_RETURN_IF_ERROR(CheckCopySourceVersion(ctx, name, source.record));
  co_return std::move(source.record);
}

asio::awaitable<Result<void>> CopyRemoteBytes(RequestContext& ctx, const storage::KeyOwner& owner,
                                              const metadata::ObjectRecord& source,
                                              std::uint64_t first, std::uint64_t length,
                                              storage::PendingWrite& write) {
  if (length == 0) {
    co_return Ok();
  }
  ReadVersionRequest wanted;
  wanted.bucket = source.bucket.str();
  wanted.key = source.key.str();
  wanted.version_id = source.version_id.str();
  wanted.if_etag = source.etag;
  wanted.first = first;
  wanted.length = length;
  STRATA_CO_TRY(auto opened, co_await OpenSource(ctx, owner, wanted));
  const auto executor = ctx.services.cluster->executor();
  std::uint64_t received = 0;
  while (true) {
    auto chunk = co_await RunOn(executor, (*opened.call)->Read());
    if (!chunk.ok()) {
      co_return SourceError(chunk.error());
    }
    if (!chunk->has_value()) {
      break;
    }
    received += (*chunk)->size();
    if (received > length) {
      co_return SourceError(Error(ErrorCode::kCorruption, "the owner sent more than asked"));
    }
    STRATA_CO_RETURN_IF_ERROR(co_await write.AppendAsync(**chunk));
  }
  if (received != length) {
    co_return SourceError(Error(ErrorCode::kCorruption, "the owner sent less than asked"));
  }
  co_return Ok();
}

storage::PeerTask<void> ServeReadVersion(storage::PeerIncomingCall& call, Services& services) {
  STRATA_CO_TRY(auto wanted, DecodeReadVersion(call.request().payload));
  auto owner = services.cluster->PrimaryOf(wanted.bucket, wanted.key);
  if (!owner || !owner->self) {
    co_return Error(ErrorCode::kUnavailable,
                    "this gateway is not the primary of the copy source in its view", true);
  }
  auto& store = services.store;
  const BucketName bucket(wanted.bucket);
  const ObjectKey key(wanted.key);
  STRATA_CO_TRY(auto record, co_await Offload(services.blocking_pool, [&] {
                  return wanted.version_id.empty()
                             ? store.HeadObject(bucket, key)
                             : store.HeadVersion(bucket, key, VersionId(wanted.version_id));
                }));
  if (!wanted.if_etag.empty() && record.etag != wanted.if_etag) {
    co_return Error(ErrorCode::kPreconditionFailed,
                    "The copy source changed while it was being copied");
  }
  if (wanted.length > 0 && (record.delete_marker || wanted.first + wanted.length > record.size)) {
    co_return Error(ErrorCode::kInvalidRange, "The requested range is not satisfiable");
  }
  std::unique_ptr<storage::ObjectReader> reader;
  if (wanted.length > 0) {
    STRATA_CO_TRY(
        reader, co_await Offload(services.blocking_pool, [&] { return store.OpenObject(record); }));
  }
  storage::PeerResponse response;
  response.payload = metadata::EncodeObject(record);
  response.has_stream = wanted.length > 0;
  STRATA_CO_RETURN_IF_ERROR(co_await call.Respond(std::move(response)));
  if (wanted.length == 0) {
    co_return Ok();
  }
  const std::uint64_t end = wanted.first + wanted.length;
  for (std::uint64_t offset = wanted.first; offset < end;) {
    std::string chunk(std::min<std::uint64_t>(storage::kMaxPeerChunk, end - offset), '\0');
    // The synchronous read on the blocking pool: this runs on the cluster's thread.
    STRATA_CO_TRY(const std::size_t read, co_await Offload(services.blocking_pool, [&] {
                    return reader->Read(offset, std::span<char>(chunk.data(), chunk.size()));
                  }));
    if (read == 0) {
      co_return Error(ErrorCode::kCorruption, "the copy source ended before its recorded size");
    }
    chunk.resize(read);
    offset += read;
    STRATA_CO_RETURN_IF_ERROR(co_await call.Write(std::move(chunk)));
  }
  co_return co_await call.CloseResponse();
}

}  // namespace strata::gateway
