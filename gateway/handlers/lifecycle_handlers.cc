// Lifecycle configuration: Put/Get/DeleteBucketLifecycleConfiguration (?lifecycle on a
// bucket). The rules live in the bucket's record; storage's LifecycleWorker applies them
// from the index's due-time queue.
#include <random>

#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/lifecycle_xml.h"
#include "gateway/offload.h"

namespace strata::gateway {
namespace {

// A thousand rules with filters and several actions each stay well under this.
constexpr std::size_t kMaxLifecycleBody = 2 * 1024 * 1024;

// S3 names a rule sent without an ID with a random one.
std::string NewRuleId() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id(48, 'A');
  for (char& c : id) {
    c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  }
  return id;
}

// Every transition must name a class this gateway can move the bucket's objects to: one
// on a local tier (warm), or on the upstream tier the bucket is bound to. Peer tiers do
// not store data yet, and refusing the rule says so instead of ignoring it.
Result<void> CheckTargets(const Config& config, const metadata::BucketRecord& bucket,
                          const std::vector<metadata::LifecycleRule>& rules) {
  const auto check = [&](const std::string& cls) -> Result<void> {
    const TierConfig* tier = config.TierOfClass(cls);
    if (tier == nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   "The storage class " + cls + " names no tier of this gateway");
    }
    if (tier->kind == TierKind::kPeer) {
      return Error(ErrorCode::kInvalidArgument, "Transitions to the peer tier " + tier->name +
                                                    " (" + cls + ") are not supported yet");
    }
    if (tier->kind == TierKind::kS3 && bucket.upstream_tier != tier->name) {
      return Error(ErrorCode::kInvalidArgument, "The storage class " + cls + " is the tier " +
                                                    tier->name +
                                                    ", which this bucket is not bound to");
    }
    return Ok();
  };
  for (const auto& rule : rules) {
    for (const auto& t : rule.transitions) {
      STRATA_RETURN_IF_ERROR(check(t.storage_class));
    }
    for (const auto& t : rule.noncurrent_transitions) {
      STRATA_RETURN_IF_ERROR(check(t.storage_class));
    }
  }
  return Ok();
}

HandlerResult SetRules(RequestContext& ctx, const std::vector<metadata::LifecycleRule>& rules,
                       unsigned status) {
  BucketName bucket(ctx.target.bucket);
  auto& index = ctx.services.index;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      ctx.services.blocking_pool, [&] { return index.SetBucketLifecycle(bucket, rules); }));
  co_return co_await SendEmpty(ctx, status);
}

}  // namespace

HandlerResult PutBucketLifecycleConfiguration(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxLifecycleBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto rules, body.Parse([](std::string_view text) {
    return ParseLifecycleConfiguration(text, NewRuleId);
  }));
  STRATA_CO_RETURN_IF_ERROR(CheckTargets(ctx.services.config, *ctx.bucket, rules));
  co_return co_await SetRules(ctx, rules, 200);
}

HandlerResult GetBucketLifecycleConfiguration(RequestContext& ctx) {
  if (ctx.bucket->lifecycle.empty()) {
    co_return Error(ErrorCode::kNoSuchLifecycleConfiguration,
                    "The lifecycle configuration does not exist");
  }
  co_return co_await SendXml(ctx, 200, LifecycleConfigurationXml(ctx.bucket->lifecycle));
}

HandlerResult DeleteBucketLifecycleConfiguration(RequestContext& ctx) {
  const std::vector<metadata::LifecycleRule> none;
  co_return co_await SetRules(ctx, none, 204);
}

}  // namespace strata::gateway
