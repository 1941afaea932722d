#include "storage/crc64nvme.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define STRATA_CRC64_X86 1
#endif

namespace strata::storage {
namespace {

constexpr std::uint64_t kPoly = 0x9A6C9329AC4BC9B5ULL;  // 0xAD93D23594C93659 bit-reversed
constexpr std::uint64_t kOne = 1ULL << 63;              // x^0 in reflected form

using Table = std::array<std::array<std::uint64_t, 256>, 8>;

constexpr Table MakeTables() {
  Table t{};
  for (std::uint64_t i = 0; i < 256; ++i) {
    std::uint64_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    }
    t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s) {
    for (int i = 0; i < 256; ++i) {
      const std::uint64_t prev = t[s - 1][i];
      t[s][i] = (prev >> 8) ^ t[0][prev & 0xff];
    }
  }
  return t;
}

constexpr Table kTables = MakeTables();

std::uint64_t Load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

// The raw register (no init/xorout) advanced over `len` bytes, slicing-by-8.
std::uint64_t UpdatePortable(std::uint64_t reg, const unsigned char* p, std::size_t len) {
  while (len >= 8) {
    reg ^= Load64(p);
    reg = kTables[7][reg & 0xff] ^ kTables[6][(reg >> 8) & 0xff] ^ kTables[5][(reg >> 16) & 0xff] ^
          kTables[4][(reg >> 24) & 0xff] ^ kTables[3][(reg >> 32) & 0xff] ^
          kTables[2][(reg >> 40) & 0xff] ^ kTables[1][(reg >> 48) & 0xff] ^ kTables[0][reg >> 56];
    p += 8;
    len -= 8;
  }
  while (len-- > 0) {
    reg = (reg >> 8) ^ kTables[0][(reg ^ *p++) & 0xff];
  }
  return reg;
}

// a * b mod P, both in reflected form (bit 63 is x^0).
std::uint64_t MulMod(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  for (std::uint64_t m = kOne; m != 0; m >>= 1) {
    if (a & m) {
      product ^= b;
    }
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

// x^n mod P in reflected form.
std::uint64_t XPowMod(std::uint64_t n) {
  std::uint64_t result = kOne;
  std::uint64_t base = kOne >> 1;  // x^1
  while (n != 0) {
    if (n & 1) {
      result = MulMod(result, base);
    }
    base = MulMod(base, base);
    n >>= 1;
  }
  return result;
}

#ifdef STRATA_CRC64_X86

// Folding constants. A 16-byte block loaded little-endian holds the polynomial
// H*x^64 + L, H in the low qword (reflected data: the first bytes are the highest
// powers). Moving it T bits further along the message multiplies it by x^T:
// H*x^(T+64) + L*x^T. A reflected carry-less product carries one extra factor x, hence
// the exponents T+63 and T-1.
struct FoldConstants {
  std::uint64_t k128_hi;   // x^(128+63) mod P: for H, folding by 16 bytes
  std::uint64_t k128_lo;   // x^(128-1) mod P: for L
  std::uint64_t k1024_hi;  // x^(1024+63) mod P: folding by 128 bytes
  std::uint64_t k1024_lo;  // x^(1024-1) mod P
};

const FoldConstants& Constants() {
  static const FoldConstants k{XPowMod(191), XPowMod(127), XPowMod(1087), XPowMod(1023)};
  return k;
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

__attribute__((target("pclmul,sse4.1"))) std::uint64_t UpdateClmul(std::uint64_t reg,
                                                                   const unsigned char* p,
                                                                   std::size_t len) {
  if (len < 256) {
    return UpdatePortable(reg, p, len);
  }
  const FoldConstants& c = Constants();
  const __m128i k128 =
      _mm_set_epi64x(static_cast<long long>(c.k128_lo), static_cast<long long>(c.k128_hi));
  const __m128i k1024 =
      _mm_set_epi64x(static_cast<long long>(c.k1024_lo), static_cast<long long>(c.k1024_hi));
  auto load = [](const unsigned char* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  };
  __m128i x[8];
  for (int i = 0; i < 8; ++i) {
    x[i] = load(p + 16 * i);
  }
  // The running register is XORed into the first 8 bytes of the message.
  x[0] = _mm_xor_si128(x[0], _mm_cvtsi64_si128(static_cast<long long>(reg)));
  p += 128;
  len -= 128;
  while (len >= 128) {
    for (int i = 0; i < 8; ++i) {
      x[i] = _mm_xor_si128(Fold(x[i], k1024), load(p + 16 * i));
    }
    p += 128;
    len -= 128;
  }
  __m128i acc = x[0];
  for (int i = 1; i < 8; ++i) {
    acc = _mm_xor_si128(Fold(acc, k128), x[i]);
  }
  while (len >= 16) {
    acc = _mm_xor_si128(Fold(acc, k128), load(p));
    p += 16;
    len -= 16;
  }
  // acc is congruent to everything consumed; the register for it is acc's 16 bytes run
  // from a zero register.
  alignas(16) unsigned char tail[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(tail), acc);
  reg = UpdatePortable(0, tail, 16);
  return UpdatePortable(reg, p, len);
}

bool DetectClmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

#endif  // STRATA_CRC64_X86

}  // namespace

bool Crc64NvmeHasClmul() {
#ifdef STRATA_CRC64_X86
  static const bool has = DetectClmul();
  return has;
#else
  return false;
#endif
}

std::uint64_t Crc64NvmePortable(std::uint64_t crc, const void* data, std::size_t len) {
  return ~UpdatePortable(~crc, static_cast<const unsigned char*>(data), len);
}

std::uint64_t Crc64NvmeClmul(std::uint64_t crc, const void* data, std::size_t len) {
#ifdef STRATA_CRC64_X86
  if (Crc64NvmeHasClmul()) {
    return ~UpdateClmul(~crc, static_cast<const unsigned char*>(data), len);
  }
#endif
  return Crc64NvmePortable(crc, data, len);
}

std::uint64_t Crc64Nvme(std::uint64_t crc, const void* data, std::size_t len) {
  return Crc64NvmeClmul(crc, data, len);
}

std::uint64_t Crc64NvmeCombine(std::uint64_t crc_a, std::uint64_t crc_b, std::uint64_t len_b) {
  if (len_b == 0) {
    return crc_a;
  }
  // CRC(a+b) = CRC(b) ^ CRC(a) * x^(8*len_b) mod P: init and xorout cancel out.
  // 8*len_b may overflow 64 bits, so raise x^8 to len_b instead.
  std::uint64_t factor = kOne;
  std::uint64_t base = XPowMod(8);
  for (std::uint64_t n = len_b; n != 0; n >>= 1) {
    if (n & 1) {
      factor = MulMod(factor, base);
    }
    base = MulMod(base, base);
  }
  return MulMod(crc_a, factor) ^ crc_b;
}

}  // namespace strata::storage
