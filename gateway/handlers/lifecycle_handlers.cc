// Lifecycle configuration: Put/Get/DeleteBucketLifecycleConfiguration (?lifecycle on a
// bucket). The rules live in the bucket's record; storage's LifecycleWorker applies them
// from the index's due-time queue.
#include <random>

#include "common/offload.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/lifecycle_xml.h"

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

HandlerResult SetRules(RequestContext& ctx, const std::vector<metadata::LifecycleRule>& rules,
                       unsigned status) {
  BucketName bucket(ctx.target.bucket);
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      ctx.services.blocking_pool, [&] { return store.SetBucketLifecycle(bucket, rules); }));
  co_return co_await SendEmpty(ctx, status);
}

}  // namespace

HandlerResult PutBucketLifecycleConfiguration(RequestContext& ctx) {
  STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kMaxLifecycleBody));
  STRATA_CO_RETURN_IF_ERROR(VerifyBodyDigests(ctx, body.text));
  STRATA_CO_TRY(auto rules, body.Parse([](std::string_view text) {
    return ParseLifecycleConfiguration(text, NewRuleId);
  }));
  STRATA_CO_RETURN_IF_ERROR(ctx.services.engine.CheckTransitions(*ctx.bucket, rules));
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
