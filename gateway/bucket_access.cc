#include "gateway/bucket_access.h"

#include "common/log.h"
#include "gateway/identity.h"
#include "gateway/parsed_setting.h"
#include "gateway/request_conditions.h"

namespace strata::gateway {
namespace {

Error Denied() { return Error(ErrorCode::kAccessDenied, "Access Denied"); }

}  // namespace

bool OwnsOrAdministers(const auth::AuthResult& auth, const metadata::BucketRecord& bucket) {
  return !auth.anonymous && (auth.principal.admin || bucket.owner == auth.principal.access_key);
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
    return owner ? Ok() : Result<void>(Denied());
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
  return owner ? Ok() : Result<void>(Denied());
}

Result<void> AuthorizeBucketAccess(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                                   const AccessRequest& access) {
  if (bucket.access.policy.empty()) {  // the common case: no condition is read
    return OwnsOrAdministers(ctx.auth, bucket) ? Ok() : Result<void>(Denied());
  }
  const RequestFacts facts{ctx.target,
                           ctx.view,
                           ctx.auth,
                           ctx.exchange.remote_address(),
                           ctx.exchange.secure(),
                           ctx.NowMs(),
                           access.existing_tags};
  return DecideBucketAccess(ctx.auth, bucket, access, RequestConditions(facts));
}

}  // namespace strata::gateway
