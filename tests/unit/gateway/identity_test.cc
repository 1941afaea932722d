#include "gateway/identity.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

TEST(Identity, NamesAreStable) {
  auth::Credential bob{"bob", "secret", false};
  EXPECT_EQ(UserName(bob), "bob");
  EXPECT_EQ(UserArn("bob"), "arn:aws:iam:::user/bob");
  const std::string id = CanonicalUserId("bob");
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(CanonicalUserId("carol"), CanonicalUserId("carol"));
  EXPECT_NE(CanonicalUserId("carol"), id);
  EXPECT_EQ(CanonicalUserId("bob"), id);  // after another name: not the cached one
}

TEST(Identity, OwnersAreWrittenAsS3WritesThem) {
  XmlWriter xml("ListAllMyBucketsResult");
  WriteOwner(xml, "Owner", "bob");
  const std::string doc = xml.Finish();
  EXPECT_NE(doc.find("<Owner><ID>" + CanonicalUserId("bob") +
                     "</ID><DisplayName>bob</DisplayName></Owner>"),
            std::string::npos)
      << doc;
}

}  // namespace
}  // namespace strata::gateway
