// ParseCompleteMultipartUpload: the body of CompleteMultipartUpload, as SDKs send it and
// as they must not.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "gateway/xml.h"
#include "tests/unit/gateway/mutate.h"

namespace strata::gateway {
namespace {

std::string PartXml(const std::string& number, const std::string& etag,
                    const std::string& extra = "") {
  return "<Part><PartNumber>" + number + "</PartNumber><ETag>" + etag + "</ETag>" + extra +
         "</Part>";
}

std::string Doc(const std::string& parts) {
  return "<CompleteMultipartUpload>" + parts + "</CompleteMultipartUpload>";
}

void ExpectRefused(const std::string& body, ErrorCode code) {
  auto parsed = ParseCompleteMultipartUpload(body);
  ASSERT_FALSE(parsed.ok()) << body;
  EXPECT_EQ(parsed.error().code, code) << body;
}

TEST(CompleteMultipartXml, TwoPartsAsBotocoreSendsThem) {
  // botocore quotes ETags and escapes the quotes; the namespace attribute is optional.
  auto parsed = ParseCompleteMultipartUpload(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Part><ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag>"
      "<PartNumber>1</PartNumber></Part>"
      "<Part><ETag>\"92eb5ffee6ae2fec3ad71c777531578f\"</ETag><PartNumber>2</PartNumber>"
      "<ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].number, 1u);
  EXPECT_EQ((*parsed)[0].etag, "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_TRUE((*parsed)[0].checksums.empty());
  EXPECT_EQ((*parsed)[1].number, 2u);
  EXPECT_EQ((*parsed)[1].etag, "92eb5ffee6ae2fec3ad71c777531578f");
  ASSERT_EQ((*parsed)[1].checksums.size(), 1u);
  EXPECT_EQ((*parsed)[1].checksums[0].first, "CRC32");
  EXPECT_EQ((*parsed)[1].checksums[0].second, "AAAAAA==");
}

TEST(CompleteMultipartXml, UnquotedEtagsAndEveryChecksumElement) {
  auto parsed = ParseCompleteMultipartUpload(
      Doc(PartXml("7", "abc",
                  "<ChecksumCRC32>a</ChecksumCRC32><ChecksumCRC32C>b</ChecksumCRC32C>"
                  "<ChecksumCRC64NVME>c</ChecksumCRC64NVME><ChecksumSHA1>d</ChecksumSHA1>"
                  "<ChecksumSHA256>e</ChecksumSHA256>")));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].number, 7u);
  EXPECT_EQ((*parsed)[0].etag, "abc");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"CRC32", "a"}, {"CRC32C", "b"}, {"CRC64NVME", "c"}, {"SHA1", "d"}, {"SHA256", "e"}};
  EXPECT_EQ((*parsed)[0].checksums, expected);
}

TEST(CompleteMultipartXml, KeepsOrderAsSent) {
  // Ordering and duplicates are the completion rules' business (kInvalidPartOrder), not
  // the parser's.
  auto parsed = ParseCompleteMultipartUpload(
      Doc(PartXml("3", "c") + PartXml("1", "a") + PartXml("3", "d") + PartXml("10000", "z")));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 4u);
  EXPECT_EQ((*parsed)[0].number, 3u);
  EXPECT_EQ((*parsed)[1].number, 1u);
  EXPECT_EQ((*parsed)[2].etag, "d");
  EXPECT_EQ((*parsed)[3].number, 10000u);
}

