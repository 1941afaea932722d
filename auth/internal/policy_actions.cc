#include "auth/internal/policy_actions.h"

#include <array>

#include "auth/internal/glob.h"

namespace strata::auth::internal {
namespace {

struct Action {
  std::string_view name;
  ActionTarget target;
};

constexpr auto B = ActionTarget::kBucket;
constexpr auto O = ActionTarget::kObject;
constexpr auto A = ActionTarget::kAccount;

// AWS's list of Amazon S3 actions (the Service Authorization Reference), without the
// s3: prefix: those of buckets and objects, and the account-level ones a bucket policy
// may name but never grants.
constexpr std::array kActions = {
    Action{"AbortMultipartUpload", O},
    Action{"BypassGovernanceRetention", O},
    Action{"CreateAccessPoint", A},
    Action{"CreateBucket", B},
    Action{"CreateJob", A},
    Action{"DeleteAccessPoint", A},
    Action{"DeleteBucket", B},
    Action{"DeleteBucketOwnershipControls", B},
    Action{"DeleteBucketPolicy", B},
    Action{"DeleteBucketWebsite", B},
    Action{"DeleteObject", O},
    Action{"DeleteObjectTagging", O},
    Action{"DeleteObjectVersion", O},
    Action{"DeleteObjectVersionTagging", O},
    Action{"GetAccelerateConfiguration", B},
    Action{"GetAccessPoint", A},
    Action{"GetAccountPublicAccessBlock", A},
    Action{"GetAnalyticsConfiguration", B},
    Action{"GetBucketAcl", B},
    Action{"GetBucketCORS", B},
    Action{"GetBucketLocation", B},
    Action{"GetBucketLogging", B},
    Action{"GetBucketNotification", B},
    Action{"GetBucketObjectLockConfiguration", B},
    Action{"GetBucketOwnershipControls", B},
    Action{"GetBucketPolicy", B},
    Action{"GetBucketPolicyStatus", B},
    Action{"GetBucketPublicAccessBlock", B},
    Action{"GetBucketRequestPayment", B},
    Action{"GetBucketTagging", B},
    Action{"GetBucketVersioning", B},
    Action{"GetBucketWebsite", B},
    Action{"GetEncryptionConfiguration", B},
    Action{"GetIntelligentTieringConfiguration", B},
    Action{"GetInventoryConfiguration", B},
    Action{"GetLifecycleConfiguration", B},
    Action{"GetMetricsConfiguration", B},
    Action{"GetObject", O},
    Action{"GetObjectAcl", O},
    Action{"GetObjectAttributes", O},
    Action{"GetObjectLegalHold", O},
    Action{"GetObjectRetention", O},
    Action{"GetObjectTagging", O},
    Action{"GetObjectTorrent", O},
    Action{"GetObjectVersion", O},
    Action{"GetObjectVersionAcl", O},
    Action{"GetObjectVersionAttributes", O},
    Action{"GetObjectVersionForReplication", O},
    Action{"GetObjectVersionTagging", O},
    Action{"GetObjectVersionTorrent", O},
    Action{"GetReplicationConfiguration", B},
    Action{"ListAccessPoints", A},
    Action{"ListAllMyBuckets", A},
    Action{"ListBucket", B},
    Action{"ListBucketMultipartUploads", B},
    Action{"ListBucketVersions", B},
    Action{"ListJobs", A},
    Action{"ListMultipartUploadParts", O},
    Action{"ObjectOwnerOverrideToBucketOwner", O},
    Action{"PutAccelerateConfiguration", B},
    Action{"PutAccountPublicAccessBlock", A},
    Action{"PutAnalyticsConfiguration", B},
    Action{"PutBucketAcl", B},
    Action{"PutBucketCORS", B},
    Action{"PutBucketLogging", B},
    Action{"PutBucketNotification", B},
    Action{"PutBucketObjectLockConfiguration", B},
    Action{"PutBucketOwnershipControls", B},
    Action{"PutBucketPolicy", B},
    Action{"PutBucketPublicAccessBlock", B},
    Action{"PutBucketRequestPayment", B},
    Action{"PutBucketTagging", B},
    Action{"PutBucketVersioning", B},
    Action{"PutBucketWebsite", B},
    Action{"PutEncryptionConfiguration", B},
    Action{"PutIntelligentTieringConfiguration", B},
    Action{"PutInventoryConfiguration", B},
    Action{"PutLifecycleConfiguration", B},
    Action{"PutMetricsConfiguration", B},
    Action{"PutObject", O},
    Action{"PutObjectAcl", O},
    Action{"PutObjectLegalHold", O},
    Action{"PutObjectRetention", O},
    Action{"PutObjectTagging", O},
    Action{"PutObjectVersionAcl", O},
    Action{"PutObjectVersionTagging", O},
    Action{"PutReplicationConfiguration", B},
    Action{"ReplicateDelete", O},
    Action{"ReplicateObject", O},
    Action{"ReplicateTags", O},
    Action{"RestoreObject", O},
};

}  // namespace

ActionMatch MatchActions(std::string_view pattern) {
  ActionMatch match;
  if (pattern == "*") {
    return ActionMatch{true, true, true};
  }
  // The service prefix, case-insensitively; its own wildcards ("s*:GetObject") are not
  // something S3 accepts either.
  if (pattern.size() < 3 || (pattern[0] | 0x20) != 's' || pattern[1] != '3' || pattern[2] != ':') {
    return match;
  }
  const std::string_view name = pattern.substr(3);
  for (const Action& action : kActions) {
    if (GlobMatch(name, action.name, /*fold_case=*/true)) {
      match.any = true;
      match.bucket |= action.target == ActionTarget::kBucket;
      match.object |= action.target == ActionTarget::kObject;
    }
  }
  return match;
}

}  // namespace strata::auth::internal
