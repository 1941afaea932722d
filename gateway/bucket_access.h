// Who may do what with a bucket and its objects (issue 20): the decision a request on a
// bucket passes before its handler reads a body byte, from the request head alone.
//
// S3's order of evaluation, for strata's users (each one is like an AWS account of its
// own, its buckets' root user): an explicit Deny of the bucket's policy refuses; an Allow
// of the policy grants; the bucket's owner (and strata's admin users, the operators) may
// do anything with it; else an ACL may grant the action (gateway/acl.h: the bucket's, or
// the addressed version's, whose owner may always read and write its ACL), unless the
// bucket's ownership is BucketOwnerEnforced (ACLs are off); else nothing is allowed.
// While the bucket's public access block restricts public buckets and its policy is
// public, the policy's Allows count for the owner only; IgnorePublicAcls makes the ACLs'
// public grants count for nothing. An anonymous caller (no signature at all) is "*" to
// the policy, AllUsers to the ACLs, and owns nothing. So that no policy can lock its
// bucket away, the owner and admins are never denied Get/Put/DeleteBucketPolicy, as AWS
// never denies them to the bucket owner account's root user.
//
// Thread-safe: a bucket's parsed policy is cached per thread (each core parses a policy
// once after it changes, and no lock is shared on the request path).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "auth/policy.h"
#include "common/error.h"
#include "gateway/handlers/context.h"
#include "gateway/identity.h"
#include "metadata/records.h"

namespace strata::gateway {

struct AccessRequest {
  // S3's name of the permission ("s3:GetObject"); empty for an operation that no policy
  // grants (only the owner's rights apply).
  std::string_view action = {};
  std::string_view key = {};  // the object's key; empty for the bucket itself
  // A policy operation (Get/Put/DeleteBucketPolicy): never denied to the owner or admins.
  bool policy_operation = false;
  // The addressed version, when read (its tags for s3:ExistingObjectTag/, its owner and
  // ACL); nullptr otherwise.
  const metadata::ObjectRecord* object = nullptr;
};

// Ok, or kAccessDenied. `bucket` is the bucket addressed (for a copy, the source's).
Result<void> AuthorizeBucketAccess(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                                   const AccessRequest& access);

// The decision itself, for a caller `auth` whose request's condition values `conditions`
// gives (AuthorizeBucketAccess reads them from the request: gateway/request_conditions.h).
Result<void> DecideBucketAccess(const auth::AuthResult& auth, const metadata::BucketRecord& bucket,
                                const AccessRequest& access,
                                const auth::ConditionSource& conditions);

// Whether the caller is the bucket's owner or an admin: its own rights, beside any policy.
bool OwnsOrAdministers(const auth::AuthResult& auth, const metadata::BucketRecord& bucket);

// Whether the addressed version's ACL could allow what the bucket alone does not: the
// action is one an object ACL grants, ACLs are on, and the caller is not the owner. Then
// the caller reads the version and decides again with it (AccessRequest::object).
bool ObjectAclMayAllow(const auth::AuthResult& auth, const metadata::BucketRecord& bucket,
                       const AccessRequest& access);

// Whether the bucket's ownership turns ACLs off (BucketOwnerEnforced).
bool AclsDisabled(const metadata::BucketRecord& bucket);

// The parsed policy of `bucket` (nullptr when it has none). A stored policy always
// parses (PutBucketPolicy checked it); one that does not (written by a later build) is
// logged and treated as a policy that grants nothing.
std::shared_ptr<const auth::BucketPolicy> PolicyOf(const metadata::BucketRecord& bucket);

}  // namespace strata::gateway
