// A bucket's ownership controls and public access block (?ownershipControls and
// ?publicAccessBlock on a bucket): settings kept in the bucket's record
// (metadata::BucketAccess), changed whole by read-modify-write so that a concurrent
// change of its policy is never lost.
#include "common/offload.h"
#include "gateway/access_xml.h"
#include "gateway/acl.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"

namespace strata::gateway {
namespace {

// Both documents are a few hundred bytes.
constexpr std::size_t kMaxAccessBody = 64 * 1024;

// The body of a PUT of a setting, verified against its Content-MD5 or checksum.
boost::asio::awaitable<Result<std::string>> ReadSetting(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxAccessBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  co_return std::move(body.text);
}

}  // namespace

HandlerResult ChangeBucketAccess(RequestContext& ctx,
                                 const storage::ObjectStore::AccessChange& change,
                                 unsigned status) {
  BucketName bucket(ctx.target.bucket);
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      ctx.services.blocking_pool, [&] { return store.UpdateBucketAccess(bucket, change); }));
  co_return co_await SendEmpty(ctx, status);
}

HandlerResult GetBucketOwnershipControls(RequestContext& ctx) {
  const std::string& mode = ctx.bucket->access.object_ownership;
  if (mode.empty()) {
    co_return Error(ErrorCode::kOwnershipControlsNotFound,
                    "The bucket ownership controls were not found");
  }
  co_return co_await SendXml(ctx, 200, OwnershipControlsXml(mode));
}

HandlerResult PutBucketOwnershipControls(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadSetting(ctx));
  STRATA_CO_TRY(auto mode, ParseOwnershipControls(body));
  const std::string owner = ctx.bucket->owner;
  const storage::ObjectStore::AccessChange change =
      [&mode, &owner](metadata::BucketAccess& access) -> Result<void> {
    // As S3: ACLs cannot be turned off while the bucket's own ACL grants others anything.
    if (mode == "BucketOwnerEnforced" && !GrantsOnlyTo(access.acl, owner)) {
      return Error(ErrorCode::kInvalidBucketAclWithObjectOwnership,
                   "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced "
                   "setting");
    }
    access.object_ownership = mode;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 200);
}

HandlerResult DeleteBucketOwnershipControls(RequestContext& ctx) {
  const storage::ObjectStore::AccessChange change =
      [](metadata::BucketAccess& access) -> Result<void> {
    access.object_ownership.clear();
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 204);
}

HandlerResult GetPublicAccessBlock(RequestContext& ctx) {
  const auto& block = ctx.bucket->access.public_access_block;
  if (!block) {
    co_return Error(ErrorCode::kNoSuchPublicAccessBlockConfiguration,
                    "The public access block configuration was not found");
  }
  co_return co_await SendXml(ctx, 200, PublicAccessBlockXml(*block));
}

HandlerResult PutPublicAccessBlock(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadSetting(ctx));
  STRATA_CO_TRY(auto block, ParsePublicAccessBlock(body));
  const storage::ObjectStore::AccessChange change =
      [&block](metadata::BucketAccess& access) -> Result<void> {
    access.public_access_block = block;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 200);
}

HandlerResult DeletePublicAccessBlock(RequestContext& ctx) {
  const storage::ObjectStore::AccessChange change =
      [](metadata::BucketAccess& access) -> Result<void> {
    access.public_access_block.reset();
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 204);
}

}  // namespace strata::gateway
