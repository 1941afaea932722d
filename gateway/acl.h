// S3's access control lists (issue 20): canned ACLs, the x-amz-grant-* headers, which
// permission an action needs, and whether an ACL grants it. Pure logic; thread-safe.
//
// strata's users are S3's accounts: a grant names a user by its canonical id (derived
// from its name, gateway/identity.h) or one of S3's groups by URI. An ACL is kept as the
// grants S3 would show (metadata::Acl), with user names in place of canonical ids.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::gateway {

inline constexpr std::string_view kAllUsersUri = "http://acs.amazonaws.com/groups/global/AllUsers";
inline constexpr std::string_view kAuthenticatedUsersUri =
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
inline constexpr std::string_view kLogDeliveryUri =
    "http://acs.amazonaws.com/groups/s3/LogDelivery";

// "FULL_CONTROL", "READ", ...; and back (nullopt for another name).
std::string_view PermissionName(metadata::AclPermission permission);
std::optional<metadata::AclPermission> ParsePermission(std::string_view name);
// A group's URI; and back (nullopt for another URI). kUser has none.
std::string_view GroupUri(metadata::AclGrantee group);
std::optional<metadata::AclGrantee> GroupOfUri(std::string_view uri);

// `owner`'s private ACL: one FULL_CONTROL grant to it (the canned "private").
metadata::Acl PrivateAcl(std::string_view owner);

// The canned ACL `name` (x-amz-acl) of a resource owned by `owner` in a bucket owned by
// `bucket_owner` (the same user for a bucket). kInvalidArgument for a name S3 does not
// know. aws-exec-read's grant to Amazon EC2 has no strata grantee: it is private.
Result<metadata::Acl> CannedAcl(std::string_view name, std::string_view owner,
                                std::string_view bucket_owner);

// The strata user a canonical id names, or nullopt when it names none.
using CanonicalIdResolver = std::function<std::optional<std::string>(std::string_view)>;

// The grants of the x-amz-grant-* headers: (permission, header value) pairs, each value a
// comma-separated list of `id="..."`, `uri="..."` or `emailAddress="..."`. Errors as S3's:
// kInvalidArgument for a value that does not parse, an id no user has or an unknown
// group; kUnresolvableGrantByEmailAddress for an email grantee (strata's users have none).
Result<metadata::Acl> GrantHeadersAcl(
    std::span<const std::pair<metadata::AclPermission, std::string_view>> headers,
    const CanonicalIdResolver& resolve);

// Which ACL, if any, can grant an action, and the permission it takes: S3's mapping of ACL
// permissions to actions (bucket READ: the listings; bucket WRITE: writing and deleting
// objects; READ_ACP / WRITE_ACP: reading / writing the ACL; object READ: reading it).
enum class AclScope : std::uint8_t { kNone, kBucket, kObject };
struct AclRequirement {
  AclScope scope = AclScope::kNone;
  metadata::AclPermission permission = metadata::AclPermission::kRead;
};
AclRequirement AclRequirementOf(std::string_view action);

// Who asks: an anonymous caller, or the named user.
struct AclCaller {
  bool anonymous = true;
  std::string_view user = {};
};

// Whether `acl` grants `caller` `permission` (FULL_CONTROL grants every permission). With
// `ignore_public` (the bucket's IgnorePublicAcls), grants to AllUsers and
// AuthenticatedUsers count for nothing.
bool AclGrants(const metadata::Acl& acl, const AclCaller& caller,
               metadata::AclPermission permission, bool ignore_public);

// Whether `acl` grants anything to AllUsers or AuthenticatedUsers (what BlockPublicAcls
// refuses).
bool IsPublicAcl(const metadata::Acl& acl);

// Whether every grant of `acl` is to `owner`: the only ACLs a bucket whose ownership is
// BucketOwnerEnforced accepts (private, bucket-owner-full-control and their equivalents).
bool GrantsOnlyTo(const metadata::Acl& acl, std::string_view owner);

// The owner and ACL of a version as they apply: a version recorded without an owner
// (before owners were recorded) is the bucket owner's, with its private ACL.
std::string_view EffectiveOwner(const metadata::ObjectRecord& object,
                                const metadata::BucketRecord& bucket);
metadata::Acl EffectiveAcl(const metadata::ObjectRecord& object,
                           const metadata::BucketRecord& bucket);

}  // namespace strata::gateway
