#include "gateway/acl.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/text.h"

namespace strata::gateway {
namespace {

using metadata::Acl;
using metadata::AclGrant;
using metadata::AclGrantee;
using metadata::AclPermission;

constexpr std::array<std::pair<AclPermission, std::string_view>, 5> kPermissionNames = {{
    {AclPermission::kFullControl, "FULL_CONTROL"},
    {AclPermission::kRead, "READ"},
    {AclPermission::kWrite, "WRITE"},
    {AclPermission::kReadAcp, "READ_ACP"},
    {AclPermission::kWriteAcp, "WRITE_ACP"},
}};

AclGrant UserGrant(std::string_view user, AclPermission permission) {
  return AclGrant{AclGrantee::kUser, std::string(user), permission};
}

AclGrant GroupGrant(AclGrantee group, AclPermission permission) {
  return AclGrant{group, std::string(), permission};
}

Error BadGrantHeader(std::string_view value) {
  return Error(ErrorCode::kInvalidArgument, "Invalid grant header value: " + std::string(value));
}

// One `type="value"` of a grant header into its grant.
Result<AclGrant> HeaderGrant(std::string_view item, AclPermission permission,
                             const CanonicalIdResolver& resolve) {
  const auto equals = item.find('=');
  if (equals == std::string_view::npos) {
    return BadGrantHeader(item);
  }
  std::string type(TrimBlanks(item.substr(0, equals)));
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = TrimBlanks(item.substr(equals + 1));
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  if (type == "id") {
    auto user = resolve(value);
    if (!user) {
      return Error(ErrorCode::kInvalidArgument, "Invalid id");
    }
    return UserGrant(*user, permission);
  }
  if (type == "uri") {
    auto group = GroupOfUri(value);
    if (!group) {
      return Error(ErrorCode::kInvalidArgument, "Invalid group uri");
    }
    return GroupGrant(*group, permission);
  }
  if (type == "emailaddress") {
    return Error(ErrorCode::kUnresolvableGrantByEmailAddress,
                 "The e-mail address you provided does not match any account on record.");
  }
  return BadGrantHeader(item);
}

bool CallerIs(const AclGrant& grant, const AclCaller& caller, bool ignore_public) {
  switch (grant.grantee) {
    case AclGrantee::kUser:
      return !caller.anonymous && grant.user == caller.user;
    case AclGrantee::kAllUsers:
      return !ignore_public;
    case AclGrantee::kAuthenticatedUsers:
      return !ignore_public && !caller.anonymous;
    case AclGrantee::kLogDelivery:
      return false;
  }
  return false;
}

}  // namespace

std::string_view PermissionName(AclPermission permission) {
  for (const auto& [value, name] : kPermissionNames) {
    if (value == permission) {
      return name;
    }
  }
  return "READ";  // not reached: every enumerator is in the table
}

std::optional<AclPermission> ParsePermission(std::string_view name) {
  for (const auto& [value, known] : kPermissionNames) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::string_view GroupUri(AclGrantee group) {
  switch (group) {
    case AclGrantee::kAllUsers:
      return kAllUsersUri;
    case AclGrantee::kAuthenticatedUsers:
      return kAuthenticatedUsersUri;
    case AclGrantee::kLogDelivery:
      return kLogDeliveryUri;
    case AclGrantee::kUser:
      break;
  }
  return {};
}

std::optional<AclGrantee> GroupOfUri(std::string_view uri) {
  for (auto group :
       {AclGrantee::kAllUsers, AclGrantee::kAuthenticatedUsers, AclGrantee::kLogDelivery}) {
    if (uri == GroupUri(group)) {
      return group;
    }
  }
  return std::nullopt;
}

Acl PrivateAcl(std::string_view owner) { return {UserGrant(owner, AclPermission::kFullControl)}; }

Result<Acl> CannedAcl(std::string_view name, std::string_view owner,
                      std::string_view bucket_owner) {
  // The groups' grants come first, then the owner's (the order Ceph RGW gives, which
  // ceph/s3-tests compares; S3 gives grants in no documented order).
  Acl acl;
  if (name == "private" || name == "aws-exec-read") {
    return PrivateAcl(owner);
  }
  if (name == "public-read") {
    acl.push_back(GroupGrant(AclGrantee::kAllUsers, AclPermission::kRead));
  } else if (name == "public-read-write") {
    acl.push_back(GroupGrant(AclGrantee::kAllUsers, AclPermission::kRead));
    acl.push_back(GroupGrant(AclGrantee::kAllUsers, AclPermission::kWrite));
  } else if (name == "authenticated-read") {
    acl.push_back(GroupGrant(AclGrantee::kAuthenticatedUsers, AclPermission::kRead));
  } else if (name == "log-delivery-write") {
    acl.push_back(GroupGrant(AclGrantee::kLogDelivery, AclPermission::kWrite));
    acl.push_back(GroupGrant(AclGrantee::kLogDelivery, AclPermission::kReadAcp));
  } else if (name != "bucket-owner-read" && name != "bucket-owner-full-control") {
    return Error(ErrorCode::kInvalidArgument, "Invalid canned ACL: " + std::string(name));
  }
  acl.push_back(UserGrant(owner, AclPermission::kFullControl));
  if (bucket_owner != owner && name == "bucket-owner-read") {
    acl.push_back(UserGrant(bucket_owner, AclPermission::kRead));
  } else if (bucket_owner != owner && name == "bucket-owner-full-control") {
    acl.push_back(UserGrant(bucket_owner, AclPermission::kFullControl));
  }
  return acl;
}

Result<Acl> GrantHeadersAcl(std::span<const std::pair<AclPermission, std::string_view>> headers,
                            const CanonicalIdResolver& resolve) {
  Acl acl;
  for (const auto& [permission, value] : headers) {
    // Items are separated by commas outside quotes (a quoted value holds none in practice,
    // but an email address may hold anything).
    std::size_t start = 0;
    bool quoted = false;
    for (std::size_t i = 0; i <= value.size(); ++i) {
      if (i < value.size() && value[i] == '"') {
        quoted = !quoted;
      }
      if (i < value.size() && (quoted || value[i] != ',')) {
        continue;
      }
      const std::string_view item = TrimBlanks(value.substr(start, i - start));
      start = i + 1;
      if (item.empty()) {
        return BadGrantHeader(value);
      }
      auto grant = HeaderGrant(item, permission, resolve);
      if (!grant.ok()) {
        return std::move(grant).error();
      }
      acl.push_back(std::move(*grant));
    }
    if (quoted) {
      return BadGrantHeader(value);
    }
  }
  return acl;
}

AclRequirement AclRequirementOf(std::string_view action) {
  struct Entry {
    std::string_view action;
    AclScope scope;
    AclPermission permission;
  };
  static constexpr Entry kMapping[] = {
      {"s3:ListBucket", AclScope::kBucket, AclPermission::kRead},
      {"s3:ListBucketVersions", AclScope::kBucket, AclPermission::kRead},
      {"s3:ListBucketMultipartUploads", AclScope::kBucket, AclPermission::kRead},
      {"s3:PutObject", AclScope::kBucket, AclPermission::kWrite},
      {"s3:DeleteObject", AclScope::kBucket, AclPermission::kWrite},
      {"s3:DeleteObjectVersion", AclScope::kBucket, AclPermission::kWrite},
      {"s3:AbortMultipartUpload", AclScope::kBucket, AclPermission::kWrite},
      {"s3:GetBucketAcl", AclScope::kBucket, AclPermission::kReadAcp},
      {"s3:PutBucketAcl", AclScope::kBucket, AclPermission::kWriteAcp},
      {"s3:GetObject", AclScope::kObject, AclPermission::kRead},
      {"s3:GetObjectVersion", AclScope::kObject, AclPermission::kRead},
      {"s3:GetObjectAcl", AclScope::kObject, AclPermission::kReadAcp},
      {"s3:GetObjectVersionAcl", AclScope::kObject, AclPermission::kReadAcp},
      {"s3:PutObjectAcl", AclScope::kObject, AclPermission::kWriteAcp},
      {"s3:PutObjectVersionAcl", AclScope::kObject, AclPermission::kWriteAcp},
  };
  for (const auto& entry : kMapping) {
    if (entry.action == action) {
      return {entry.scope, entry.permission};
    }
  }
  return {};
}

bool AclGrants(const Acl& acl, const AclCaller& caller, AclPermission permission,
               bool ignore_public) {
  return std::any_of(acl.begin(), acl.end(), [&](const AclGrant& grant) {
    return (grant.permission == permission || grant.permission == AclPermission::kFullControl) &&
           CallerIs(grant, caller, ignore_public);
  });
}

bool IsPublicAcl(const Acl& acl) {
  return std::any_of(acl.begin(), acl.end(), [](const AclGrant& grant) {
    return grant.grantee == AclGrantee::kAllUsers ||
           grant.grantee == AclGrantee::kAuthenticatedUsers;
  });
}

bool GrantsOnlyTo(const Acl& acl, std::string_view owner) {
  return std::all_of(acl.begin(), acl.end(), [owner](const AclGrant& grant) {
    return grant.grantee == AclGrantee::kUser && grant.user == owner;
  });
}

std::string_view EffectiveOwner(const metadata::ObjectRecord& object,
                                const metadata::BucketRecord& bucket) {
  return object.owner.empty() ? std::string_view(bucket.owner) : std::string_view(object.owner);
}

Acl EffectiveAcl(const metadata::ObjectRecord& object, const metadata::BucketRecord& bucket) {
  if (object.owner.empty()) {
    return PrivateAcl(bucket.owner);
  }
  return object.acl;
}

}  // namespace strata::gateway
