// Bucket policies: Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus (?policy and
// ?policyStatus on a bucket). The policy's text lives in the bucket's record
// (metadata::BucketAccess); gateway/bucket_access.h evaluates it for every request.
#include "auth/policy.h"
#include "common/offload.h"
#include "gateway/bucket_access.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

// Bodies past this are not read: S3's limit is 20 KiB (auth::kMaxPolicyBytes, which
// BucketPolicy::Parse enforces with S3's message); the rest is slack for whitespace that
// S3 does not count.
constexpr std::size_t kMaxPolicyBody = 64 * 1024;

// AWS: only the bucket owner's account may read or change a bucket's policy; another
// caller whom a policy allows it gets 405 MethodNotAllowed.
Result<void> RequireOwner(const RequestContext& ctx) {
  if (!OwnsOrAdministers(ctx.auth, *ctx.bucket)) {
    return Error(ErrorCode::kMethodNotAllowed,
                 "The specified method is not allowed against this resource.");
  }
  return Ok();
}

HandlerResult SetPolicy(RequestContext& ctx, std::string policy) {
  const storage::ObjectStore::AccessChange change =
      [&policy](metadata::BucketAccess& access) -> Result<void> {
    access.policy = policy;
    return Ok();
  };
  co_return co_await ChangeBucketAccess(ctx, change, 204);
}

}  // namespace

HandlerResult PutBucketPolicy(RequestContext& ctx) {
  STRATA_CO_RETURN_IF_ERROR(RequireOwner(ctx));
  auto body = co_await ReadXmlBody(ctx, kMaxPolicyBody);
  if (!body.ok()) {
    if (body.error().code == ErrorCode::kMalformedXml) {
      co_return Error(ErrorCode::kMalformedPolicy, "Policies must be less than 20 KB");
    }
    co_return std::move(body).error();
  }
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body->text));
  STRATA_CO_TRY(auto parsed, auth::BucketPolicy::Parse(body->text, ctx.target.bucket));
  // BlockPublicPolicy: a policy that would make the bucket public is refused (as S3 does,
  // with AccessDenied).
  const auto& block = ctx.bucket->access.public_access_block;
  if (block && block->block_public_policy && parsed.IsPublic()) {
    co_return Error(ErrorCode::kAccessDenied, "Access Denied");
  }
  co_return co_await SetPolicy(ctx, std::move(body->text));
}

HandlerResult GetBucketPolicy(RequestContext& ctx) {
  STRATA_CO_RETURN_IF_ERROR(RequireOwner(ctx));
  const std::string& policy = ctx.bucket->access.policy;
  if (policy.empty()) {
    co_return Error(ErrorCode::kNoSuchBucketPolicy, "The bucket policy does not exist");
  }
  ResponseHeader header;
  header.result(http::status::ok);
  header.set(http::field::content_type, "application/json");
  co_return co_await ctx.exchange.Send(std::move(header), policy);
}

HandlerResult DeleteBucketPolicy(RequestContext& ctx) {
  STRATA_CO_RETURN_IF_ERROR(RequireOwner(ctx));
  co_return co_await SetPolicy(ctx, std::string());
}

HandlerResult GetBucketPolicyStatus(RequestContext& ctx) {
  // A bucket without a policy is not public by its policy (as Ceph RGW answers, and the
  // s3-tests suite expects).
  auto policy = PolicyOf(*ctx.bucket);
  XmlWriter xml("PolicyStatus");
  xml.Element("IsPublic", policy != nullptr && policy->IsPublic() ? "true" : "false");
  co_return co_await SendXml(ctx, 200, xml.Finish());
}

}  // namespace strata::gateway
