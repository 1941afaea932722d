// POST Object policy documents (auth/post_policy.h) on arbitrary bytes, as the form's
// `policy` field brings them: the bytes parsed as the JSON document, and as base64.
//
// Properties: no crash, hang or leak; a refusal is InvalidPolicyDocument with a message;
// an accepted document stays within its bounds (conditions, fields in lower case, length
// ranges ordered), reads the same through base64, and its checks agree with its
// conditions: past the expiration every form is refused as expired, and before it an
// empty form passes exactly when every condition accepts the empty value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/internal/crypto.h"
#include "auth/post_policy.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using strata::auth::PostCondition;
using strata::auth::PostPolicy;

constexpr std::string_view kBucket = "fuzz-bucket";

bool AcceptsEmpty(const PostCondition& c) {
  const std::string_view value = c.field == "bucket" ? kBucket : std::string_view();
  switch (c.kind) {
    case PostCondition::Kind::kContentLengthRange:
      return true;
    case PostCondition::Kind::kEq:
      return value == c.value;
    case PostCondition::Kind::kStartsWith:
      return value.starts_with(c.value);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // As base64: whatever it decodes to, the answer is a policy or InvalidPolicyDocument.
  auto decoded = PostPolicy::Decode(input);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.error().code == strata::ErrorCode::kInvalidPolicyDocument, input);
  }

  auto policy = PostPolicy::Parse(input);
  if (!policy.ok()) {
    FUZZ_CHECK(policy.error().code == strata::ErrorCode::kInvalidPolicyDocument, input);
    FUZZ_CHECK(!policy.error().message.empty(), input);
    return 0;
  }
  const auto& conditions = policy->conditions();
  FUZZ_CHECK(conditions.size() <= strata::auth::kMaxPostPolicyConditions, input);
  for (const auto& c : conditions) {
    FUZZ_CHECK(!c.text.empty(), input);
    if (c.kind == PostCondition::Kind::kContentLengthRange) {
      FUZZ_CHECK(c.min <= c.max && c.field.empty(), input);
      continue;
    }
    FUZZ_CHECK(!c.field.empty(), input);
    for (char ch : c.field) {
      FUZZ_CHECK(!(ch >= 'A' && ch <= 'Z'), input);
    }
  }
  if (auto range = policy->length_range()) {
    (void)range;  // may be empty (min > max) when ranges do not overlap: no size passes
  }

  // The same document through base64 is the same policy.
  const std::string b64 = strata::auth::internal::Base64Encode(data, size);
  auto again = PostPolicy::Decode(b64);
  FUZZ_CHECK(again.ok() && again->expiration_ms() == policy->expiration_ms() &&
                 again->conditions().size() == conditions.size(),
             input);

  const std::vector<strata::auth::PostFormField> none;
  auto expired = policy->Check(none, kBucket, policy->expiration_ms());
  FUZZ_CHECK(!expired.ok() && expired.error().code == strata::ErrorCode::kAccessDenied &&
                 expired.error().message == "Invalid according to Policy: Policy expired.",
             input);
  if (policy->expiration_ms() > INT64_MIN) {
    bool all = true;
    for (const auto& c : conditions) {
      all = all && AcceptsEmpty(c);
    }
    auto checked = policy->Check(none, kBucket, policy->expiration_ms() - 1);
    FUZZ_CHECK(checked.ok() == all, input);
    if (!checked.ok()) {
      FUZZ_CHECK(checked.error().code == strata::ErrorCode::kAccessDenied, input);
    }
  }
  return 0;
}
