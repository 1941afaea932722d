#include "storage/checksum.h"

#include <gtest/gtest.h>

#include <random>

namespace strata::storage {
namespace {

std::string Digest(ChecksumAlgorithm a, std::string_view data) {
  auto c = MakeChecksummer(a);
  c->Update(data);
  return c->FinalBase64();
}

std::string DigestInPieces(ChecksumAlgorithm a, std::string_view data, std::size_t piece) {
  auto c = MakeChecksummer(a);
  while (!data.empty()) {
    const std::size_t n = std::min(piece, data.size());
    c->Update(data.substr(0, n));
    data.remove_prefix(n);
  }
  return c->FinalBase64();
}

TEST(ChecksumTest, CheckVectors) {
  // CRC check values are the big-endian bytes of the CRC, base64-encoded.
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc32, "123456789"), Base64Encode("\xCB\xF4\x39\x26"));
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc32, "123456789"), "y/Q5Jg==");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc32c, "123456789"), "4waSgw==");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc64Nvme, "123456789"), "rosUhgp5mIg=");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc32, ""), "AAAAAA==");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc32c, ""), "AAAAAA==");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kCrc64Nvme, ""), "AAAAAAAAAAA=");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kSha1, "abc"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kSha256, ""), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  EXPECT_EQ(Digest(ChecksumAlgorithm::kSha256, "abc"),
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
}

TEST(ChecksumTest, IncrementalEqualsOneShot) {
  std::mt19937_64 rng(5);
  std::string data(100'003, '\0');
  for (auto& c : data) {
    c = static_cast<char>(rng());
  }
  for (auto a :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
        ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    const std::string whole = Digest(a, data);
    EXPECT_EQ(DigestInPieces(a, data, 1), whole) << ChecksumName(a);
    EXPECT_EQ(DigestInPieces(a, data, 4093), whole) << ChecksumName(a);
  }
}

TEST(ChecksumTest, Names) {
  EXPECT_EQ(ParseChecksumAlgorithm("crc32c"), ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(ParseChecksumAlgorithm("CRC32"), ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(ParseChecksumAlgorithm("Crc64Nvme"), ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(ParseChecksumAlgorithm("sha1"), ChecksumAlgorithm::kSha1);
  EXPECT_EQ(ParseChecksumAlgorithm("SHA256"), ChecksumAlgorithm::kSha256);
  EXPECT_FALSE(ParseChecksumAlgorithm("md5").has_value());
  EXPECT_FALSE(ParseChecksumAlgorithm("").has_value());
  EXPECT_EQ(ChecksumName(ChecksumAlgorithm::kCrc64Nvme), "CRC64NVME");
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kSha256), "x-amz-checksum-sha256");
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kCrc32c), "x-amz-checksum-crc32c");
}

TEST(ChecksumTest, Md5) {
  Md5 empty;
  EXPECT_EQ(empty.FinalHex(), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(empty.FinalBase64(), "1B2M2Y8AsgTpgAmY7PhCfg==");
  Md5 fox;
  fox.Update("The quick brown fox ");
  fox.Update("jumps over the lazy dog");
  EXPECT_EQ(fox.FinalHex(), "9e107d9d372bb6826bd81d3542a419d6");
}

TEST(Base64Test, RoundTripAndRfcVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  std::mt19937_64 rng(3);
  for (int n = 0; n < 300; ++n) {
    std::string s(n, '\0');
    for (auto& c : s) {
      c = static_cast<char>(rng());
    }
    auto decoded = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, s);
  }
}

TEST(Base64Test, DecodeRejectsInvalid) {
  for (std::string_view bad : {"Zg=", "Zg", "Z===", "====", "Zm9v!A==", "Zm 9", "Zg==Zg==", "Zm=v",
                               "Zh==", "Zm9=", "Zm9vY===", "\xff\xff\xff\xff", "Zm9vYmF-"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
  EXPECT_EQ(Base64Decode("").value(), "");
  EXPECT_EQ(Base64Decode("Zm9vYg==").value(), "foob");
}

}  // namespace
}  // namespace strata::storage
