#include "gateway/xml.h"

#include <gtest/gtest.h>

#include "common/http_time.h"
#include "common/utf8.h"
#include "gateway/error_table.h"

namespace strata::gateway {
namespace {

TEST(Xml, WriterNestsAndEscapes) {
  XmlWriter xml("Root", false);
  xml.Open("A").Element("B", "x<y&\"z\"").Close().Element("C", "\x01");
  EXPECT_EQ(xml.Finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Root><A><B>x&lt;y&amp;&quot;z&quot;</B>"
            "</A><C>\xEF\xBF\xBD</C></Root>");
}

// What XML 1.0 cannot carry (NUL and the other C0 controls but tab, LF and CR, U+FFFE,
// U+FFFF, bytes that are not UTF-8) becomes U+FFFD: "&#x0;" would make the whole
// document one no parser accepts.
TEST(Xml, EscapeKeepsDocumentsWellFormed) {
  const std::string kReplacement = "\xEF\xBF\xBD";
  EXPECT_EQ(XmlEscape(std::string("a\0b", 3)), "a" + kReplacement + "b");
  // A raw CR would read back as LF.
  EXPECT_EQ(XmlEscape("tab\tlf\ncr\r"), "tab\tlf\ncr&#13;");
  EXPECT_EQ(XmlEscape("\x1f\x7f"), kReplacement + "\x7f");  // DEL is an XML character
  EXPECT_EQ(XmlEscape("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(XmlEscape("\xef\xbf\xbe\xef\xbf\xbf"), kReplacement + kReplacement);
  EXPECT_EQ(XmlEscape("bad\xff\xc3"), "bad" + kReplacement + kReplacement);
  EXPECT_EQ(XmlEscape("\xed\xa0\x80"), kReplacement + kReplacement + kReplacement);
  for (int c = 0; c < 256; ++c) {
    const std::string escaped = XmlEscape(std::string(1, static_cast<char>(c)));
    EXPECT_TRUE(IsXmlText(escaped)) << c;
    // No character reference but the one for CR, an XML character (section 2.11).
    EXPECT_EQ(escaped.find("&#") == std::string::npos, c != '\r') << c;
  }
}

TEST(Xml, CreateBucketConfiguration) {
  auto empty = ParseCreateBucketConfiguration("  \n");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  auto eu = ParseCreateBucketConfiguration(
      "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>");
  ASSERT_TRUE(eu.ok());
  EXPECT_EQ(*eu, "eu-west-1");
}

TEST(Xml, CreateBucketConfigurationRejectsGarbage) {
  for (const char* body : {"<", "<CreateBucketConfiguration>", "not xml at all",
                           "<Other><LocationConstraint>x</LocationConstraint></Other>",
                           "<CreateBucketConfiguration></CreateBucketConfiguration><x/>"}) {
    auto r = ParseCreateBucketConfiguration(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << body;
  }
}

TEST(ErrorTable, S3Codes) {
  EXPECT_EQ(LookupS3Error(ErrorCode::kNoSuchKey).status, 404u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kNoSuchKey).code, "NoSuchKey");
  EXPECT_EQ(LookupS3Error(ErrorCode::kSignatureDoesNotMatch).status, 403u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kExpiredPresignedRequest).code, "AccessDenied");
  EXPECT_EQ(LookupS3Error(ErrorCode::kInvalidRange).status, 416u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kMissingContentLength).status, 411u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kNotImplemented).status, 501u);
}

TEST(HttpTime, FormatsAndParses) {
  EXPECT_EQ(FormatHttpDate(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatIso8601(784111777123), "1994-11-06T08:49:37.123Z");
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), 784111777);
  EXPECT_EQ(ParseHttpDate("yesterday"), std::nullopt);
  EXPECT_EQ(ParseHttpDate(""), std::nullopt);
}

}  // namespace
}  // namespace strata::gateway

