// The cluster's read cache (storage/read_cache.h): which versions it names and how, what it
// keeps and refuses, eviction, and damaged copies.
#include "storage/read_cache.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "storage/checksum.h"
#include "storage/crc64nvme.h"
#include "test_dir.h"
#include "test_io_context.h"

namespace strata::storage {
namespace {

using testing::FilesUnder;
using testing::RunAwaitable;
using testing::TempDir;

std::string Bytes(std::size_t n, char seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<char>(seed + static_cast<char>(i * 7 % 251));
  }
  return out;
}

std::uint64_t CrcOf(std::string_view bytes) { return Crc64Nvme(0, bytes); }

metadata::ObjectRecord RecordOf(std::string_view bytes, std::string version = "null") {
  metadata::ObjectRecord record;
  record.bucket = BucketName("b");
  record.key = ObjectKey("k");
  record.version_id = VersionId(std::move(version));
  record.size = bytes.size();
  record.etag = "0123456789abcdef0123456789abcdef";
  record.last_modified_ms = 1'700'000'000'000;
  auto crc = MakeChecksummer(ChecksumAlgorithm::kCrc64Nvme);
  crc->Update(bytes);
  record.checksums = {{"CRC64NVME", crc->FinalBase64()}};
  record.placements = {{"hot", {{"00112233445566778899aabbccddeeff", bytes.size()}}}};
  return record;
}

class ReadCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<ReadCache> Open(std::uint64_t capacity, std::size_t entries = 100,
                                  std::uint64_t max_object = 0) {
    auto cache = OpenReadCache(ReadCacheOptions{.root = (dir_.path() / "cache").string(),
                                                .capacity = capacity,
                                                .max_entries = entries,
                                                .max_object = max_object});
    EXPECT_TRUE(cache.ok()) << cache.error().message;
    return std::move(cache).value();
  }

  // Fills `key` with `bytes` as version `tag` in appends of `piece` bytes; commits with
  // `crc` (the bytes' own when unset). Whether the copy was kept.
  bool Fill(ReadCache& cache, std::string_view key, std::string_view tag, std::string_view bytes,
            std::optional<std::uint64_t> crc = std::nullopt, std::size_t piece = 1000) {
    auto fill = cache.BeginFill(BucketName("b"), ObjectKey(key), tag, bytes.size());
    if (!fill) {
      return false;
    }
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      auto appended = RunAwaitable(ioc_, fill->Append(bytes.substr(at, piece)));
      if (!appended.ok()) {
        return false;
      }
    }
    return fill->Commit(crc.value_or(CrcOf(bytes)));
  }

  // All of a hit's bytes.
  Result<std::string> ReadAll(ObjectReader& reader) {
    std::string out(reader.size(), '\0');
    std::uint64_t at = 0;
    while (at < out.size()) {
      auto n = reader.Read(at, std::span<char>(out.data() + at, out.size() - at));
      if (!n.ok()) {
        return std::move(n).error();
      }
      if (*n == 0) {
        return Error(ErrorCode::kCorruption, "short");
      }
      at += *n;
    }
    return out;
  }

  TempDir dir_;
  boost::asio::io_context ioc_;
};

TEST(ReadCacheVersionTest, NamesCacheableVersionsOnly) {
  const std::string bytes = Bytes(5000, 'a');
  const auto record = RecordOf(bytes);
  auto version = ReadCacheVersionOf(record);
  ASSERT_TRUE(version);
  EXPECT_EQ(version->crc, CrcOf(bytes));
  EXPECT_TRUE(version->tag.starts_with("null:")) << version->tag;
  EXPECT_LE(version->tag.size(), kMaxReadCacheTag);
  EXPECT_EQ(ReadCacheVersionOf(record)->tag, version->tag);  // a pure function

  auto marker = record;
  marker.delete_marker = true;
  EXPECT_FALSE(ReadCacheVersionOf(marker));
  auto empty = RecordOf("");
  EXPECT_FALSE(ReadCacheVersionOf(empty));
  auto infrequent = record;
  infrequent.storage_class = "STANDARD_IA";
  EXPECT_FALSE(ReadCacheVersionOf(infrequent));
  auto glacier = record;
  glacier.storage_class = "GLACIER";
  EXPECT_FALSE(ReadCacheVersionOf(glacier));
  auto no_crc = record;
  no_crc.checksums = {{"CRC32", "AAAAAA=="}};
  EXPECT_FALSE(ReadCacheVersionOf(no_crc));
  auto bad_crc = record;
  bad_crc.checksums = {{"CRC64NVME", "not base64!"}};
  EXPECT_FALSE(ReadCacheVersionOf(bad_crc));
  auto long_id = record;
  long_id.version_id = VersionId(std::string(kMaxReadCacheTag, 'v'));
  EXPECT_FALSE(ReadCacheVersionOf(long_id));
}

