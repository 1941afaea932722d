// Private to auth/: one condition of a policy statement ("StringLike": {"s3:prefix": [...]})
// parsed into what evaluates it, and its evaluation against a request's values
// (auth/policy.h's ConditionSource). Pure; thread-safe once built.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "common/error.h"

namespace strata::auth::internal {

enum class ConditionOp {
  kStringEquals,
  kStringNotEquals,
  kStringEqualsIgnoreCase,
  kStringNotEqualsIgnoreCase,
  kStringLike,
  kStringNotLike,
  kNumericEquals,
  kNumericNotEquals,
  kNumericLessThan,
  kNumericLessThanEquals,
  kNumericGreaterThan,
  kNumericGreaterThanEquals,
  kDateEquals,
  kDateNotEquals,
  kDateLessThan,
  kDateLessThanEquals,
  kDateGreaterThan,
  kDateGreaterThanEquals,
  kBool,
  kIpAddress,
  kNotIpAddress,
  kArnEquals,
  kArnLike,
  kArnNotEquals,
  kArnNotLike,
  kNull,
};

// How a condition treats a key with several values (AWS's set operators).
enum class ConditionSet { kSingle, kForAllValues, kForAnyValue };

// An address range of IpAddress / NotIpAddress: IPv4 as IPv4-mapped IPv6, so one compare.
struct AddressRange {
  std::array<std::uint8_t, 16> bytes{};
  int prefix_bits = 128;
};

struct ConditionClause {
  ConditionOp op = ConditionOp::kStringEquals;
  ConditionSet set = ConditionSet::kSingle;
  bool if_exists = false;
  std::string key;                  // lower-cased
  std::vector<std::string> values;  // as written (numbers, dates and booleans as text)
  // Read once at parse time for the operators that need them.
  std::vector<double> numbers;
  std::vector<std::int64_t> times_ms;
  std::vector<AddressRange> ranges;
  bool null_expected = false;  // Null: true means "the key must be absent"
  // Its values hold policy variables to expand (a string or ARN operator, Version
  // 2012-10-17).
  bool expand = false;

  // Whether the operator is a negation (StringNotEquals, NotIpAddress, ...): a request
  // without the key satisfies it.
  bool negated() const;
};

// The operator named `name` ("StringLikeIfExists", "ForAnyValue:StringEquals"), into
// `clause`'s op, set and if_exists. kMalformedPolicy when S3 knows no such operator.
Result<void> ParseConditionOperator(std::string_view name, ConditionClause& clause);

// A condition key as ConditionSource is asked for it: ASCII letters lower-cased (IAM
// compares keys case-insensitively).
std::string ConditionKey(std::string_view key);

// Whether `key` (lower-cased) is a condition key S3 evaluates: any aws: global key (one
// strata does not provide reads as absent), and S3's own s3: keys.
bool IsKnownConditionKey(std::string_view key);

// Reads clause.values for the operator (numbers, dates, address ranges, booleans).
// kMalformedPolicy when one cannot be read.
Result<void> PrepareConditionValues(ConditionClause& clause);

// Whether the clause holds for the request's values (`source` may be null: no key has a
// value).
bool ConditionHolds(const ConditionClause& clause, const ConditionSource* source);

// Policy variables (Version 2012-10-17 only): "${aws:username}" in a resource or a string
// condition's value stands for the request's value of that key (the key compared
// case-insensitively), "${key, 'default'}" for the default when the request has none, and
// "${*}", "${?}", "${$}" for those characters taken literally.
bool HasPolicyVariable(std::string_view pattern);
// `pattern` with its variables replaced, as an escaped pattern for GlobMatch(...,
// escaped = true): what a variable stands for is matched literally (a user named "a*b"
// matches only "a*b"). nullopt when a variable's key has no value and no default (the
// pattern then matches nothing, as in AWS). An unterminated "${" stays as written.
std::optional<std::string> ExpandPolicyVariables(std::string_view pattern,
                                                 const ConditionSource* source);

// A request's address (aws:SourceIp) as an AddressRange of one address; false when it
// is not an IPv4 or IPv6 address.
bool ParseAddress(std::string_view text, AddressRange& out);

}  // namespace strata::auth::internal