TEST(CompleteMultipartXml, WhitespaceAndCommentsBetweenElements) {
  auto parsed = ParseCompleteMultipartUpload(
      "\n  <CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
      "    <!-- first -->\n"
      "    <Part>\n"
      "      <PartNumber>1</PartNumber>\n"
      "      <ETag>\"e1\"</ETag>\n"
      "    </Part>\n"
      "    <Part>\t<ETag>e2</ETag>\r\n<PartNumber>2</PartNumber></Part>\n"
      "  </CompleteMultipartUpload>\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].etag, "e1");
  EXPECT_EQ((*parsed)[1].number, 2u);
  EXPECT_EQ((*parsed)[1].etag, "e2");
}

TEST(CompleteMultipartXml, NoPartsParsesToAnEmptyList) {
  // The parser accepts it; BuildUploadedObject answers kMalformedXml for an empty list.
  for (const char* body :
       {"<CompleteMultipartUpload/>", "<CompleteMultipartUpload>  </CompleteMultipartUpload>"}) {
    auto parsed = ParseCompleteMultipartUpload(body);
    ASSERT_TRUE(parsed.ok()) << body;
    EXPECT_TRUE(parsed->empty()) << body;
  }
}

TEST(CompleteMultipartXml, RefusesWhatIsNotTheDocument) {
  for (const std::string& body : {
           std::string(""),
           std::string("not xml at all"),
           std::string("<CompleteMultipartUpload>"),                                  // unclosed
           std::string("<CompleteMultipartUpload><Part></CompleteMultipartUpload>"),  // bad nesting
           Doc(PartXml("1", "a")).substr(1),                                          // broken tag
           std::string("<CompleteMultipartUploadX>") + PartXml("1", "a") +
               "</CompleteMultipartUploadX>",                // wrong root
           "<Other>" + PartXml("1", "a") + "</Other>",       //
           Doc(PartXml("1", "a")) + "<Extra/>",              // second root
           Doc(PartXml("1", "a")) + Doc(PartXml("2", "b")),  //
           Doc("<Bogus/>" + PartXml("1", "a")),              // unknown child
           Doc(PartXml("1", "a") + "<part><PartNumber>2</PartNumber><ETag>b</ETag></part>"),
       }) {
    ExpectRefused(body, ErrorCode::kMalformedXml);
  }
}

TEST(CompleteMultipartXml, RefusesPartsMissingNumberOrEtag) {
  ExpectRefused(Doc("<Part><ETag>a</ETag></Part>"), ErrorCode::kMalformedXml);
  ExpectRefused(Doc("<Part><PartNumber>1</PartNumber></Part>"), ErrorCode::kMalformedXml);
  ExpectRefused(Doc("<Part/>"), ErrorCode::kMalformedXml);
  // One bad part spoils the document even after good ones.
  ExpectRefused(Doc(PartXml("1", "a") + "<Part><PartNumber>2</PartNumber></Part>"),
                ErrorCode::kMalformedXml);
}

TEST(CompleteMultipartXml, RefusesPartNumbersOutside1To10000) {
  for (const char* number : {"0", "10001", "4294967296", "99999999999999999999", "-1", "abc", "1x",
                             "x1", "", "+1", "1.0", "0x10", "1 2"}) {
    ExpectRefused(Doc(PartXml(number, "a")), ErrorCode::kMalformedXml);
  }
  // Leading zeros are still the number.
  auto parsed = ParseCompleteMultipartUpload(Doc(PartXml("0010000", "a")));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)[0].number, 10000u);
}

TEST(CompleteMultipartXml, RefusesUnknownElementsInsidePart) {
  ExpectRefused(Doc(PartXml("1", "a", "<Size>5</Size>")), ErrorCode::kMalformedXml);
  ExpectRefused(Doc(PartXml("1", "a", "<Part/>")), ErrorCode::kMalformedXml);
  ExpectRefused(Doc(PartXml("1", "a", "<etag>b</etag>")), ErrorCode::kMalformedXml);
}

TEST(CompleteMultipartXml, UnknownChecksumElementIsInvalidPart) {
  for (const char* element : {"ChecksumMD5", "ChecksumCRC16", "ChecksumType", "Checksum"}) {
    const std::string extra = std::string("<") + element + ">x</" + element + ">";
    ExpectRefused(Doc(PartXml("1", "a", extra)), ErrorCode::kInvalidPart);
  }
}

TEST(CompleteMultipartXml, AtMost10000Parts) {
  std::string parts;
  for (int i = 1; i <= 10000; ++i) {
    parts += PartXml(std::to_string(i), "e");
  }
  auto full = ParseCompleteMultipartUpload(Doc(parts));
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_EQ(full->size(), 10000u);
  EXPECT_EQ(full->back().number, 10000u);
  ExpectRefused(Doc(parts + PartXml("10000", "e")), ErrorCode::kMalformedXml);
}

TEST(CompleteMultipartXml, MutationFuzz) {
  std::mt19937 rng(21);
  const std::string seeds[] = {
      Doc(PartXml("1", "\"0cc175b9c0f1b6a831c399e269772661\"") +
          PartXml("2", "b", "<ChecksumCRC32C>AAAAAA==</ChecksumCRC32C>")),
      "<?xml version=\"1.0\"?><CompleteMultipartUpload xmlns=\"x\">" +
          PartXml("10000", "&quot;e&quot;", "<ChecksumSHA256>x</ChecksumSHA256>") +
          "</CompleteMultipartUpload>",
  };
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string body = testing::Mutate(seeds[i % 2], rng);
    auto parsed = ParseCompleteMultipartUpload(body);
    if (parsed.ok()) {
      ++accepted;
      EXPECT_LE(parsed->size(), 10000u) << body;
      for (const auto& part : *parsed) {
        EXPECT_GE(part.number, 1u) << body;
        EXPECT_LE(part.number, 10000u) << body;
      }
    } else {
      EXPECT_TRUE(parsed.error().code == ErrorCode::kMalformedXml ||
                  parsed.error().code == ErrorCode::kInvalidPart)
          << body << " -> " << static_cast<int>(parsed.error().code);
    }
  }
  // The mutations are small: a fair share of the documents must still parse (bodies that
  // stop being UTF-8 are refused now), or the
  // loop would only be exercising the first rejection.
  EXPECT_GT(accepted, 500);
}

}  // namespace
}  // namespace strata::gateway
