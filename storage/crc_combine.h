// Combining CRCs: the CRC of a + b from CRC(a), CRC(b) and b's length, without the bytes.
// How a multipart object's FULL_OBJECT checksum is formed from its parts' checksums.
// Pure functions, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/checksum.h"

namespace strata::storage {

// For the reflected CRC-32 polynomials (CRC32 0xEDB88320, CRC32C 0x82F63B78), with the
// usual all-ones init and xorout; O(log len_b).
std::uint32_t Crc32Combine(std::uint32_t reflected_poly, std::uint32_t crc_a, std::uint32_t crc_b,
                           std::uint64_t len_b);

// The same on S3's base64 checksum values, for CRC32, CRC32C and CRC64NVME. nullopt for
// other algorithms or values that are not a well-formed checksum of that algorithm.
std::optional<std::string> CombineChecksumBase64(ChecksumAlgorithm algorithm, std::string_view a,
                                                 std::string_view b, std::uint64_t len_b);

// True for the algorithms whose checksums combine (the CRCs).
bool IsCombinable(ChecksumAlgorithm algorithm);

}  // namespace strata::storage
