// CRC64NVME (the CRC-64 of NVMe and S3's x-amz-checksum-crc64nvme): reflected CRC with
// polynomial 0xAD93D23594C93659 (0x9A6C9329AC4BC9B5 bit-reversed), init and xorout all
// ones; "123456789" -> 0xAE8B14860A799888.
// A carry-less-multiply (PCLMULQDQ) folding implementation is chosen at run time when the
// CPU has it, with a portable slicing-by-8 fallback. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::storage {

// Extends `crc` (the CRC of the bytes before, 0 for none) over `data`, like zlib's crc32:
// Crc64Nvme(Crc64Nvme(0, a), b) == Crc64Nvme(0, a + b).
std::uint64_t Crc64Nvme(std::uint64_t crc, const void* data, std::size_t len);
inline std::uint64_t Crc64Nvme(std::uint64_t crc, std::string_view data) {
  return Crc64Nvme(crc, data.data(), data.size());
}

// The CRC of a + b from crc_a = CRC(a), crc_b = CRC(b) and len_b = b.size(), in
// O(log len_b): how a multipart object's checksum is formed from its parts'.
std::uint64_t Crc64NvmeCombine(std::uint64_t crc_a, std::uint64_t crc_b, std::uint64_t len_b);

// The two implementations, exposed for tests and benchmarks. Crc64NvmeClmul falls back
// to the portable one when the CPU lacks PCLMULQDQ/SSE4.1 (see Crc64NvmeHasClmul).
std::uint64_t Crc64NvmePortable(std::uint64_t crc, const void* data, std::size_t len);
std::uint64_t Crc64NvmeClmul(std::uint64_t crc, const void* data, std::size_t len);
bool Crc64NvmeHasClmul();

}  // namespace strata::storage
