#include "storage/crc_combine.h"

#include "storage/crc64nvme.h"

namespace strata::storage {
namespace {

constexpr std::uint32_t kCrc32Poly = 0xEDB88320u;
constexpr std::uint32_t kCrc32cPoly = 0x82F63B78u;

// a * b mod P with polynomials in reflected form (x^0 is the top bit).
std::uint32_t MulMod32(std::uint32_t poly, std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) {
      product ^= b;
    }
    b = (b & 1) ? (b >> 1) ^ poly : b >> 1;
  }
  return product;
}

std::optional<std::uint64_t> DecodeBigEndian(std::string_view base64, std::size_t width) {
  auto raw = Base64Decode(base64);
  if (!raw || raw->size() != width) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  for (char c : *raw) {
    v = (v << 8) | static_cast<unsigned char>(c);
  }
  return v;
}

std::string EncodeBigEndian(std::uint64_t v, std::size_t width) {
  std::string raw(width, '\0');
  for (std::size_t i = 0; i < width; ++i) {
    raw[width - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
  return Base64Encode(raw);
}

}  // namespace

std::uint32_t Crc32Combine(std::uint32_t reflected_poly, std::uint32_t crc_a, std::uint32_t crc_b,
                           std::uint64_t len_b) {
  // CRC(a+b) = CRC(b) ^ CRC(a) * x^(8*len_b) mod P (init and xorout cancel out).
  std::uint32_t factor = 1u << 31;      // x^0
  std::uint32_t base = 1u << (31 - 8);  // x^8
  for (std::uint64_t n = len_b; n != 0; n >>= 1) {
    if (n & 1) {
      factor = MulMod32(reflected_poly, factor, base);
    }
    base = MulMod32(reflected_poly, base, base);
  }
  return MulMod32(reflected_poly, crc_a, factor) ^ crc_b;
}

bool IsCombinable(ChecksumAlgorithm algorithm) {
  return algorithm == ChecksumAlgorithm::kCrc32 || algorithm == ChecksumAlgorithm::kCrc32c ||
         algorithm == ChecksumAlgorithm::kCrc64Nvme;
}

std::optional<std::string> CombineChecksumBase64(ChecksumAlgorithm algorithm, std::string_view a,
                                                 std::string_view b, std::uint64_t len_b) {
  const std::size_t width = algorithm == ChecksumAlgorithm::kCrc64Nvme ? 8 : 4;
  if (!IsCombinable(algorithm)) {
    return std::nullopt;
  }
  auto crc_a = DecodeBigEndian(a, width);
  auto crc_b = DecodeBigEndian(b, width);
  if (!crc_a || !crc_b) {
    return std::nullopt;
  }
  std::uint64_t combined = 0;
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      combined = Crc32Combine(kCrc32Poly, static_cast<std::uint32_t>(*crc_a),
                              static_cast<std::uint32_t>(*crc_b), len_b);
      break;
    case ChecksumAlgorithm::kCrc32c:
      combined = Crc32Combine(kCrc32cPoly, static_cast<std::uint32_t>(*crc_a),
                              static_cast<std::uint32_t>(*crc_b), len_b);
      break;
    default:
      combined = Crc64NvmeCombine(*crc_a, *crc_b, len_b);
      break;
  }
  return EncodeBigEndian(combined, width);
}

}  // namespace strata::storage