namespace strata::gateway {
namespace {

TEST(Xml, DeleteRequest) {
  auto r = ParseDeleteRequest(
      "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
      "<Object><Key>a</Key></Object><Object><Key>b&amp;c</Key><VersionId>null</VersionId>"
      "</Object></Delete>");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->quiet);
  ASSERT_EQ(r->objects.size(), 2u);
  EXPECT_EQ(r->objects[0].key, "a");
  EXPECT_EQ(r->objects[0].version_id, "");
  EXPECT_EQ(r->objects[1].key, "b&c");
  EXPECT_EQ(r->objects[1].version_id, "null");
}

TEST(Xml, DeleteRequestRejects) {
  std::string thousand_and_one = "<Delete>";
  for (int i = 0; i <= 1000; ++i) {
    thousand_and_one += "<Object><Key>k" + std::to_string(i) + "</Key></Object>";
  }
  thousand_and_one += "</Delete>";
  for (const std::string& body :
       {std::string("<Delete></Delete>"), std::string("<Delete><Object></Object></Delete>"),
        std::string("<Delete><Object><Key></Key></Object></Delete>"),
        std::string("<Delete><Quiet>yes</Quiet><Object><Key>a</Key></Object></Delete>"),
        std::string("<Delete><Bogus/><Object><Key>a</Key></Object></Delete>"),
        std::string("<Other><Object><Key>a</Key></Object></Other>"), std::string("<Delete>"),
        std::string(""), thousand_and_one}) {
    auto r = ParseDeleteRequest(body);
    ASSERT_FALSE(r.ok()) << body.substr(0, 80);
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml);
  }
}

}  // namespace
}  // namespace strata::gateway

namespace strata::gateway {
namespace {

TEST(Xml, Tagging) {
  auto r = ParseTagging(
      "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>"
      "<Tag><Key>b</Key><Value>2 &amp; 3</Value></Tag><Tag><Value></Value><Key>a</Key></Tag>"
      "</TagSet></Tagging>");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (std::pair<std::string, std::string>("b", "2 & 3")));
  EXPECT_EQ((*r)[1], (std::pair<std::string, std::string>("a", "")));
  auto empty = ParseTagging("<Tagging><TagSet/></Tagging>");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  // Duplicates and too many tags are the tag rules' business (gateway/tags.h), not XML's.
  auto dup = ParseTagging(
      "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag>"
      "<Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>");
  ASSERT_TRUE(dup.ok());
  EXPECT_EQ(dup->size(), 2u);
}

TEST(Xml, TaggingRejectsMalformed) {
  for (const std::string& body : {
           std::string(""),
           std::string("<Tagging>"),
           std::string("<Tagging></Tagging>"),
           std::string("<Tagging><TagSet/><TagSet/></Tagging>"),
           std::string("<Other><TagSet/></Other>"),
           std::string("<Tagging><TagSet/></Tagging><Tagging/>"),
           std::string("<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>"),
           std::string("<Tagging><TagSet><Tag><Value>a</Value></Tag></TagSet></Tagging>"),
           std::string("<Tagging><TagSet><Tag><Key>a</Key><Key>b</Key><Value/></Tag></TagSet>"
                       "</Tagging>"),
           std::string("<Tagging><TagSet><Tag><Key>a</Key><Value/><Extra/></Tag></TagSet>"
                       "</Tagging>"),
           std::string("<Tagging><TagSet><Tag><Key><b>x</b></Key><Value/></Tag></TagSet>"
                       "</Tagging>"),
           std::string("<Tagging><TagSet><Item><Key>a</Key><Value/></Item></TagSet></Tagging>"),
           std::string("<Tagging><Bogus/><TagSet/></Tagging>"),
           std::string("<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet>"),
       }) {
    auto r = ParseTagging(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << body;
  }
}

TEST(ErrorTable, TaggingCodes) {
  EXPECT_EQ(LookupS3Error(ErrorCode::kInvalidTag).code, "InvalidTag");
  EXPECT_EQ(LookupS3Error(ErrorCode::kInvalidTag).status, 400u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kTooManyTags).code, "BadRequest");
  EXPECT_EQ(LookupS3Error(ErrorCode::kTooManyTags).status, 400u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kNoSuchTagSet).code, "NoSuchTagSet");
  EXPECT_EQ(LookupS3Error(ErrorCode::kNoSuchTagSet).status, 404u);
}

TEST(ErrorTable, EveryCodeHasItsOwnAnswer) {
  for (int i = 0; i <= static_cast<int>(kLastErrorCode); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    if (code == ErrorCode::kInternal || code == ErrorCode::kCorruption) {
      continue;
    }
    EXPECT_NE(LookupS3Error(code).code, "InternalError") << i;
  }
}

