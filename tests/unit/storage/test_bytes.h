// Test data and reference digests the storage tests share.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "storage/checksum.h"

namespace strata::storage::testing {

// n pseudo-random bytes, the same for the same seed.
inline std::string RandomBytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) {
    c = static_cast<char>(rng());
  }
  return s;
}

// The reference: the checksummer run over the bytes themselves.
inline std::string ChecksumOf(ChecksumAlgorithm algorithm, std::string_view data) {
  auto digest = MakeChecksummer(algorithm);
  digest->Update(data);
  return digest->FinalBase64();
}

inline std::string Md5Hex(std::string_view data) {
  Md5 md5;
  md5.Update(data);
  return md5.FinalHex();
}

}  // namespace strata::storage::testing
