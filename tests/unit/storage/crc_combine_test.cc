#include "storage/crc_combine.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "storage/checksum.h"
#include "tests/unit/storage/test_bytes.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;

constexpr std::uint32_t kCrc32Poly = 0xEDB88320u;  // zlib's
constexpr std::uint32_t kCrc32cPoly = 0x82F63B78u;
constexpr ChecksumAlgorithm kCrcs[] = {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c,
                                       ChecksumAlgorithm::kCrc64Nvme};

std::uint32_t Crc32Value(ChecksumAlgorithm algorithm, std::string_view data) {
  auto raw = Base64Decode(ChecksumOf(algorithm, data));
  EXPECT_TRUE(raw && raw->size() == 4);
  std::uint32_t v = 0;
  for (char c : raw.value_or("")) {
    v = (v << 8) | static_cast<unsigned char>(c);
  }
  return v;
}

TEST(Crc32Combine, CheckValueOfSplitStandardInput) {
  // "123456789" is the standard check input: CRC32 0xCBF43926, CRC32C 0xE3069283.
  EXPECT_EQ(Crc32Combine(kCrc32Poly, Crc32Value(ChecksumAlgorithm::kCrc32, "1234"),
                         Crc32Value(ChecksumAlgorithm::kCrc32, "56789"), 5),
            0xCBF43926u);
  EXPECT_EQ(Crc32Combine(kCrc32cPoly, Crc32Value(ChecksumAlgorithm::kCrc32c, "12345678"),
                         Crc32Value(ChecksumAlgorithm::kCrc32c, "9"), 1),
            0xE3069283u);
}

TEST(Crc32Combine, EmptySecondHalfKeepsFirst) {
  // CRC("") is 0 with all-ones init and xorout, and x^0 is the identity.
  EXPECT_EQ(Crc32Combine(kCrc32Poly, 0x12345678u, 0, 0), 0x12345678u);
  EXPECT_EQ(Crc32Combine(kCrc32cPoly, 0xdeadbeefu, 0, 0), 0xdeadbeefu);
}

TEST(Crc32Combine, EmptyFirstHalfGivesSecond) {
  const std::string b = RandomBytes(1000, 7);
  for (auto [algorithm, poly] : {std::pair{ChecksumAlgorithm::kCrc32, kCrc32Poly},
                                 std::pair{ChecksumAlgorithm::kCrc32c, kCrc32cPoly}}) {
    EXPECT_EQ(Crc32Combine(poly, 0, Crc32Value(algorithm, b), b.size()), Crc32Value(algorithm, b));
  }
}

// Combining is linear, so (x.y).z == x.(y.z) for any values; with lengths far beyond what
// a test could checksum this exercises the x^(8n) exponentiation for 5 GiB parts.
TEST(Crc32Combine, AssociativeForHugeLengths) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 200; ++i) {
    const auto x = static_cast<std::uint32_t>(rng());
    const auto y = static_cast<std::uint32_t>(rng());
    const auto z = static_cast<std::uint32_t>(rng());
    const std::uint64_t len_y = rng() % (5ull << 30);
    const std::uint64_t len_z = rng() % (5ull << 30) * (i % 3);
    for (std::uint32_t poly : {kCrc32Poly, kCrc32cPoly}) {
      EXPECT_EQ(Crc32Combine(poly, Crc32Combine(poly, x, y, len_y), z, len_z),
                Crc32Combine(poly, x, Crc32Combine(poly, y, z, len_z), len_y + len_z))
          << i;
    }
  }
}

TEST(CombineChecksumBase64, MatchesChecksumOfConcatenationForManySizes) {
  const std::size_t sizes[] = {0,
                               1,
                               2,
                               3,
                               4,
                               7,
                               8,
                               9,
                               15,
                               16,
                               17,
                               31,
                               63,
                               64,
                               65,
                               127,
                               255,
                               256,
                               1000,
                               4095,
                               4096,
                               65537,
                               (1u << 20) + 3};
  // Slices of one random pool at shifting offsets: fresh bytes for every pair, cheaply.
  const std::string pool = RandomBytes(3 << 20, 1);
  std::size_t shift = 0;
  for (auto algorithm : kCrcs) {
    for (std::size_t len_a : sizes) {
      for (std::size_t len_b : sizes) {
        shift = (shift + 4099) % 100'000;
        const std::string a = pool.substr(shift, len_a);
        const std::string b = pool.substr((3 << 20) - len_b - shift, len_b);
        auto combined = CombineChecksumBase64(algorithm, ChecksumOf(algorithm, a),
                                              ChecksumOf(algorithm, b), len_b);
        ASSERT_TRUE(combined.has_value());
        EXPECT_EQ(*combined, ChecksumOf(algorithm, a + b))
            << ChecksumName(algorithm) << " " << len_a << "+" << len_b;
      }
    }
  }
}

