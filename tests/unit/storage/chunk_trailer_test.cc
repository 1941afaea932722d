#include "storage/local/chunk_trailer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "storage/crc64nvme.h"
#include "tests/unit/storage/test_bytes.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;

std::uint64_t Le64(std::string_view s, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
  }
  return v;
}

TEST(ChunkTrailerTest, ChunkCrcsAndWholeCrcMatchDirectComputation) {
  for (std::size_t size :
       {std::size_t{0}, std::size_t{1}, std::size_t{kChunkSize - 1}, std::size_t{kChunkSize},
        std::size_t{kChunkSize + 1}, std::size_t{3 * kChunkSize + 12345}}) {
    const std::string data = RandomBytes(size, size);
    ChunkCrcBuilder builder;
    // Uneven pieces that straddle chunk boundaries.
    for (std::size_t pos = 0; pos < data.size(); pos += 300'007) {
      builder.Update(std::string_view(data).substr(pos, 300'007));
    }
    EXPECT_EQ(builder.size(), size);
    EXPECT_EQ(builder.Crc(), Crc64Nvme(0, data)) << size;
    const std::string trailer = builder.Trailer();
    const std::uint64_t chunks = (size + kChunkSize - 1) / kChunkSize;
    ASSERT_EQ(trailer.size(), chunks * 8 + kFooterSize);
    for (std::uint64_t i = 0; i < chunks; ++i) {
      EXPECT_EQ(Le64(trailer, i * 8),
                Crc64Nvme(0, std::string_view(data).substr(i * kChunkSize, kChunkSize)));
    }
    const std::string_view footer_bytes = std::string_view(trailer).substr(chunks * 8);
    auto footer = DecodeFooter(footer_bytes, size + trailer.size(), "f");
    ASSERT_TRUE(footer.ok()) << footer.error().message;
    EXPECT_EQ(footer->data_length, size);
    EXPECT_EQ(footer->chunk_count, chunks);
    EXPECT_EQ(footer->chunk_size, kChunkSize);
    auto crcs = DecodeChunkCrcs(std::string_view(trailer).substr(0, chunks * 8), footer_bytes,
                                *footer, "f");
    ASSERT_TRUE(crcs.ok()) << crcs.error().message;
    EXPECT_EQ(crcs->size(), chunks);
  }
}

TEST(ChunkTrailerTest, DamagedFootersAreRefused) {
  ChunkCrcBuilder builder;
  builder.Update(RandomBytes(2 * kChunkSize + 5, 7));
  const std::string trailer = builder.Trailer();
  const std::uint64_t file_size = 2 * kChunkSize + 5 + trailer.size();
  const std::string footer = trailer.substr(trailer.size() - kFooterSize);
  ASSERT_TRUE(DecodeFooter(footer, file_size, "f").ok());
  // The file is not the size the footer says.
  EXPECT_EQ(DecodeFooter(footer, file_size - 1, "f").error().code, ErrorCode::kCorruption);
  EXPECT_EQ(DecodeFooter(footer, file_size + 1, "f").error().code, ErrorCode::kCorruption);
  EXPECT_EQ(DecodeFooter(footer.substr(1), file_size, "f").error().code, ErrorCode::kCorruption);
  // Every field: magic, version, chunk size, length, count.
  for (std::size_t at : {0, 8, 13, 16, 24}) {
    std::string bad = footer;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    auto decoded = DecodeFooter(bad, file_size, "/data/ab/abc");
    ASSERT_FALSE(decoded.ok()) << at;
    EXPECT_EQ(decoded.error().code, ErrorCode::kCorruption);
    EXPECT_NE(decoded.error().message.find("/data/ab/abc"), std::string::npos);
  }
  // The trailer's own CRC covers the chunk CRCs and the footer.
  auto decoded = DecodeFooter(footer, file_size, "f");
  ASSERT_TRUE(decoded.ok());
  for (std::size_t at : {std::size_t{0}, std::size_t{23}, trailer.size() - 9}) {
    std::string bad = trailer;
    bad[at] = static_cast<char>(bad[at] ^ 1);
    const std::string_view view(bad);
    auto crcs = DecodeChunkCrcs(view.substr(0, 24), view.substr(24), *decoded, "f");
    ASSERT_FALSE(crcs.ok()) << at;
    EXPECT_EQ(crcs.error().code, ErrorCode::kCorruption);
  }
}

}  // namespace
}  // namespace strata::storage
