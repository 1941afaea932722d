// The AccessControlPolicy XML of Get/Put Bucket/Object Acl (issue 20). Pure logic;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gateway/acl.h"
#include "metadata/records.h"

namespace strata::gateway {

// S3 allows at most this many grants in one ACL.
inline constexpr std::size_t kMaxAclGrants = 100;

struct AccessControlPolicy {
  std::optional<std::string> owner_id;  // the Owner's ID, when the document names one
  metadata::Acl acl;
};

// PutBucketAcl's and PutObjectAcl's body. Errors as S3's: kMalformedAcl for a body that is
// not such a document (not XML, unknown elements, a grant without a grantee or with an
// unknown permission, more than kMaxAclGrants grants); kInvalidArgument for a canonical id
// no user has or an unknown group URI; kUnresolvableGrantByEmailAddress for an email
// grantee; kUnavailable when the XML budget is spent (gateway/xml_load.h).
Result<AccessControlPolicy> ParseAccessControlPolicy(std::string_view body,
                                                     const CanonicalIdResolver& resolve);

// The document GetBucketAcl and GetObjectAcl answer: `owner`'s Owner and the grants
// (users by canonical id and display name, groups by URI).
std::string AccessControlPolicyXml(std::string_view owner, const metadata::Acl& acl);

}  // namespace strata::gateway
