#include "gateway/handlers/acl_request.h"

#include <array>
#include <map>
#include <utility>
#include <vector>

#include "common/offload.h"
#include "gateway/bucket_access.h"
#include "gateway/handlers/lock_request.h"
#include "gateway/identity.h"

namespace strata::gateway {
namespace {

using metadata::AclPermission;

// In the order their grants are listed (Ceph RGW's, which ceph/s3-tests compares).
constexpr std::array<std::pair<AclPermission, std::string_view>, 5> kGrantHeaders = {{
    {AclPermission::kRead, "x-amz-grant-read"},
    {AclPermission::kWrite, "x-amz-grant-write"},
    {AclPermission::kReadAcp, "x-amz-grant-read-acp"},
    {AclPermission::kWriteAcp, "x-amz-grant-write-acp"},
    {AclPermission::kFullControl, "x-amz-grant-full-control"},
}};

}  // namespace

AccessFields RequestHeaders(const RequestContext& ctx) {
  return [&ctx](std::string_view name) { return ctx.Header(name); };
}

bool HasAclHeaders(const RequestContext& ctx) {
  if (!ctx.Header("x-amz-acl").empty()) {
    return true;
  }
  for (const auto& [permission, name] : kGrantHeaders) {
    if (!ctx.Header(name).empty()) {
      return true;
    }
  }
  return false;
}

boost::asio::awaitable<Result<CanonicalIdResolver>> UserResolver(RequestContext& ctx) {
  auto& index = ctx.services.index;
  STRATA_CO_TRY(auto users, co_await Offload(ctx.services.blocking_pool,
                                             [&index] { return index.ListUsers(); }));
  // Each name's canonical id computed once (a hash), not once per grant looked up.
  auto by_id = std::make_shared<std::map<std::string, std::string, std::less<>>>();
  for (const auto& user : ctx.services.config.users) {
    by_id->emplace(CanonicalUserId(user.access_key), user.access_key);
  }
  for (auto& user : users) {  // (a key recorded without a user reads as its own user)
    by_id->emplace(CanonicalUserId(user.user), std::move(user.user));
  }
  co_return CanonicalIdResolver([by_id](std::string_view id) -> std::optional<std::string> {
    auto it = by_id->find(id);
    return it == by_id->end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

boost::asio::awaitable<Result<std::optional<RequestedAcl>>> AclFromHeaders(
    RequestContext& ctx, std::string_view owner, std::string_view bucket_owner,
    const AccessFields& fields) {
  std::vector<std::pair<AclPermission, std::string_view>> grants;
  for (const auto& [permission, name] : kGrantHeaders) {
    if (auto value = fields(name); !value.empty()) {
      grants.emplace_back(permission, value);
    }
  }
  const std::string_view canned = fields("x-amz-acl");
  if (!canned.empty() && !grants.empty()) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "Specifying both Canned ACLs and Header Grants is not allowed");
  }
  if (!canned.empty()) {
    STRATA_CO_TRY(auto acl, CannedAcl(canned, owner, bucket_owner));
    co_return std::optional<RequestedAcl>(RequestedAcl{std::move(acl), std::string(canned)});
  }
  if (grants.empty()) {
    co_return std::optional<RequestedAcl>();
  }
  STRATA_CO_TRY(auto resolve, co_await UserResolver(ctx));
  STRATA_CO_TRY(auto acl, GrantHeadersAcl(grants, resolve));
  co_return std::optional<RequestedAcl>(RequestedAcl{std::move(acl), std::string()});
}

Result<void> CheckAclAllowed(const metadata::BucketRecord& bucket, const metadata::Acl& acl) {
  if (AclsDisabled(bucket) && !GrantsOnlyTo(acl, bucket.owner)) {
    return Error(ErrorCode::kAccessControlListNotSupported, "The bucket does not allow ACLs");
  }
  const auto& block = bucket.access.public_access_block;
  if (block && block->block_public_acls && IsPublicAcl(acl)) {
    return Error(ErrorCode::kAccessDenied, "Access Denied");
  }
  return Ok();
}

std::string NewVersionOwner(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                            std::string_view canned) {
  const bool preferred = bucket.access.object_ownership == "BucketOwnerPreferred" &&
                         canned == "bucket-owner-full-control";
  if (ctx.auth.anonymous || AclsDisabled(bucket) || preferred) {
    return bucket.owner;
  }
  return std::string(UserName(ctx.auth.principal));
}

boost::asio::awaitable<Result<void>> DescribeAcl(RequestContext& ctx,
                                                 const metadata::BucketRecord& bucket,
                                                 metadata::ObjectRecord& record,
                                                 const AccessFields& fields) {
  const std::string_view canned = fields("x-amz-acl");
  record.owner = NewVersionOwner(ctx, bucket, canned);
  STRATA_CO_TRY(auto requested, co_await AclFromHeaders(ctx, record.owner, bucket.owner, fields));
  if (!requested) {
    record.acl = PrivateAcl(record.owner);
    co_return Ok();
  }
  STRATA_CO_RETURN_IF_ERROR(CheckAclAllowed(bucket, requested->acl));
  record.acl = std::move(requested->acl);
  co_return Ok();
}

boost::asio::awaitable<Result<void>> DescribeAccess(RequestContext& ctx,
                                                    metadata::ObjectRecord& record,
                                                    const AccessFields& fields) {
  if (!ctx.bucket) {
    co_return Ok();
  }
  STRATA_CO_RETURN_IF_ERROR(co_await DescribeAcl(ctx, *ctx.bucket, record, fields));
  co_return DescribeLock(ctx, *ctx.bucket, record, fields);
}

boost::asio::awaitable<Result<void>> DescribeAccess(RequestContext& ctx,
                                                    metadata::ObjectRecord& record) {
  const AccessFields headers = RequestHeaders(ctx);
  co_return co_await DescribeAccess(ctx, record, headers);
}

}  // namespace strata::gateway
