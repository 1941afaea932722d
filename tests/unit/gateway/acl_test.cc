#include "gateway/acl.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gateway/identity.h"

namespace strata::gateway {
namespace {

using metadata::Acl;
using metadata::AclGrant;
using metadata::AclGrantee;
using metadata::AclPermission;

AclGrant User(std::string name, AclPermission permission) {
  return AclGrant{AclGrantee::kUser, std::move(name), permission};
}
AclGrant Group(AclGrantee group, AclPermission permission) {
  return AclGrant{group, "", permission};
}

// Knows alice and bob by their canonical ids.
std::optional<std::string> Resolve(std::string_view id) {
  for (const char* name : {"alice", "bob"}) {
    if (CanonicalUserId(name) == id) {
      return std::string(name);
    }
  }
  return std::nullopt;
}

TEST(Acl, CannedAclsGrantWhatS3Grants) {
  const auto fc = AclPermission::kFullControl;
  EXPECT_EQ(*CannedAcl("private", "bob", "alice"), (Acl{User("bob", fc)}));
  // Groups first, then the owner: the order ceph/s3-tests expects (Ceph RGW's).
  EXPECT_EQ(*CannedAcl("public-read", "bob", "alice"),
            (Acl{Group(AclGrantee::kAllUsers, AclPermission::kRead), User("bob", fc)}));
  EXPECT_EQ(*CannedAcl("public-read-write", "bob", "alice"),
            (Acl{Group(AclGrantee::kAllUsers, AclPermission::kRead),
                 Group(AclGrantee::kAllUsers, AclPermission::kWrite), User("bob", fc)}));
  EXPECT_EQ(*CannedAcl("authenticated-read", "bob", "alice"),
            (Acl{Group(AclGrantee::kAuthenticatedUsers, AclPermission::kRead), User("bob", fc)}));
  EXPECT_EQ(*CannedAcl("bucket-owner-read", "bob", "alice"),
            (Acl{User("bob", fc), User("alice", AclPermission::kRead)}));
  EXPECT_EQ(*CannedAcl("bucket-owner-full-control", "bob", "alice"),
            (Acl{User("bob", fc), User("alice", fc)}));
  // The bucket owner writing its own object: one grant, not two.
  EXPECT_EQ(*CannedAcl("bucket-owner-full-control", "alice", "alice"), (Acl{User("alice", fc)}));
  EXPECT_EQ(*CannedAcl("log-delivery-write", "alice", "alice"),
            (Acl{Group(AclGrantee::kLogDelivery, AclPermission::kWrite),
                 Group(AclGrantee::kLogDelivery, AclPermission::kReadAcp), User("alice", fc)}));
  EXPECT_EQ(*CannedAcl("aws-exec-read", "bob", "alice"), (Acl{User("bob", fc)}));
  for (const char* bad : {"", "Private", "public", "public-read ", "x"}) {
    auto acl = CannedAcl(bad, "bob", "alice");
    ASSERT_FALSE(acl.ok()) << bad;
    EXPECT_EQ(acl.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(Acl, GrantHeadersNameUsersByIdAndGroupsByUri) {
  const std::string alice = CanonicalUserId("alice");
  const std::string bob = CanonicalUserId("bob");
  const std::string read = "id=\"" + alice + "\", uri=\"" + std::string(kAllUsersUri) + "\"";
  const std::string full = "ID=" + bob;
  const std::vector<std::pair<AclPermission, std::string_view>> owned = {
      {AclPermission::kRead, read}, {AclPermission::kFullControl, full}};
  auto acl = GrantHeadersAcl(owned, Resolve);
  ASSERT_TRUE(acl.ok()) << acl.error().message;
  EXPECT_EQ(*acl, (Acl{User("alice", AclPermission::kRead),
                       Group(AclGrantee::kAllUsers, AclPermission::kRead),
                       User("bob", AclPermission::kFullControl)}));
}

TEST(Acl, GrantHeadersRefuseWhatS3Refuses) {
  auto code_of = [](std::string value) {
    const std::vector<std::pair<AclPermission, std::string_view>> headers = {
        {AclPermission::kWrite, value}};
    auto acl = GrantHeadersAcl(headers, Resolve);
    return acl.ok() ? ErrorCode::kInternal : acl.error().code;
  };
  EXPECT_EQ(code_of("id=\"" + CanonicalUserId("mallory") + "\""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("uri=\"http://acs.amazonaws.com/groups/global/Nobody\""),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("emailAddress=\"a@example.com\""), ErrorCode::kUnresolvableGrantByEmailAddress);
  EXPECT_EQ(code_of("name=alice"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("alice"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("id=\"" + CanonicalUserId("alice") + "\",,"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("id=\"unterminated"), ErrorCode::kInvalidArgument);
}

TEST(Acl, PermissionsMapToActionsAsS3MapsThem) {
  EXPECT_EQ(AclRequirementOf("s3:ListBucket").scope, AclScope::kBucket);
  EXPECT_EQ(AclRequirementOf("s3:ListBucket").permission, AclPermission::kRead);
  EXPECT_EQ(AclRequirementOf("s3:PutObject").permission, AclPermission::kWrite);
  EXPECT_EQ(AclRequirementOf("s3:PutObject").scope, AclScope::kBucket);
  EXPECT_EQ(AclRequirementOf("s3:GetObject").scope, AclScope::kObject);
  EXPECT_EQ(AclRequirementOf("s3:GetObjectVersionAcl").permission, AclPermission::kReadAcp);
  EXPECT_EQ(AclRequirementOf("s3:PutBucketAcl").permission, AclPermission::kWriteAcp);
  EXPECT_EQ(AclRequirementOf("s3:PutBucketPolicy").scope, AclScope::kNone);
  EXPECT_EQ(AclRequirementOf("s3:GetObjectTagging").scope, AclScope::kNone);
  EXPECT_EQ(AclRequirementOf("").scope, AclScope::kNone);
}

TEST(Acl, GrantsMatchCallersAndFullControlGrantsAll) {
  const Acl acl{User("bob", AclPermission::kFullControl),
                Group(AclGrantee::kAuthenticatedUsers, AclPermission::kRead),
                Group(AclGrantee::kAllUsers, AclPermission::kReadAcp),
                Group(AclGrantee::kLogDelivery, AclPermission::kWrite)};
  const AclCaller bob{false, "bob"};
  const AclCaller carol{false, "carol"};
  const AclCaller anonymous{true, ""};
  for (auto p : {AclPermission::kRead, AclPermission::kWrite, AclPermission::kReadAcp,
                 AclPermission::kWriteAcp, AclPermission::kFullControl}) {
    EXPECT_TRUE(AclGrants(acl, bob, p, false));
  }
  EXPECT_TRUE(AclGrants(acl, carol, AclPermission::kRead, false));
  EXPECT_FALSE(AclGrants(acl, carol, AclPermission::kWrite, false));  // log delivery's only
  EXPECT_FALSE(AclGrants(acl, anonymous, AclPermission::kRead, false));
  EXPECT_TRUE(AclGrants(acl, anonymous, AclPermission::kReadAcp, false));
  // An anonymous caller is never a named user, even one named "".
  EXPECT_FALSE(
      AclGrants(Acl{User("", AclPermission::kRead)}, anonymous, AclPermission::kRead, false));
  // IgnorePublicAcls: the groups' grants count for nothing; users' still do.
  EXPECT_FALSE(AclGrants(acl, carol, AclPermission::kRead, true));
  EXPECT_FALSE(AclGrants(acl, anonymous, AclPermission::kReadAcp, true));
  EXPECT_TRUE(AclGrants(acl, bob, AclPermission::kRead, true));
}

TEST(Acl, PublicAndOwnerOnlyAcls) {
  EXPECT_TRUE(IsPublicAcl(*CannedAcl("public-read", "a", "a")));
  EXPECT_TRUE(IsPublicAcl(*CannedAcl("authenticated-read", "a", "a")));
  EXPECT_FALSE(IsPublicAcl(*CannedAcl("log-delivery-write", "a", "a")));
  EXPECT_FALSE(IsPublicAcl(*CannedAcl("bucket-owner-full-control", "b", "a")));
  EXPECT_TRUE(GrantsOnlyTo(*CannedAcl("private", "a", "a"), "a"));
  EXPECT_TRUE(GrantsOnlyTo(*CannedAcl("bucket-owner-full-control", "a", "a"), "a"));
  EXPECT_FALSE(GrantsOnlyTo(*CannedAcl("bucket-owner-full-control", "b", "a"), "a"));
  EXPECT_FALSE(GrantsOnlyTo(*CannedAcl("public-read", "a", "a"), "a"));
  EXPECT_TRUE(GrantsOnlyTo(Acl{}, "a"));
}

TEST(Acl, AVersionWithoutAnOwnerIsTheBucketOwnersAndPrivate) {
  metadata::BucketRecord bucket;
  bucket.owner = "alice";
  metadata::ObjectRecord legacy;
  EXPECT_EQ(EffectiveOwner(legacy, bucket), "alice");
  EXPECT_EQ(EffectiveAcl(legacy, bucket), (Acl{User("alice", AclPermission::kFullControl)}));
  metadata::ObjectRecord owned;
  owned.owner = "bob";
  owned.acl = {User("bob", AclPermission::kRead)};
  EXPECT_EQ(EffectiveOwner(owned, bucket), "bob");
  EXPECT_EQ(EffectiveAcl(owned, bucket), owned.acl);
}

TEST(Acl, NamesRoundTrip) {
  for (auto p : {AclPermission::kRead, AclPermission::kWrite, AclPermission::kReadAcp,
                 AclPermission::kWriteAcp, AclPermission::kFullControl}) {
    EXPECT_EQ(ParsePermission(PermissionName(p)), p);
  }
  EXPECT_EQ(ParsePermission("read"), std::nullopt);
  for (auto g :
       {AclGrantee::kAllUsers, AclGrantee::kAuthenticatedUsers, AclGrantee::kLogDelivery}) {
    EXPECT_EQ(GroupOfUri(GroupUri(g)), g);
  }
  EXPECT_EQ(GroupOfUri(""), std::nullopt);
}

}  // namespace
}  // namespace strata::gateway
