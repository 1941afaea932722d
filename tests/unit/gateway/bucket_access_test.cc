#include "gateway/bucket_access.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

using auth::AuthResult;
using auth::MapConditionSource;

AuthResult User(std::string access_key, bool admin = false) {
  AuthResult auth;
  auth.principal.access_key = std::move(access_key);
  auth.principal.admin = admin;
  return auth;
}

AuthResult Anonymous() {
  AuthResult auth;
  auth.anonymous = true;
  return auth;
}

metadata::BucketRecord Bucket(std::string policy = "") {
  metadata::BucketRecord bucket;
  bucket.name = BucketName("data");
  bucket.owner = "alice";
  bucket.access.policy = std::move(policy);
  return bucket;
}

bool Allowed(const AuthResult& who, const metadata::BucketRecord& bucket, std::string_view action,
             std::string_view key = "",
             const auth::ConditionSource& conditions = MapConditionSource{},
             bool policy_operation = false) {
  auto r = DecideBucketAccess(
      who, bucket,
      AccessRequest{.action = action, .key = key, .policy_operation = policy_operation},
      conditions);
  if (!r.ok()) {
    EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  }
  return r.ok();
}

TEST(BucketAccess, WithoutAPolicyOnlyTheOwnerAndAdmins) {
  const auto bucket = Bucket();
  EXPECT_TRUE(Allowed(User("alice"), bucket, "s3:GetObject", "k"));
  EXPECT_TRUE(Allowed(User("root", /*admin=*/true), bucket, "s3:DeleteBucket"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:GetObject", "k"));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
}

// The S3 user guide's "Granting read-only permission to a public anonymous user".
constexpr const char* kPublicRead = R"({
  "Version": "2012-10-17",
  "Statement": [{
    "Sid": "PublicRead", "Effect": "Allow", "Principal": "*",
    "Action": ["s3:GetObject", "s3:GetObjectVersion"],
    "Resource": ["arn:aws:s3:::data/*"]
  }]
})";

TEST(BucketAccess, APublicReadPolicyLetsAnyoneReadObjectsAndNothingElse) {
  const auto bucket = Bucket(kPublicRead);
  for (const auto& who : {Anonymous(), User("bob")}) {
    EXPECT_TRUE(Allowed(who, bucket, "s3:GetObject", "k"));
    EXPECT_TRUE(Allowed(who, bucket, "s3:GetObjectVersion", "a/b/c"));
    EXPECT_FALSE(Allowed(who, bucket, "s3:PutObject", "k"));
    EXPECT_FALSE(Allowed(who, bucket, "s3:ListBucket"));
    EXPECT_FALSE(Allowed(who, bucket, "s3:GetObject"));  // the bucket is not an object
  }
  EXPECT_TRUE(Allowed(User("alice"), bucket, "s3:PutObject", "k"));
  // An operation no policy grants (empty action) is the owner's only.
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "", "k"));
  EXPECT_TRUE(Allowed(User("alice"), bucket, "", "k"));
}

TEST(BucketAccess, GrantsToAnotherUserByArnOrCanonicalId) {
  const std::string policy = R"({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"AWS": ")" +
                             UserArn("bob") + R"("},
     "Action": ["s3:ListBucket"], "Resource": "arn:aws:s3:::data"},
    {"Effect": "Allow", "Principal": {"CanonicalUser": ")" +
                             CanonicalUserId("carol") + R"("},
     "Action": "s3:PutObject", "Resource": "arn:aws:s3:::data/uploads/*"}]})";
  const auto bucket = Bucket(policy);
  EXPECT_TRUE(Allowed(User("bob"), bucket, "s3:ListBucket"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:PutObject", "uploads/x"));
  EXPECT_TRUE(Allowed(User("carol"), bucket, "s3:PutObject", "uploads/x"));
  EXPECT_FALSE(Allowed(User("carol"), bucket, "s3:PutObject", "other/x"));
  EXPECT_FALSE(Allowed(User("dave"), bucket, "s3:ListBucket"));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
}

TEST(BucketAccess, AnExplicitDenyBindsTheOwnerButNeverOnThePolicyItself) {
  const auto bucket = Bucket(R"({"Statement": [{"Effect": "Deny", "Principal": "*",
      "Action": "s3:*", "Resource": ["arn:aws:s3:::data", "arn:aws:s3:::data/*"]}]})");
  EXPECT_FALSE(Allowed(User("alice"), bucket, "s3:GetObject", "k"));
  EXPECT_FALSE(Allowed(User("root", true), bucket, "s3:DeleteBucket"));
  EXPECT_FALSE(Allowed(User("alice"), bucket, "s3:PutBucketPolicy"));
  for (const char* action : {"s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy"}) {
    EXPECT_TRUE(Allowed(User("alice"), bucket, action, "", MapConditionSource{}, true)) << action;
    EXPECT_TRUE(Allowed(User("root", true), bucket, action, "", MapConditionSource{}, true));
    EXPECT_FALSE(Allowed(User("bob"), bucket, action, "", MapConditionSource{}, true));
  }
}

