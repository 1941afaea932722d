// Private to auth/: S3's permission names (the "s3:..." actions of a policy) and what each
// applies to, so a policy's Action is checked against real names (a typo is
// MalformedPolicy "Policy has invalid action", as in S3) and against its resources
// ("Action does not apply to any resource(s) in statement"). Pure; thread-safe.
#pragma once

#include <string_view>

namespace strata::auth::internal {

// What an action's resource is: the bucket's ARN, an object's, or neither (account-level,
// such as s3:ListAllMyBuckets, which no bucket policy can grant).
enum class ActionTarget { kBucket, kObject, kAccount };

struct ActionMatch {
  bool any = false;     // the pattern names at least one S3 action
  bool bucket = false;  // one of them applies to a bucket
  bool object = false;  // one of them applies to an object
};

// The S3 actions `pattern` ("s3:GetObject", "s3:Get*", "s3:*", "*"; case-insensitive) names.
ActionMatch MatchActions(std::string_view pattern);

}  // namespace strata::auth::internal
