#include "gateway/access_xml.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

constexpr const char* kNs = R"( xmlns="http://s3.amazonaws.com/doc/2006-03-01/")";

std::string Ownership(const std::string& inner) {
  return std::string("<OwnershipControls") + kNs + ">" + inner + "</OwnershipControls>";
}

TEST(AccessXml, OwnershipControlsAsS3Sends) {
  for (const char* mode : {"BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"}) {
    auto r = ParseOwnershipControls(
        Ownership(std::string("<Rule><ObjectOwnership>") + mode + "</ObjectOwnership></Rule>"));
    ASSERT_TRUE(r.ok()) << mode;
    EXPECT_EQ(*r, mode);
    EXPECT_EQ(*ParseOwnershipControls(OwnershipControlsXml(mode)), mode);
  }
  EXPECT_NE(OwnershipControlsXml("ObjectWriter")
                .find("<OwnershipControls xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                      "<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"),
            std::string::npos);
}

TEST(AccessXml, BadOwnershipControlsAreMalformed) {
  for (const std::string& bad : {
           std::string("not xml"),
           Ownership(""),
           Ownership("<Rule></Rule>"),
           Ownership("<Rule><ObjectOwnership>objectwriter</ObjectOwnership></Rule>"),
           Ownership("<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership>"
                     "<ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"),
           Ownership("<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"
                     "<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"),
           Ownership("<Rule><ObjectOwnership><X/>ObjectWriter</ObjectOwnership></Rule>"),
           Ownership("<Rule><Other>ObjectWriter</Other></Rule>"),
           Ownership("text<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"),
           std::string("<Ownership><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership>"
                       "</Rule></Ownership>"),
       }) {
    auto r = ParseOwnershipControls(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << bad;
  }
}

TEST(AccessXml, PublicAccessBlockFlags) {
  auto all = ParsePublicAccessBlock(
      std::string("<PublicAccessBlockConfiguration") + kNs +
      "><BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls>"
      "<BlockPublicPolicy>true</BlockPublicPolicy>"
      "<RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (metadata::PublicAccessBlock{true, true, true, true}));
  auto some = ParsePublicAccessBlock(
      "<PublicAccessBlockConfiguration><BlockPublicPolicy>true</BlockPublicPolicy>"
      "<IgnorePublicAcls>false</IgnorePublicAcls></PublicAccessBlockConfiguration>");
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(*some, (metadata::PublicAccessBlock{false, false, true, false}));
  auto none = ParsePublicAccessBlock("<PublicAccessBlockConfiguration/>");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, metadata::PublicAccessBlock{});
  const metadata::PublicAccessBlock mixed{true, false, false, true};
  EXPECT_EQ(*ParsePublicAccessBlock(PublicAccessBlockXml(mixed)), mixed);
}

TEST(AccessXml, BadPublicAccessBlocksAreMalformed) {
  for (const char* bad : {
           "<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls>"
           "</PublicAccessBlockConfiguration>",
           "<PublicAccessBlockConfiguration><BlockPublicAcls>TRUE</BlockPublicAcls>"
           "</PublicAccessBlockConfiguration>",
           "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>"
           "<BlockPublicAcls>false</BlockPublicAcls></PublicAccessBlockConfiguration>",
           "<PublicAccessBlockConfiguration><BlockAll>true</BlockAll>"
           "</PublicAccessBlockConfiguration>",
           "<PublicAccessBlockConfiguration><BlockPublicAcls><x/></BlockPublicAcls>"
           "</PublicAccessBlockConfiguration>",
           "<Configuration><BlockPublicAcls>true</BlockPublicAcls></Configuration>",
           "<PublicAccessBlockConfiguration>",
       }) {
    auto r = ParsePublicAccessBlock(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << bad;
  }
}

}  // namespace
}  // namespace strata::gateway
