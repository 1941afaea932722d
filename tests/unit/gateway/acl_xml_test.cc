#include "gateway/acl_xml.h"

#include <gtest/gtest.h>

#include <string>

#include "gateway/identity.h"

namespace strata::gateway {
namespace {

using metadata::Acl;
using metadata::AclGrant;
using metadata::AclGrantee;
using metadata::AclPermission;

std::optional<std::string> Resolve(std::string_view id) {
  for (const char* name : {"alice", "bob"}) {
    if (CanonicalUserId(name) == id) {
      return std::string(name);
    }
  }
  return std::nullopt;
}

ErrorCode CodeOf(const std::string& body) {
  auto parsed = ParseAccessControlPolicy(body, Resolve);
  return parsed.ok() ? ErrorCode::kInternal : parsed.error().code;
}

std::string Policy(const std::string& grants, const std::string& owner = "") {
  return "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" + owner +
         "<AccessControlList>" + grants + "</AccessControlList></AccessControlPolicy>";
}

TEST(AclXml, WhatGetAnswersPutAccepts) {
  const Acl acl{AclGrant{AclGrantee::kUser, "alice", AclPermission::kFullControl},
                AclGrant{AclGrantee::kUser, "bob", AclPermission::kWriteAcp},
                AclGrant{AclGrantee::kAllUsers, "", AclPermission::kRead},
                AclGrant{AclGrantee::kAuthenticatedUsers, "", AclPermission::kWrite},
                AclGrant{AclGrantee::kLogDelivery, "", AclPermission::kReadAcp}};
  const std::string xml = AccessControlPolicyXml("alice", acl);
  EXPECT_NE(xml.find("<Owner><ID>" + CanonicalUserId("alice") +
                     "</ID><DisplayName>alice</DisplayName></Owner>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("xsi:type=\"CanonicalUser\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI>"),
            std::string::npos)
      << xml;
  auto parsed = ParseAccessControlPolicy(xml, Resolve);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->acl, acl);
  EXPECT_EQ(parsed->owner_id, CanonicalUserId("alice"));
}

TEST(AclXml, GranteesWithoutXsiTypeAreKnownByWhatTheyName) {
  auto parsed =
      ParseAccessControlPolicy(Policy("<Grant><Grantee><ID>" + CanonicalUserId("bob") +
                                      "</ID></Grantee><Permission>READ</Permission></Grant>"
                                      "<Grant><Grantee><URI>" +
                                      std::string(kAuthenticatedUsersUri) +
                                      "</URI></Grantee><Permission>WRITE</Permission></Grant>"),
                               Resolve);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->acl,
            (Acl{AclGrant{AclGrantee::kUser, "bob", AclPermission::kRead},
                 AclGrant{AclGrantee::kAuthenticatedUsers, "", AclPermission::kWrite}}));
  EXPECT_FALSE(parsed->owner_id.has_value());
  // An empty list removes every grant.
  auto empty = ParseAccessControlPolicy(Policy(""), Resolve);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->acl.empty());
}

TEST(AclXml, RefusesWhatS3Refuses) {
  const std::string bob = CanonicalUserId("bob");
  const std::string grant_bob = "<Grant><Grantee><ID>" + bob + "</ID></Grantee>";
  EXPECT_EQ(CodeOf("not xml"), ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf("<Other/>"), ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf("<AccessControlPolicy/>"), ErrorCode::kMalformedAcl);  // no list
  EXPECT_EQ(CodeOf(Policy(grant_bob + "<Permission>OWN</Permission></Grant>")),
            ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf(Policy(grant_bob + "</Grant>")), ErrorCode::kMalformedAcl);  // no permission
  EXPECT_EQ(CodeOf(Policy("<Grant><Permission>READ</Permission></Grant>")),
            ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf(Policy(grant_bob + "<Permission>READ</Permission><Extra/></Grant>")),
            ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf(Policy("<Other/>")), ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf(Policy("<Grant><Grantee><ID>" + CanonicalUserId("mallory") +
                          "</ID></Grantee><Permission>READ</Permission></Grant>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Policy("<Grant><Grantee><URI>http://example.com/group</URI></Grantee>"
                          "<Permission>READ</Permission></Grant>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(Policy("<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/"
                          "XMLSchema-instance\" xsi:type=\"AmazonCustomerByEmail\">"
                          "<EmailAddress>a@example.com</EmailAddress></Grantee>"
                          "<Permission>READ</Permission></Grant>")),
            ErrorCode::kUnresolvableGrantByEmailAddress);
  // A type that does not match what the grantee names.
  EXPECT_EQ(CodeOf(Policy("<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/"
                          "XMLSchema-instance\" xsi:type=\"Group\"><ID>" +
                          bob + "</ID></Grantee><Permission>READ</Permission></Grant>")),
            ErrorCode::kMalformedAcl);
  EXPECT_EQ(CodeOf(Policy("", "<Owner><DisplayName>x</DisplayName></Owner>")),
            ErrorCode::kMalformedAcl);
  std::string many;
  for (std::size_t i = 0; i <= kMaxAclGrants; ++i) {
    many += grant_bob + "<Permission>READ</Permission></Grant>";
  }
  EXPECT_EQ(CodeOf(Policy(many)), ErrorCode::kMalformedAcl);
}

}  // namespace
}  // namespace strata::gateway
