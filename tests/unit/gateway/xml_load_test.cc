#include "gateway/xml_load.h"

#include <gtest/gtest.h>

#include <string>

#include "gateway/xml.h"

namespace strata::gateway {
namespace {

std::string Nested(std::size_t depth) {
  std::string body;
  for (std::size_t i = 0; i < depth; ++i) {
    body += "<a>";
  }
  for (std::size_t i = 0; i < depth; ++i) {
    body += "</a>";
  }
  return body;
}

TEST(XmlLoad, AcceptsPlainDocuments) {
  pugi::xml_document doc;
  EXPECT_TRUE(LoadXmlDocument(doc, "<Tagging><TagSet/></Tagging>").ok());
  EXPECT_TRUE(LoadXmlDocument(doc, "<a x=\"caf\xc3\xa9\">tab\tand &#xE9; &amp;</a>").ok());
}

TEST(XmlLoad, BoundsDepth) {
  pugi::xml_document doc;
  XmlLimits limits;
  limits.max_depth = 8;
  EXPECT_TRUE(LoadXmlDocument(doc, Nested(8), limits).ok());
  auto deep = LoadXmlDocument(doc, Nested(10), limits);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, ErrorCode::kMalformedXml);
  // The default bound: a body of 100,000 nested elements parses to MalformedXML and the
  // walk that checks it does not recurse.
  auto very_deep = LoadXmlDocument(doc, Nested(100'000));
  ASSERT_FALSE(very_deep.ok());
  EXPECT_EQ(very_deep.error().code, ErrorCode::kMalformedXml);
}

TEST(XmlLoad, BoundsElements) {
  pugi::xml_document doc;
  XmlLimits limits;
  limits.max_elements = 100;
  std::string body = "<r>";
  for (int i = 0; i < 99; ++i) {
    body += "<a/>";
  }
  EXPECT_TRUE(LoadXmlDocument(doc, body + "</r>", limits).ok());
  auto many = LoadXmlDocument(doc, body + "<a/></r>", limits);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().code, ErrorCode::kMalformedXml);
}

TEST(XmlLoad, RefusesWhatXml10CannotCarry) {
  pugi::xml_document doc;
  for (std::string body : {
           std::string("<a>\xff</a>"),          // not UTF-8
           std::string("<a>\xc0\xaf</a>"),      // overlong
           std::string("<a>\xed\xa0\x80</a>"),  // surrogate
           std::string("<a>x\x01y</a>"),        // raw control character
           std::string("<a>x\0y</a>", 10),      // raw NUL
           std::string("<a>&#x0;</a>"),         // references to what XML excludes
           std::string("<a>&#1;</a>"), std::string("<a>&#xFFFE;</a>"),
           std::string("<a>&#xD800;</a>"),
           std::string("<a b=\"&#x1F;\"/>"),  // in an attribute
           std::string("<!-- \xff --><a/>"),  // in a comment pugixml drops
       }) {
    auto r = LoadXmlDocument(doc, body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << body;
  }
}

// Each body parser goes through LoadXmlDocument: keys, tags and parts that are not UTF-8
// are MalformedXML, as in S3.
TEST(XmlLoad, ParsersRefuseInvalidUtf8) {
  auto del = ParseDeleteRequest("<Delete><Object><Key>bad\xff</Key></Object></Delete>");
  ASSERT_FALSE(del.ok());
  EXPECT_EQ(del.error().code, ErrorCode::kMalformedXml);
  auto nul = ParseDeleteRequest("<Delete><Object><Key>a&#x0;b</Key></Object></Delete>");
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.error().code, ErrorCode::kMalformedXml);
  auto tags = ParseTagging(
      "<Tagging><TagSet><Tag><Key>k</Key><Value>\xc3</Value></Tag></TagSet></Tagging>");
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.error().code, ErrorCode::kMalformedXml);
  auto parts = ParseCompleteMultipartUpload(
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\xfe</ETag></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.error().code, ErrorCode::kMalformedXml);
  auto fine = ParseDeleteRequest(
      "<Delete><Object><Key>caf\xc3\xa9/\xf0\x9f\x98\x80</Key></Object></Delete>");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->objects.at(0).key, "caf\xc3\xa9/\xf0\x9f\x98\x80");
}

}  // namespace
}  // namespace strata::gateway
