// Bucket policies (auth/policy.h) on arbitrary bytes, as PutBucketPolicy receives them.
// Properties: no crash, hang or leak; a refusal is MalformedPolicy; a policy that parses
// keeps its text, has a statement, and evaluates (to the same answer twice) requests of
// every kind: anonymous and signed, bucket and object, with and without condition values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using strata::auth::BucketPolicy;
using strata::auth::ConditionSource;
using strata::auth::PolicyPrincipal;
using strata::auth::PolicyRequest;

// Values of the keys the seeds' conditions name.
const strata::auth::MapConditionSource& FixedConditions() {
  static const strata::auth::MapConditionSource conditions{
      {"aws:sourceip", {"192.0.2.7"}},
      {"aws:username", {"alice*?\\"}},
      {"aws:securetransport", {"false"}},
      {"aws:currenttime", {"2026-12-07T00:00:00Z"}},
      {"aws:epochtime", {"1796601600"}},
      {"s3:prefix", {"home/alice/"}},
      {"s3:max-keys", {"1000"}},
      {"s3:requestobjecttagkeys", {"team", "cost-center"}},
      {"s3:existingobjecttag/team", {"ml"}},
      {"aws:sourcearn", {"arn:aws:cloudfront::111122223333:distribution/E1"}},
  };
  return conditions;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto policy = BucketPolicy::Parse(input, "fuzz-bucket");
  if (!policy.ok()) {
    FUZZ_CHECK(policy.error().code == strata::ErrorCode::kMalformedPolicy, input);
    return 0;
  }
  FUZZ_CHECK(policy->text() == input && policy->statement_count() > 0, input);
  (void)policy->IsPublic();
  static const std::vector<std::string> ids = {"arn:aws:iam::111122223333:user/alice",
                                               "111122223333"};
  static const PolicyPrincipal alice{
      ids, "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"};
  const ConditionSource& conditions = FixedConditions();
  for (const PolicyPrincipal* who : {static_cast<const PolicyPrincipal*>(nullptr), &alice}) {
    for (const ConditionSource* source : {static_cast<const ConditionSource*>(nullptr),
                                          static_cast<const ConditionSource*>(&conditions)}) {
      for (auto [action, resource] :
           {std::pair{"s3:GetObject", "arn:aws:s3:::fuzz-bucket/home/alice/a.txt"},
            std::pair{"s3:ListBucket", "arn:aws:s3:::fuzz-bucket"},
            std::pair{"s3:PutObject", "arn:aws:s3:::fuzz-bucket/x"}}) {
        const PolicyRequest request{action, resource, who, source};
        FUZZ_CHECK(policy->Evaluate(request) == policy->Evaluate(request), input);
      }
    }
  }
  return 0;
}
