// The chunk trailer of a local data file (private to storage/): the CRC64NVME of every
// fixed-size chunk of the object bytes, appended after them when the file is promoted, so
// a read verifies exactly the chunks it touches. Format (all integers little-endian):
//
//   [data: data_length bytes]
//   [chunk CRCs: chunk_count x u64]      CRC64NVME of each chunk_size run of the data; the
//                                        last chunk may be short
//   [footer: 40 bytes]
//     magic        8 bytes  "STRATACK"
//     version      u32      1
//     chunk_size   u32      64 KiB when written by this code (1 MiB before; any power
//                           of two from 4 KiB to 64 MiB reads)
//     data_length  u64      == the extent's size in the index
//     chunk_count  u64      == ceil(data_length / chunk_size)
//     trailer_crc  u64      CRC64NVME of the chunk CRCs and the footer's first 32 bytes
//
// So file size == data_length + 8 * chunk_count + 40. Files written before the trailer
// existed are the bare data (file size == extent size) and are read unverified.
// Pure functions and a builder used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata::storage {

// 64 KiB: a GET's send block (256 KiB) holds whole chunks, verified where they land, so no
// reader keeps a chunk of its own; a small range reads and hashes at most 128 KiB.
inline constexpr std::uint32_t kChunkSize = 64 << 10;
inline constexpr std::uint32_t kTrailerVersion = 1;
inline constexpr std::size_t kFooterSize = 40;
inline constexpr std::string_view kTrailerMagic = "STRATACK";

// The decoded footer of a data file.
struct ChunkFooter {
  std::uint32_t chunk_size = kChunkSize;
  std::uint64_t data_length = 0;
  std::uint64_t chunk_count = 0;
  std::uint64_t trailer_crc = 0;

  // Offset of the chunk CRCs in the file (== data_length).
  std::uint64_t crcs_offset() const { return data_length; }
  // Bytes after the data: the chunk CRCs and the footer.
  std::uint64_t trailer_size() const { return chunk_count * 8 + kFooterSize; }
};

// Feeds the bytes of a data file in order; yields the chunk CRCs, the CRC of all the
// bytes (combined from the chunks', so every byte is hashed once) and the trailer.
class ChunkCrcBuilder {
 public:
  void Update(std::string_view data);
  // CRC64NVME of everything fed so far.
  std::uint64_t Crc() const;
  std::uint64_t size() const { return size_; }
  // The chunk CRCs and footer for everything fed so far.
  std::string Trailer() const;

 private:
  std::vector<std::uint64_t> chunks_;  // CRCs of the complete chunks
  std::uint64_t whole_ = 0;            // CRC of the complete chunks
  std::uint64_t partial_ = 0;          // CRC of the bytes of the chunk being filled
  std::uint32_t partial_size_ = 0;
  std::uint64_t size_ = 0;
};

// Decodes and checks a footer against the file it ends: magic, version, a sane chunk
// size, chunk_count matching data_length, and file_size == data + trailer.
// kCorruption (naming `path`) otherwise.
Result<ChunkFooter> DecodeFooter(std::string_view footer, std::uint64_t file_size,
                                 std::string_view path);

// Decodes the chunk CRCs (8 * chunk_count bytes read at crcs_offset()) after checking the
// trailer's own CRC. kCorruption (naming `path`) when it does not match.
Result<std::vector<std::uint64_t>> DecodeChunkCrcs(std::string_view crcs,
                                                   std::string_view footer_bytes,
                                                   const ChunkFooter& footer,
                                                   std::string_view path);

// Decodes a run of chunk CRCs (8 bytes each) without the trailer check, for a reader
// that loads a window of a large file's CRCs: a damaged entry still fails its chunk.
std::vector<std::uint64_t> DecodeCrcRun(std::string_view crcs);

// Counts a chunk or trailer whose CRC did not match (ChecksumMismatches() reads it).
void CountChecksumMismatch();

}  // namespace strata::storage