TEST(ErrorTable, AccessControlCodes) {
  const std::pair<ErrorCode, std::pair<unsigned, std::string_view>> expected[] = {
      {ErrorCode::kMalformedPolicy, {400, "MalformedPolicy"}},
      {ErrorCode::kNoSuchBucketPolicy, {404, "NoSuchBucketPolicy"}},
      {ErrorCode::kMalformedAcl, {400, "MalformedACLError"}},
      {ErrorCode::kAccessControlListNotSupported, {400, "AccessControlListNotSupported"}},
      {ErrorCode::kOwnershipControlsNotFound, {404, "OwnershipControlsNotFoundError"}},
      {ErrorCode::kNoSuchPublicAccessBlockConfiguration,
       {404, "NoSuchPublicAccessBlockConfiguration"}},
      {ErrorCode::kNoSuchCorsConfiguration, {404, "NoSuchCORSConfiguration"}},
      {ErrorCode::kCorsNotAllowed, {403, "AccessForbidden"}},
      {ErrorCode::kObjectLockConfigurationNotFound, {404, "ObjectLockConfigurationNotFoundError"}},
      {ErrorCode::kInvalidBucketState, {409, "InvalidBucketState"}},
  };
  for (const auto& [code, answer] : expected) {
    EXPECT_EQ(LookupS3Error(code).status, answer.first) << answer.second;
    EXPECT_EQ(LookupS3Error(code).code, answer.second);
  }
}

}  // namespace
}  // namespace strata::gateway

namespace strata::gateway {
namespace {

TEST(Xml, RestoreRequest) {
  auto r = ParseRestoreRequest(
      "<RestoreRequest xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Days>7</Days>"
      "<GlacierJobParameters><Tier>Bulk</Tier></GlacierJobParameters>"
      "<Description>why</Description></RestoreRequest>");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->days, 7);
  EXPECT_EQ(r->tier, "Bulk");
  r = ParseRestoreRequest("<RestoreRequest><Days>2147483647</Days></RestoreRequest>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tier, "Standard");
}

TEST(Xml, RestoreRequestRejectsMalformed) {
  for (const char* body : {
           "",
           "x",
           "<RestoreRequest/>",
           "<RestoreRequest><Days></Days></RestoreRequest>",
           "<RestoreRequest><Days>0</Days></RestoreRequest>",
           "<RestoreRequest><Days>2147483648</Days></RestoreRequest>",
           "<RestoreRequest><Days>1 </Days></RestoreRequest>",
           "<RestoreRequest><Days>+1</Days></RestoreRequest>",
           "<RestoreRequest><Days><X/></Days></RestoreRequest>",
           "<RestoreRequest><Days>1</Days><Days>1</Days></RestoreRequest>",
           "<RestoreRequest><Days>1</Days><GlacierJobParameters/></RestoreRequest>",
           "<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Now</Tier>"
           "</GlacierJobParameters></RestoreRequest>",
           "<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Bulk</Tier><Tier>Bulk"
           "</Tier></GlacierJobParameters></RestoreRequest>",
           "<RestoreRequest><Days>1</Days><Other/></RestoreRequest>",
           "<RestoreRequest><Days>1</Days></RestoreRequest><RestoreRequest/>",
           "<Other><Days>1</Days></Other>",
       }) {
    auto r = ParseRestoreRequest(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedXml) << body;
  }
  auto select = ParseRestoreRequest(
      "<RestoreRequest><Type>SELECT</Type><SelectParameters/></RestoreRequest>");
  ASSERT_FALSE(select.ok());
  EXPECT_EQ(select.error().code, ErrorCode::kNotImplemented);
}

TEST(ErrorTable, RestoreCodes) {
  EXPECT_EQ(LookupS3Error(ErrorCode::kInvalidObjectState).code, "InvalidObjectState");
  EXPECT_EQ(LookupS3Error(ErrorCode::kInvalidObjectState).status, 403u);
  EXPECT_EQ(LookupS3Error(ErrorCode::kRestoreAlreadyInProgress).code, "RestoreAlreadyInProgress");
  EXPECT_EQ(LookupS3Error(ErrorCode::kRestoreAlreadyInProgress).status, 409u);
}

}  // namespace
}  // namespace strata::gateway