// The S3 user guide's "Managing access based on specific IP addresses".
TEST(BucketAccess, ConditionsReadTheRequest) {
  const auto bucket = Bucket(R"({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
    "Resource": "arn:aws:s3:::data/*",
    "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"},
                  "NotIpAddress": {"aws:SourceIp": "127.0.0.66/32"}}}]})");
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:GetObject", "k",
                      MapConditionSource{{"aws:sourceip", {"127.0.0.1"}}}));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k",
                       MapConditionSource{{"aws:sourceip", {"127.0.0.66"}}}));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k",
                       MapConditionSource{{"aws:sourceip", {"10.1.2.3"}}}));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));  // no address: no match
}

TEST(BucketAccess, RestrictPublicBucketsKeepsAPublicPolicysGrantsToTheOwner) {
  auto bucket = Bucket(R"({"Statement": [
      {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
       "Resource": "arn:aws:s3:::data/*"},
      {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject",
       "Resource": "arn:aws:s3:::data/*"}]})");
  bucket.access.public_access_block = metadata::PublicAccessBlock{false, false, false, true};
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:GetObject", "k"));
  EXPECT_TRUE(Allowed(User("alice"), bucket, "s3:GetObject", "k"));
  EXPECT_FALSE(Allowed(User("alice"), bucket, "s3:DeleteObject", "k"));  // Deny still binds
  // Not public (narrowed to an address): its grants stand.
  bucket.access.policy = R"({"Statement": [{"Effect": "Allow", "Principal": "*",
      "Action": "s3:GetObject", "Resource": "arn:aws:s3:::data/*",
      "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.1/32"}}}]})";
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:GetObject", "k",
                      MapConditionSource{{"aws:sourceip", {"127.0.0.1"}}}));
  // The flag off: public again.
  bucket.access.policy = R"({"Statement": [{"Effect": "Allow", "Principal": "*",
      "Action": "s3:GetObject", "Resource": "arn:aws:s3:::data/*"}]})";
  bucket.access.public_access_block->restrict_public_buckets = false;
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
}

TEST(BucketAccess, AStoredPolicyThatDoesNotParseGrantsNothing) {
  const auto bucket = Bucket(R"({"Statement": "not a statement"})");
  EXPECT_EQ(PolicyOf(bucket), nullptr);
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
  EXPECT_TRUE(Allowed(User("alice"), bucket, "s3:GetObject", "k"));
}

TEST(BucketAccess, ThePolicyIsParsedAgainWhenItChanges) {
  auto bucket = Bucket(kPublicRead);
  auto first = PolicyOf(bucket);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(PolicyOf(bucket), first);  // cached
  bucket.access.policy = R"({"Statement": [{"Effect": "Allow", "Principal": "*",
      "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::data"}]})";
  auto second = PolicyOf(bucket);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
  bucket.access.policy.clear();
  EXPECT_EQ(PolicyOf(bucket), nullptr);
}

bool AllowedWith(const AuthResult& who, const metadata::BucketRecord& bucket,
                 std::string_view action, std::string_view key,
                 const metadata::ObjectRecord* object) {
  return DecideBucketAccess(who, bucket,
                            AccessRequest{.action = action, .key = key, .object = object},
                            MapConditionSource{})
      .ok();
}

metadata::Acl Grants(std::initializer_list<metadata::AclGrant> grants) { return grants; }