TEST(CombineChecksumBase64, EverySplitOfASmallBuffer) {
  const std::string data = RandomBytes(300, 42);
  for (auto algorithm : kCrcs) {
    const std::string whole = ChecksumOf(algorithm, data);
    for (std::size_t at = 0; at <= data.size(); ++at) {
      const std::string_view a = std::string_view(data).substr(0, at);
      const std::string_view b = std::string_view(data).substr(at);
      EXPECT_EQ(CombineChecksumBase64(algorithm, ChecksumOf(algorithm, a), ChecksumOf(algorithm, b),
                                      b.size()),
                whole)
          << ChecksumName(algorithm) << " split at " << at;
    }
  }
}

TEST(CombineChecksumBase64, FoldsManyPiecesLikeAMultipartUpload) {
  std::mt19937_64 rng(5);
  for (auto algorithm : kCrcs) {
    std::string all;
    std::string total = ChecksumOf(algorithm, "");
    for (int piece = 0; piece < 40; ++piece) {
      const std::string bytes = RandomBytes(rng() % 3000, rng());
      auto next =
          CombineChecksumBase64(algorithm, total, ChecksumOf(algorithm, bytes), bytes.size());
      ASSERT_TRUE(next.has_value());
      total = *next;
      all += bytes;
    }
    EXPECT_EQ(total, ChecksumOf(algorithm, all)) << ChecksumName(algorithm);
  }
}

TEST(CombineChecksumBase64, RejectsMalformedValues) {
  const std::string good32 = ChecksumOf(ChecksumAlgorithm::kCrc32, "abc");
  const std::string good64 = ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, "abc");
  ASSERT_EQ(good32.size(), 8u);
  ASSERT_EQ(good64.size(), 12u);
  const std::string bad32[] = {
      "",
      "!!!!!!!!",                 // not base64
      "AAAA",                     // 3 bytes
      Base64Encode("12345"),      // 5 bytes
      good64,                     // a CRC64's width
      good32.substr(0, 6),        // truncated
      good32 + "AAAA",            // trailing bytes
      good32.substr(0, 7) + "*",  // bad character
  };
  for (auto algorithm : {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c}) {
    for (const auto& bad : bad32) {
      EXPECT_EQ(CombineChecksumBase64(algorithm, bad, good32, 3), std::nullopt) << bad;
      EXPECT_EQ(CombineChecksumBase64(algorithm, good32, bad, 3), std::nullopt) << bad;
    }
  }
  for (const auto& bad : {std::string(""), std::string("????????????"), good32,
                          Base64Encode("123456789"), good64.substr(0, 8)}) {
    EXPECT_EQ(CombineChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, bad, good64, 3), std::nullopt)
        << bad;
    EXPECT_EQ(CombineChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, good64, bad, 3), std::nullopt)
        << bad;
  }
}

TEST(CombineChecksumBase64, OnlyCrcsCombine) {
  EXPECT_TRUE(IsCombinable(ChecksumAlgorithm::kCrc32));
  EXPECT_TRUE(IsCombinable(ChecksumAlgorithm::kCrc32c));
  EXPECT_TRUE(IsCombinable(ChecksumAlgorithm::kCrc64Nvme));
  EXPECT_FALSE(IsCombinable(ChecksumAlgorithm::kSha1));
  EXPECT_FALSE(IsCombinable(ChecksumAlgorithm::kSha256));
  for (auto algorithm : {ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    const std::string a = ChecksumOf(algorithm, "a");
    const std::string b = ChecksumOf(algorithm, "b");
    EXPECT_EQ(CombineChecksumBase64(algorithm, a, b, 1), std::nullopt);
    // Not even values of a CRC's width are taken for a SHA.
    const std::string crc = ChecksumOf(ChecksumAlgorithm::kCrc32, "a");
    EXPECT_EQ(CombineChecksumBase64(algorithm, crc, crc, 1), std::nullopt);
  }
}

}  // namespace
}  // namespace strata::storage
