// PostPolicy: the policy document of a browser's POST Object form (S3's "POST policy"),
// and the checks S3 makes of the form against it. Pure logic: no I/O; an immutable
// PostPolicy may be read by any thread.
//
// The document is base64 of JSON: {"expiration": "2026-12-30T12:00:00.000Z", "conditions":
// [...]}, each condition one of
//   {"field": "value"}                   the field equals value (several keys: one each)
//   ["eq", "$field", "value"]            the same
//   ["starts-with", "$field", "prefix"]  the field begins with prefix ("" allows anything;
//                                        for Content-Type every comma-separated entry must)
//   ["content-length-range", min, max]   the file's size, in bytes, inclusive
// Field names are case-insensitive; values are compared exactly. A field the form does not
// have is checked as the empty string. `bucket` names the bucket the form is posted to.
//
// Bounds (a hostile document costs little): the decoded document at most
// kMaxPostPolicyBytes, nesting at most kMaxPostPolicyDepth, kMaxPostPolicyConditions
// conditions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata::auth {

// A POST form's fields before its file are at most 20 KiB, the policy's base64 with them.
inline constexpr std::size_t kMaxPostPolicyBytes = 20 * 1024;
inline constexpr std::size_t kMaxPostPolicyConditions = 256;
inline constexpr int kMaxPostPolicyDepth = 4;

// One field of the form, as sent (the name in its case).
struct PostFormField {
  std::string name;
  std::string value;
};

struct PostCondition {
  enum class Kind { kEq, kStartsWith, kContentLengthRange };
  Kind kind = Kind::kEq;
  std::string field;      // lower case, without the '$'; empty for a length range
  std::string value;      // kEq: the value; kStartsWith: the prefix
  std::uint64_t min = 0;  // kContentLengthRange, inclusive
  std::uint64_t max = 0;
  std::string text;  // the condition as S3 quotes it when it fails: ["eq", "$key", "a"]
};

// The sizes the file may have: the intersection of every content-length-range.
struct PostLengthRange {
  std::uint64_t min = 0;
  std::uint64_t max = UINT64_MAX;
};

class PostPolicy {
 public:
  // The `policy` form field (base64 of the JSON document). kInvalidPolicyDocument, with
  // S3's message, for text that is not base64, not JSON, or not a policy: no or a bad
  // expiration, no conditions list, a condition of another shape, an unknown operator, a
  // field name without '$', a length range that is not two non-negative integers (or
  // strings of digits) with min <= max; past the bounds above too.
  static Result<PostPolicy> Decode(std::string_view base64);
  // The same on the JSON document itself.
  static Result<PostPolicy> Parse(std::string_view json);

  std::int64_t expiration_ms() const { return expiration_ms_; }  // Unix milliseconds
  const std::vector<PostCondition>& conditions() const { return conditions_; }
  // Every content-length-range together; nullopt when the policy has none.
  std::optional<PostLengthRange> length_range() const;

  // Checks the form against the policy at `now_ms`: kAccessDenied "Invalid according to
  // Policy: Policy expired." past the expiration; "...: Policy Condition failed: [...]" for
  // the first condition the fields (and `bucket`) do not meet; "...: Extra input fields:
  // NAME" for a field no condition names (every field must be but policy, signature,
  // x-amz-signature, AWSAccessKeyId, file and those starting x-ignore-). `fields` are the
  // form's fields before the file, the key with ${filename} already replaced. The file's
  // size is checked against length_range() as it streams, not here.
  Result<void> Check(const std::vector<PostFormField>& fields, std::string_view bucket,
                     std::int64_t now_ms) const;

 private:
  std::int64_t expiration_ms_ = 0;
  std::vector<PostCondition> conditions_;
};

}  // namespace strata::auth
