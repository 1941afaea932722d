#include "storage/crc64nvme.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace strata::storage {
namespace {

// Bit at a time, straight from the definition: the reference the fast ones must match.
std::uint64_t Crc64Bitwise(std::string_view data) {
  std::uint64_t crc = ~0ULL;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) {
      crc = (crc & 1) ? (crc >> 1) ^ 0x9A6C9329AC4BC9B5ULL : crc >> 1;  // reflected poly
    }
  }
  return ~crc;
}

std::string RandomBytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) {
    c = static_cast<char>(rng());
  }
  return s;
}

TEST(Crc64NvmeTest, ReferenceVectors) {
  const std::string check = "123456789";
  EXPECT_EQ(Crc64Nvme(0, check), 0xAE8B14860A799888ULL);
  EXPECT_EQ(Crc64NvmePortable(0, check.data(), check.size()), 0xAE8B14860A799888ULL);
  EXPECT_EQ(Crc64NvmeClmul(0, check.data(), check.size()), 0xAE8B14860A799888ULL);
  EXPECT_EQ(Crc64Bitwise(check), 0xAE8B14860A799888ULL);
  EXPECT_EQ(Crc64Nvme(0, ""), 0u);
  // Long inputs through the folding path, checked against the bitwise definition.
  const std::string zeros(4096, '\0');
  const std::string ones(4096, '\xff');
  EXPECT_EQ(Crc64Nvme(0, zeros), Crc64Bitwise(zeros));
  EXPECT_EQ(Crc64Nvme(0, ones), Crc64Bitwise(ones));
}

TEST(Crc64NvmeTest, ImplementationsAgreeOnEveryLengthUpTo1024) {
  std::mt19937_64 rng(42);
  const std::string buf = RandomBytes(rng, 1024 + 64);
  for (std::size_t len = 0; len <= 1024; ++len) {
    for (std::size_t offset : {0, 1, 7}) {  // unaligned starts too
      const std::string_view s(buf.data() + offset, len);
      const std::uint64_t want = Crc64Bitwise(s);
      ASSERT_EQ(Crc64NvmePortable(0, s.data(), s.size()), want) << "len " << len;
      ASSERT_EQ(Crc64NvmeClmul(0, s.data(), s.size()), want) << "len " << len;
    }
  }
}

TEST(Crc64NvmeTest, ImplementationsAgreeOnBigBuffersAndIncrementally) {
  std::mt19937_64 rng(7);
  for (std::size_t len : {4096u, 65536u + 13u, 1u << 20, (3u << 20) + 5u}) {
    const std::string s = RandomBytes(rng, len);
    const std::uint64_t portable = Crc64NvmePortable(0, s.data(), s.size());
    EXPECT_EQ(Crc64NvmeClmul(0, s.data(), s.size()), portable) << len;
    // Incremental updates in random-sized pieces give the same result.
    std::uint64_t crc = 0;
    std::size_t pos = 0;
    while (pos < s.size()) {
      const std::size_t n = std::min<std::size_t>(s.size() - pos, rng() % 5000);
      crc = Crc64Nvme(crc, s.data() + pos, n);
      pos += n;
    }
    EXPECT_EQ(crc, portable) << len;
  }
  if (!Crc64NvmeHasClmul()) {
    GTEST_LOG_(INFO) << "no PCLMULQDQ on this CPU: only the portable path was exercised";
  }
}

TEST(Crc64NvmeTest, Combine) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 200; ++i) {
    const std::string a = RandomBytes(rng, rng() % 3000);
    const std::string b = RandomBytes(rng, rng() % 3000);
    const std::uint64_t whole = Crc64Nvme(0, a + b);
    EXPECT_EQ(Crc64NvmeCombine(Crc64Nvme(0, a), Crc64Nvme(0, b), b.size()), whole)
        << a.size() << "+" << b.size();
  }
  // Empty pieces.
  const std::string x = "abcdef";
  EXPECT_EQ(Crc64NvmeCombine(Crc64Nvme(0, x), 0, 0), Crc64Nvme(0, x));
  EXPECT_EQ(Crc64NvmeCombine(0, Crc64Nvme(0, x), x.size()), Crc64Nvme(0, x));
  // A large second part (multi-GiB lengths only cost log(n) steps).
  const std::string big(1 << 20, 'z');
  std::string four_parts;
  std::uint64_t combined = 0;
  for (int i = 0; i < 4; ++i) {
    combined = Crc64NvmeCombine(combined, Crc64Nvme(0, big), big.size());
    four_parts += big;
  }
  EXPECT_EQ(combined, Crc64Nvme(0, four_parts));
}

}  // namespace
}  // namespace strata::storage
