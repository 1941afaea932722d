#include "gateway/bucket_access.h"

#include "common/log.h"
#include "gateway/acl.h"
#include "gateway/identity.h"
#include "gateway/parsed_setting.h"
#include "gateway/request_conditions.h"

namespace strata::gateway {
namespace {

Error Denied() { return Error(ErrorCode::kAccessDenied, "Access Denied"); }

// Whether an ACL (the bucket's, or the addressed version's) allows the request.
bool AclAllows(const auth::AuthResult& auth, const metadata::BucketRecord& bucket,
               const AccessRequest& access) {
  const AclRequirement requirement = AclRequirementOf(access.action);
  if (requirement.scope == AclScope::kNone || AclsDisabled(bucket)) {
    return false;
  }
  const auto& block = bucket.access.public_access_block;
  const bool ignore_public = block && block->ignore_public_acls;
  const AclCaller caller{auth.anonymous,
                         auth.anonymous ? std::string_view() : UserName(auth.principal)};
  if (requirement.scope == AclScope::kBucket) {
    return AclGrants(bucket.access.acl, caller, requirement.permission, ignore_public);
  }
  if (access.object == nullptr || access.object->delete_marker) {
    return false;
  }
  const bool acl_permission = requirement.permission == metadata::AclPermission::kReadAcp ||
                              requirement.permission == metadata::AclPermission::kWriteAcp;
  if (acl_permission && !caller.anonymous &&
      EffectiveOwner(*access.object, bucket) == caller.user) {
    return true;  // a version's owner may always read and change its ACL
  }
  if (access.object->owner.empty()) {
    return false;  // the bucket owner's private ACL: nothing for anyone else
  }
  return AclGrants(access.object->acl, caller, requirement.permission, ignore_public);
}

}  // namespace

bool AclsDisabled(const metadata::BucketRecord& bucket) {
  return bucket.access.object_ownership == "BucketOwnerEnforced";
}

bool ObjectAclMayAllow(const auth::AuthResult& auth, const metadata::BucketRecord& bucket,
                       const AccessRequest& access) {
  return access.object == nullptr && !access.key.empty() &&
         AclRequirementOf(access.action).scope == AclScope::kObject && !AclsDisabled(bucket) &&
         !OwnsOrAdministers(auth, bucket);
}

bool OwnsOrAdministers(const auth::AuthResult& auth, const metadata::BucketRecord& bucket) {
  return !auth.anonymous && (auth.principal.admin || bucket.owner == UserName(auth.principal));
}

std::shared_ptr<const auth::BucketPolicy> PolicyOf(const metadata::BucketRecord& bucket) {
  return ParsedSetting<auth::BucketPolicy>(bucket.name, bucket.access.policy, "policy",
                                           &auth::BucketPolicy::Parse);
}

Result<void> DecideBucketAccess(const auth::AuthResult& auth, const metadata::BucketRecord& bucket,
                                const AccessRequest& access,
                                const auth::ConditionSource& conditions) {
  const bool owner = OwnsOrAdministers(auth, bucket);
  auto policy = PolicyOf(bucket);
  if (policy == nullptr || access.action.empty()) {
    return owner || AclAllows(auth, bucket, access) ? Ok() : Result<void>(Denied());
  }
  std::string resource = "arn:aws:s3:::" + bucket.name.str();
  if (!access.key.empty()) {
    resource += '/';
    resource += access.key;
  }
  const UserIds* ids = auth.anonymous ? nullptr : &IdsOf(UserName(auth.principal));
  const auth::PolicyPrincipal principal{
      ids == nullptr ? std::span<const std::string>() : std::span<const std::string>(&ids->arn, 1),
      ids == nullptr ? std::string_view() : std::string_view(ids->canonical_id)};
  const auth::PolicyRequest request{access.action, resource, auth.anonymous ? nullptr : &principal,
                                    &conditions};
  // RestrictPublicBuckets: while the policy is public, what it allows counts for the
  // bucket owner's own users only (strata's: the owner and admins), never for others.
  const auto& block = bucket.access.public_access_block;
  const bool restricted = block && block->restrict_public_buckets && policy->IsPublic();
  switch (policy->Evaluate(request)) {
    case auth::PolicyDecision::kDeny:
      return owner && access.policy_operation ? Ok() : Result<void>(Denied());
    case auth::PolicyDecision::kAllow:
      return restricted && !owner ? Result<void>(Denied()) : Ok();
    case auth::PolicyDecision::kNone:
      break;
  }
  return owner || AclAllows(auth, bucket, access) ? Ok() : Result<void>(Denied());
}

Result<void> AuthorizeBucketAccess(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                                   const AccessRequest& access) {
  if (bucket.access.policy.empty()) {  // the common case: no condition is read
    return OwnsOrAdministers(ctx.auth, bucket) || AclAllows(ctx.auth, bucket, access)
               ? Ok()
               : Result<void>(Denied());
  }
  const RequestFacts facts{ctx.target,
                           ctx.view,
                           ctx.auth,
                           ctx.exchange.remote_address(),
                           ctx.exchange.secure(),
                           ctx.NowMs(),
                           access.object == nullptr ? nullptr : &access.object->tags};
  return DecideBucketAccess(ctx.auth, bucket, access, RequestConditions(facts));
}

}  // namespace strata::gateway
