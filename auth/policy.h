// BucketPolicy: an S3 bucket policy (PutBucketPolicy's JSON), parsed and checked once, then
// evaluated for each request on the bucket (issue 20). Pure logic: no I/O; an evaluation
// allocates nothing and reads the request's condition values through ConditionSource, so
// a request pays only for the keys the policy names. Immutable once parsed: share it
// between threads freely (a bucket's policy is replaced whole).
//
// The language (AWS's "IAM JSON policy elements"): Version ("2012-10-17" or "2008-10-17"),
// Id, Statement (one or a list), each with Sid, Effect (Allow | Deny), Principal or
// NotPrincipal ("*", {"AWS": ...}, {"CanonicalUser": ...}, {"Service": ...}), Action or
// NotAction (S3's action names, "s3:*", wildcards * and ?; case-insensitive), Resource or
// NotResource (arn:aws:s3:::bucket and arn:aws:s3:::bucket/key ARNs of this bucket, with
// wildcards), and Condition: the String*, Numeric*, Date*, Bool, IpAddress /
// NotIpAddress, Arn* and Null operators, each but Null also as ...IfExists, with the
// ForAllValues: / ForAnyValue: set qualifiers, over AWS's global keys (aws:...) and S3's
// (s3:...); with Version 2012-10-17, policy variables ("${aws:username}", defaults,
// "${*}") in resources and string conditions.
//
// Evaluation, as S3 evaluates a bucket policy: a statement applies when its principal,
// action, resource and every condition match; any Deny that applies wins, else any Allow
// that applies allows, else the policy says nothing (the caller then asks the ACL, and
// the bucket owner's own rights).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata::auth {

// The largest policy S3 takes: 20 KiB.
inline constexpr std::size_t kMaxPolicyBytes = 20 * 1024;

// Who sent the request, as a policy's Principal names users.
struct PolicyPrincipal {
  // The values a "Principal": {"AWS": ...} may name the user by (its user ARN, its
  // account), compared exactly.
  std::span<const std::string> aws_ids;
  std::string_view canonical_id;  // what {"CanonicalUser": ...} names it by
};

// The request's values of condition keys. Keys are compared case-insensitively (the
// implementation is given them lower-cased: "aws:sourceip", "s3:existingobjecttag/team").
class ConditionSource {
 public:
  virtual ~ConditionSource() = default;
  // The key's values (several for a multi-valued key such as s3:RequestObjectTagKeys), or
  // nullopt when the request has no such key. The span stays valid until the next call.
  virtual std::optional<std::span<const std::string>> Values(std::string_view key) const = 0;
};

// A ConditionSource over a map of lower-cased keys, for tests and tools.
class MapConditionSource final : public ConditionSource {
 public:
  using ValueMap = std::map<std::string, std::vector<std::string>, std::less<>>;
  MapConditionSource() = default;
  MapConditionSource(
      std::initializer_list<std::pair<const std::string, std::vector<std::string>>> values)
      : values_(values) {}
  std::optional<std::span<const std::string>> Values(std::string_view key) const override;

 private:
  ValueMap values_;
};

struct PolicyRequest {
  std::string_view action;    // "s3:GetObject": S3's name of the operation's permission
  std::string_view resource;  // "arn:aws:s3:::bucket" or "arn:aws:s3:::bucket/key"
  const PolicyPrincipal* principal = nullptr;   // nullptr: an anonymous request
  const ConditionSource* conditions = nullptr;  // nullptr: no condition key has a value
};

enum class PolicyDecision { kNone, kAllow, kDeny };

class BucketPolicy {
 public:
  ~BucketPolicy();
  BucketPolicy(BucketPolicy&&) noexcept;
  BucketPolicy& operator=(BucketPolicy&&) noexcept;

  // Parses `json`, a policy of `bucket`. kMalformedPolicy with S3's message for what S3
  // refuses: not JSON or over kMaxPolicyBytes ("This policy contains invalid Json"), a
  // missing Statement, Effect, Action or Resource ("Missing required field ..."), an
  // unknown element, an Effect other than Allow or Deny, a Principal strata cannot
  // name ("Invalid principal in policy"), an action that is not S3's ("Policy has invalid
  // action"), a resource that is not an S3 ARN of this bucket ("Policy has invalid
  // resource"), no action that applies to any of the statement's resources ("Action does
  // not apply to any resource(s) in statement"), an unknown condition operator or S3
  // condition key, or a condition value its operator cannot read.
  static Result<BucketPolicy> Parse(std::string_view json, std::string_view bucket);

  PolicyDecision Evaluate(const PolicyRequest& request) const;

  // GetBucketPolicyStatus: whether the policy grants anyone ("*") an Allow that no
  // condition narrows to fixed sources (addresses, accounts, ARNs, VPCs), as S3 judges it.
  bool IsPublic() const;

  // Whether a condition of the policy reads a key that starts with `prefix` (lower-cased,
  // "s3:existingobjecttag/"), so that a caller fetches what only such keys need.
  bool NamesConditionKeys(std::string_view prefix) const;

  // The policy as it was put (GetBucketPolicy returns it unchanged).
  const std::string& text() const;
  std::size_t statement_count() const;

  struct Parsed;  // private to policy.cc

 private:
  explicit BucketPolicy(std::unique_ptr<Parsed> parsed);
  std::unique_ptr<Parsed> parsed_;
};

}  // namespace strata::auth