TEST(ReadCacheVersionTest, AnotherWriteOfTheSameVersionIdIsAnotherTag) {
  const auto record = RecordOf(Bytes(100, 'a'));
  const std::string tag = ReadCacheVersionOf(record)->tag;
  // Where the bytes are kept is not part of their name: a replica's record of the same
  // write names them as the primary's does.
  auto replica = record;
  replica.placements[0].extents[0].location = "ffeeddccbbaa99887766554433221100";
  EXPECT_EQ(ReadCacheVersionOf(replica)->tag, tag);
  auto later = record;
  later.last_modified_ms += 1;
  EXPECT_NE(ReadCacheVersionOf(later)->tag, tag);
  auto other_etag = record;
  other_etag.etag[0] = 'f';
  EXPECT_NE(ReadCacheVersionOf(other_etag)->tag, tag);
  auto versioned = RecordOf(Bytes(100, 'a'), "3HL4kqtJvjVBH40Nrjfkd");
  EXPECT_TRUE(ReadCacheVersionOf(versioned)->tag.starts_with("3HL4kqtJvjVBH40Nrjfkd:"));
  // Tags (object tagging) rewrite a record in place: the bytes, and the tag, stay.
  auto tagged = record;
  tagged.tags = {{"team", "vision"}};
  EXPECT_EQ(ReadCacheVersionOf(tagged)->tag, tag);
}

TEST_F(ReadCacheTest, KeepsAFilledCopyAndServesIt) {
  auto cache = Open(1 << 20, 100, 1 << 20);
  const std::string bytes = Bytes(300'000, 'x');
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k")));
  ASSERT_TRUE(Fill(*cache, "k", "v1:0000000000000001", bytes, std::nullopt, 64 * 1024 + 3));
  auto hit = cache->Find(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tag, "v1:0000000000000001");
  ASSERT_EQ(hit->reader->size(), bytes.size());
  auto read = ReadAll(*hit->reader);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, bytes);
  // A range, from the middle of a chunk.
  std::string part(1000, '\0');
  auto n = hit->reader->Read(70'000, std::span<char>(part));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string_view(part.data(), *n), std::string_view(bytes).substr(70'000, *n));
  cache->Served(BucketName("b"), ObjectKey("k"), true);
  const auto stats = cache->Stats();
  EXPECT_EQ(stats.fills, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, bytes.size());
  EXPECT_EQ(stats.capacity, 1u << 20);
  // Another bucket's key of the same name is another key.
  EXPECT_FALSE(cache->Find(BucketName("c"), ObjectKey("k")));
}

TEST_F(ReadCacheTest, RefusesWhatItCannotVouchFor) {
  auto cache = Open(1 << 20);
  const std::string bytes = Bytes(10'000, 'y');
  // A CRC that is not the bytes' (the owner's record names other bytes).
  EXPECT_FALSE(Fill(*cache, "k", "t1", bytes, CrcOf(bytes) ^ 1));
  // Fewer bytes than announced: the stream was cut short.
  {
    auto fill = cache->BeginFill(BucketName("b"), ObjectKey("k"), "t1", bytes.size() + 1);
    ASSERT_TRUE(fill);
    ASSERT_TRUE(RunAwaitable(ioc_, fill->Append(bytes)).ok());
    EXPECT_FALSE(fill->Commit(CrcOf(bytes)));
  }
  // More bytes than announced.
  {
    auto fill = cache->BeginFill(BucketName("b"), ObjectKey("k"), "t1", 10);
    ASSERT_TRUE(fill);
    EXPECT_FALSE(RunAwaitable(ioc_, fill->Append(bytes)).ok());
    EXPECT_FALSE(fill->Commit(CrcOf(bytes.substr(0, 10))));
  }
  // A fill abandoned (the client went away) keeps nothing either.
  {
    auto fill = cache->BeginFill(BucketName("b"), ObjectKey("k"), "t1", bytes.size());
    ASSERT_TRUE(fill);
    ASSERT_TRUE(RunAwaitable(ioc_, fill->Append(bytes.substr(0, 100))).ok());
  }
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k")));
  EXPECT_EQ(cache->Stats().refused, 4u);
  EXPECT_EQ(cache->Stats().bytes, 0u);
  // Nothing of them is left on the disk.
  for (const auto& file : FilesUnder(dir_.path() / "cache")) {
    ADD_FAILURE() << "left behind: " << file;
  }
  // No tag, a tag too long, nothing to keep, or more than an eighth of the capacity.
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "", 10));
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"),
                                std::string(kMaxReadCacheTag + 1, 't'), 10));
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "t", 0));
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "t", (1 << 17) + 1));
  EXPECT_TRUE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "t", 1 << 17));
}