TEST(BucketAccess, ABucketAclGrantsListingAndWriting) {
  auto bucket = Bucket();
  bucket.access.acl =
      Grants({{metadata::AclGrantee::kUser, "alice", metadata::AclPermission::kFullControl},
              {metadata::AclGrantee::kAllUsers, "", metadata::AclPermission::kRead},
              {metadata::AclGrantee::kUser, "bob", metadata::AclPermission::kWrite}});
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
  EXPECT_TRUE(Allowed(User("carol"), bucket, "s3:ListBucketVersions"));
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:PutObject", "k"));
  EXPECT_TRUE(Allowed(User("bob"), bucket, "s3:PutObject", "k"));
  EXPECT_TRUE(Allowed(User("bob"), bucket, "s3:DeleteObject", "k"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:GetBucketAcl"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:PutBucketPolicy"));
  // Bucket READ reads no object: that is the object's ACL's to grant.
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:GetObject", "k"));
  // IgnorePublicAcls: the public grant counts for nothing, bob's still does.
  bucket.access.public_access_block = metadata::PublicAccessBlock{false, true, false, false};
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
  EXPECT_TRUE(Allowed(User("bob"), bucket, "s3:PutObject", "k"));
  // BucketOwnerEnforced: ACLs are off altogether.
  bucket.access.public_access_block.reset();
  bucket.access.object_ownership = "BucketOwnerEnforced";
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
  EXPECT_FALSE(Allowed(User("bob"), bucket, "s3:PutObject", "k"));
  EXPECT_TRUE(Allowed(User("alice"), bucket, "s3:PutObject", "k"));
}

TEST(BucketAccess, AnObjectAclGrantsReadingItAndItsOwnerItsAcl) {
  const auto bucket = Bucket();
  metadata::ObjectRecord object;
  object.owner = "bob";  // written by bob under ObjectWriter
  object.acl = Grants({{metadata::AclGrantee::kUser, "bob", metadata::AclPermission::kRead},
                       {metadata::AclGrantee::kAllUsers, "", metadata::AclPermission::kRead}});
  EXPECT_TRUE(AllowedWith(Anonymous(), bucket, "s3:GetObject", "k", &object));
  EXPECT_TRUE(AllowedWith(User("carol"), bucket, "s3:GetObjectVersion", "k", &object));
  EXPECT_FALSE(AllowedWith(Anonymous(), bucket, "s3:GetObjectAcl", "k", &object));
  // Its owner may always read and change its ACL, whatever the ACL says.
  EXPECT_TRUE(AllowedWith(User("bob"), bucket, "s3:GetObjectAcl", "k", &object));
  EXPECT_TRUE(AllowedWith(User("bob"), bucket, "s3:PutObjectAcl", "k", &object));
  EXPECT_FALSE(AllowedWith(User("carol"), bucket, "s3:PutObjectAcl", "k", &object));
  // Without the version read, only the bucket decides.
  EXPECT_FALSE(AllowedWith(Anonymous(), bucket, "s3:GetObject", "k", nullptr));
  // A version recorded without an owner is the bucket owner's and private.
  metadata::ObjectRecord legacy;
  legacy.acl = object.acl;  // never consulted without an owner
  EXPECT_FALSE(AllowedWith(Anonymous(), bucket, "s3:GetObject", "k", &legacy));
  EXPECT_TRUE(AllowedWith(User("alice"), bucket, "s3:GetObject", "k", &legacy));
  // A delete marker grants nothing.
  metadata::ObjectRecord marker = object;
  marker.delete_marker = true;
  EXPECT_FALSE(AllowedWith(Anonymous(), bucket, "s3:GetObject", "k", &marker));
}

TEST(BucketAccess, TheVersionIsReadOnlyWhenItsAclCouldDecide) {
  auto bucket = Bucket();
  EXPECT_TRUE(
      ObjectAclMayAllow(Anonymous(), bucket, AccessRequest{.action = "s3:GetObject", .key = "k"}));
  EXPECT_FALSE(ObjectAclMayAllow(User("alice"), bucket,
                                 AccessRequest{.action = "s3:GetObject", .key = "k"}));
  EXPECT_FALSE(
      ObjectAclMayAllow(Anonymous(), bucket, AccessRequest{.action = "s3:PutObject", .key = "k"}));
  EXPECT_FALSE(ObjectAclMayAllow(Anonymous(), bucket, AccessRequest{.action = "s3:GetObject"}));
  bucket.access.object_ownership = "BucketOwnerEnforced";
  EXPECT_FALSE(
      ObjectAclMayAllow(Anonymous(), bucket, AccessRequest{.action = "s3:GetObject", .key = "k"}));
}

TEST(BucketAccess, APolicyDenyWinsOverAnAclGrant) {
  auto bucket = Bucket(R"({"Statement": [{"Effect": "Deny", "Principal": "*",
      "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::data"}]})");
  bucket.access.acl =
      Grants({{metadata::AclGrantee::kAllUsers, "", metadata::AclPermission::kRead}});
  EXPECT_FALSE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
  bucket.access.policy = kPublicRead;  // no Deny: the ACL's grant stands beside the policy
  EXPECT_TRUE(Allowed(Anonymous(), bucket, "s3:ListBucket"));
}

}  // namespace
}  // namespace strata::gateway
