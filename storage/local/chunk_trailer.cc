#include "storage/local/chunk_trailer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/little_endian.h"
#include "storage/crc64nvme.h"
#include "storage/integrity.h"

namespace strata::storage {
namespace {

std::atomic<std::uint64_t> checksum_mismatches{0};

// Chunk sizes a reader accepts: powers of two from 4 KiB to 64 MiB (the reader buffers
// one chunk).
bool SaneChunkSize(std::uint64_t size) {
  return size >= 4096 && size <= (64u << 20) && (size & (size - 1)) == 0;
}

}  // namespace

std::uint64_t ChecksumMismatches() { return checksum_mismatches.load(std::memory_order_relaxed); }

void CountChecksumMismatch() { checksum_mismatches.fetch_add(1, std::memory_order_relaxed); }

void ChunkCrcBuilder::Update(std::string_view data) {
  size_ += data.size();
  while (!data.empty()) {
    const std::size_t take = std::min<std::size_t>(data.size(), kChunkSize - partial_size_);
    partial_ = Crc64Nvme(partial_, data.substr(0, take));
    partial_size_ += static_cast<std::uint32_t>(take);
    data.remove_prefix(take);
    if (partial_size_ == kChunkSize) {
      chunks_.push_back(partial_);
      whole_ = Crc64NvmeCombine(whole_, partial_, kChunkSize);
      partial_ = 0;
      partial_size_ = 0;
    }
  }
}

std::uint64_t ChunkCrcBuilder::Crc() const {
  return partial_size_ == 0 ? whole_ : Crc64NvmeCombine(whole_, partial_, partial_size_);
}

std::string ChunkCrcBuilder::Trailer() const {
  const std::uint64_t count = chunks_.size() + (partial_size_ > 0 ? 1 : 0);
  std::string out;
  out.reserve(count * 8 + kFooterSize);
  for (std::uint64_t crc : chunks_) {
    PutLe(out, crc, 8);
  }
  if (partial_size_ > 0) {
    PutLe(out, partial_, 8);
  }
  out.append(kTrailerMagic);
  PutLe(out, kTrailerVersion, 4);
  PutLe(out, kChunkSize, 4);
  PutLe(out, size_, 8);
  PutLe(out, count, 8);
  PutLe(out, Crc64Nvme(0, out), 8);
  return out;
}

Result<ChunkFooter> DecodeFooter(std::string_view footer, std::uint64_t file_size,
                                 std::string_view path) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kCorruption, "data file " + std::string(path) +
                                             ": bad chunk trailer (" + std::string(why) + ")");
  };
  if (footer.size() != kFooterSize || footer.substr(0, 8) != kTrailerMagic) {
    return bad("no footer");
  }
  if (GetLe(footer, 8, 4) != kTrailerVersion) {
    return bad("unknown version " + std::to_string(GetLe(footer, 8, 4)));
  }
  ChunkFooter out;
  const std::uint64_t chunk_size = GetLe(footer, 12, 4);
  if (!SaneChunkSize(chunk_size)) {
    return bad("chunk size " + std::to_string(chunk_size));
  }
  out.chunk_size = static_cast<std::uint32_t>(chunk_size);
  out.data_length = GetLe(footer, 16, 8);
  out.chunk_count = GetLe(footer, 24, 8);
  out.trailer_crc = GetLe(footer, 32, 8);
  if (out.data_length > file_size ||
      out.chunk_count != (out.data_length + chunk_size - 1) / chunk_size) {
    return bad("chunk count");
  }
  if (file_size - out.data_length != out.trailer_size()) {
    return bad("file size " + std::to_string(file_size) + " for " +
               std::to_string(out.data_length) + " data bytes");
  }
  return out;
}

Result<std::vector<std::uint64_t>> DecodeChunkCrcs(std::string_view crcs,
                                                   std::string_view footer_bytes,
                                                   const ChunkFooter& footer,
                                                   std::string_view path) {
  if (crcs.size() != footer.chunk_count * 8 || footer_bytes.size() != kFooterSize) {
    return Error(ErrorCode::kInternal, "chunk trailer of " + std::string(path) + " misread");
  }
  std::uint64_t crc = Crc64Nvme(0, crcs);
  crc = Crc64Nvme(crc, footer_bytes.substr(0, kFooterSize - 8));
  if (crc != footer.trailer_crc) {
    return Error(ErrorCode::kCorruption,
                 "data file " + std::string(path) + ": chunk trailer fails its CRC64NVME");
  }
  return DecodeCrcRun(crcs);
}

std::vector<std::uint64_t> DecodeCrcRun(std::string_view crcs) {
  std::vector<std::uint64_t> out(crcs.size() / 8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = GetLe(crcs, i * 8, 8);
  }
  return out;
}

}  // namespace strata::storage
