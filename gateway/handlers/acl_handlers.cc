// ACLs: Get/PutBucketAcl (?acl on a bucket) and Get/PutObjectAcl (?acl on an object, with
// versionId). A bucket's ACL lives in its access settings (changed whole, as the other
// settings); a version's in its record, rewritten in place as its tags are: no new
// version, same ETag and Last-Modified. A PUT sets the ACL from x-amz-acl, the
// x-amz-grant-* headers, or an AccessControlPolicy body.
#include <optional>

#include "common/offload.h"
#include "gateway/acl_xml.h"
#include "gateway/bucket_access.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/identity.h"

namespace strata::gateway {
namespace {

// A hundred grants with their XML fit in a few tens of KiB.
constexpr std::size_t kMaxAclBody = 64 * 1024;

// The ACL a Put*Acl sets on a resource owned by `owner`: from the headers when they name
// one, else from the body, whose Owner (when named) must be the resource's.
boost::asio::awaitable<Result<metadata::Acl>> RequestedAclOf(RequestContext& ctx,
                                                             const metadata::BucketRecord& bucket,
                                                             std::string_view owner) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxAclBody));
  if (HasAclHeaders(ctx)) {
    if (!body.text.empty()) {
      co_return Error(ErrorCode::kInvalidRequest,
                      "An ACL may be given in headers or in the body, not both");
    }
    const AccessFields headers = RequestHeaders(ctx);
    STRATA_CO_TRY(auto requested, co_await AclFromHeaders(ctx, owner, bucket.owner, headers));
    co_return std::move(requested->acl);
  }
  if (body.text.empty()) {
    co_return Error(ErrorCode::kMalformedAcl,
                    "The XML you provided was not well-formed or did not validate against our "
                    "published schema");
  }
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  CanonicalIdResolver resolve;
  if (body.text.find("ID>") != std::string::npos) {  // it names users: who they are
    STRATA_CO_TRY(resolve, co_await UserResolver(ctx));
  } else {
    resolve = [](std::string_view) { return std::optional<std::string>(); };
  }
  STRATA_CO_TRY(auto policy, body.Parse([&resolve](std::string_view text) {
    return ParseAccessControlPolicy(text, resolve);
  }));
  if (policy.owner_id && *policy.owner_id != CanonicalUserId(owner)) {
    co_return Error(ErrorCode::kAccessDenied, "Access Denied");  // no change of owner
  }
  co_return std::move(policy.acl);
}

}  // namespace

HandlerResult GetBucketAcl(RequestContext& ctx) {
  const metadata::BucketRecord& bucket = *ctx.bucket;
  // With ACLs off the bucket's ACL is its owner's full control, whatever was set before.
  const metadata::Acl enforced = PrivateAcl(bucket.owner);
  std::string xml =
      AccessControlPolicyXml(bucket.owner, AclsDisabled(bucket) ? enforced : bucket.access.acl);
  co_return co_await SendXml(ctx, 200, std::move(xml));
}

HandlerResult PutBucketAcl(RequestContext& ctx) {
  const metadata::BucketRecord& bucket = *ctx.bucket;
  STRATA_CO_TRY(auto acl, co_await RequestedAclOf(ctx, bucket, bucket.owner));
  const std::string owner = bucket.owner;
  const storage::ObjectStore::AccessChange change =
      [&acl, &owner](metadata::BucketAccess& access) -> Result<void> {
    // Judged on the settings as they are now: ownership may have changed meanwhile.
    metadata::BucketRecord current;
    current.owner = owner;
    current.access = access;
    STRATA_RETURN_IF_ERROR(CheckAclAllowed(current, acl));
    access.acl = acl;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 200);
}

HandlerResult GetObjectAcl(RequestContext& ctx) {
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  if (record.delete_marker) {  // S3: a delete marker has no tags or ACL to show
    co_return co_await SendMarkerNotAllowed(ctx, record);
  }
  const metadata::BucketRecord& bucket = *ctx.bucket;
  ResponseHeader header;
  SetVersionHeader(ctx, record.version_id, header);
  // Named, not temporaries in the co_await (GCC 12 destroys such temporaries twice).
  const metadata::Acl acl = EffectiveAcl(record, bucket);
  std::string xml = AccessControlPolicyXml(EffectiveOwner(record, bucket), acl);
  co_return co_await SendXml(ctx, 200, std::move(xml), std::move(header));
}

HandlerResult PutObjectAcl(RequestContext& ctx) {
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  if (record.delete_marker) {
    co_return Error(ErrorCode::kMethodNotAllowed,
                    "The specified method is not allowed against this resource.");
  }
  const metadata::BucketRecord& bucket = *ctx.bucket;
  const std::string owner(EffectiveOwner(record, bucket));
  STRATA_CO_TRY(auto acl, co_await RequestedAclOf(ctx, bucket, owner));
  STRATA_CO_RETURN_IF_ERROR(CheckAclAllowed(bucket, acl));
  BucketName bucket_name(ctx.target.bucket);
  ObjectKey key(ctx.target.key);
  const std::optional<VersionId> version(record.version_id);
  auto& store = ctx.services.store;
  // A version recorded before owners were gets its owner with its first ACL.
  metadata::VersionSettingsChange change;
  change.acl = metadata::VersionSettingsChange::OwnedAcl{owner, std::move(acl)};
  STRATA_CO_TRY(auto updated, co_await Offload(ctx.services.blocking_pool, [&] {
                  return store.UpdateVersionSettings(bucket_name, key, version, change);
                }));
  ResponseHeader header;
  SetVersionHeader(ctx, updated.version_id, header);
  co_return co_await SendEmpty(ctx, 200, std::move(header));
}

}  // namespace strata::gateway