TEST_F(ReadCacheTest, OneFillOfAKeyAtATimeAndNoneOfTheCopyItHolds) {
  auto cache = Open(1 << 20);
  const std::string bytes = Bytes(2000, 'z');
  auto first = cache->BeginFill(BucketName("b"), ObjectKey("k"), "t1", bytes.size());
  ASSERT_TRUE(first);
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "t2", bytes.size()));
  EXPECT_TRUE(cache->BeginFill(BucketName("b"), ObjectKey("other"), "t1", bytes.size()));
  ASSERT_TRUE(RunAwaitable(ioc_, first->Append(bytes)).ok());
  ASSERT_TRUE(first->Commit(CrcOf(bytes)));
  EXPECT_FALSE(cache->BeginFill(BucketName("b"), ObjectKey("k"), "t1", bytes.size()));
  // A newer version replaces the copy: one per key.
  const std::string newer = Bytes(3000, 'n');
  ASSERT_TRUE(Fill(*cache, "k", "t2", newer));
  auto hit = cache->Find(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tag, "t2");
  EXPECT_EQ(*ReadAll(*hit->reader), newer);
  EXPECT_EQ(cache->Stats().entries, 1u);
  EXPECT_EQ(cache->Stats().bytes, newer.size());
  EXPECT_EQ(FilesUnder(dir_.path() / "cache" / "data").size(), 1u);
}

TEST_F(ReadCacheTest, EvictsTheLeastRecentlyUsedPastItsCapacity) {
  auto cache = Open(40'000, 100, 10'000);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(Fill(*cache, "k" + std::to_string(i), "t", Bytes(10'000, 'a' + i)));
  }
  EXPECT_EQ(cache->Stats().bytes, 40'000u);
  ASSERT_TRUE(cache->Find(BucketName("b"), ObjectKey("k0")));  // k1 is now the oldest
  // A reader open on the copy about to go reads it whole all the same.
  auto doomed = cache->Find(BucketName("b"), ObjectKey("k1"));
  ASSERT_TRUE(doomed);
  ASSERT_TRUE(cache->Find(BucketName("b"), ObjectKey("k2")));
  ASSERT_TRUE(cache->Find(BucketName("b"), ObjectKey("k3")));
  ASSERT_TRUE(cache->Find(BucketName("b"), ObjectKey("k0")));
  ASSERT_TRUE(Fill(*cache, "k4", "t", Bytes(10'000, 'e')));
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k1")));
  for (const char* kept : {"k0", "k2", "k3", "k4"}) {
    EXPECT_TRUE(cache->Find(BucketName("b"), ObjectKey(kept))) << kept;
  }
  EXPECT_EQ(*ReadAll(*doomed->reader), Bytes(10'000, 'b'));
  const auto stats = cache->Stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.bytes, 40'000u);
  EXPECT_EQ(FilesUnder(dir_.path() / "cache" / "data").size(), 4u);
}

TEST_F(ReadCacheTest, EvictsPastItsEntryCount) {
  auto cache = Open(1 << 20, 2);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Fill(*cache, "k" + std::to_string(i), "t", Bytes(100, 'a')));
  }
  EXPECT_EQ(cache->Stats().entries, 2u);
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k0")));
}

TEST_F(ReadCacheTest, ADamagedCopyFailsItsReadAndIsDropped) {
  auto cache = Open(1 << 20, 100, 1 << 20);
  const std::string bytes = Bytes(200'000, 'd');
  ASSERT_TRUE(Fill(*cache, "k", "t", bytes));
  auto files = FilesUnder(dir_.path() / "cache" / "data");
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream file(files[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100'000);
    file.put('!');
  }
  auto hit = cache->Find(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(hit);
  auto read = ReadAll(*hit->reader);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kCorruption);
  cache->Served(BucketName("b"), ObjectKey("k"), false);
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k")));
  EXPECT_EQ(cache->Stats().errors, 1u);
  EXPECT_TRUE(FilesUnder(dir_.path() / "cache" / "data").empty());
}

TEST_F(ReadCacheTest, AFileGoneFromUnderItIsDropped) {
  auto cache = Open(1 << 20);
  ASSERT_TRUE(Fill(*cache, "k", "t", Bytes(100, 'g')));
  for (const auto& file : FilesUnder(dir_.path() / "cache" / "data")) {
    std::filesystem::remove(file);
  }
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k")));
  EXPECT_EQ(cache->Stats().errors, 1u);
  EXPECT_EQ(cache->Stats().entries, 0u);
}

TEST_F(ReadCacheTest, OpensEmpty) {
  {
    auto cache = Open(1 << 20);
    ASSERT_TRUE(Fill(*cache, "k", "t", Bytes(100, 'o')));
  }
  std::ofstream(dir_.path() / "cache" / "stray") << "left by a crash";
  auto cache = Open(1 << 20);
  EXPECT_FALSE(cache->Find(BucketName("b"), ObjectKey("k")));
  EXPECT_TRUE(FilesUnder(dir_.path() / "cache").empty());
}

}  // namespace
}  // namespace strata::storage
