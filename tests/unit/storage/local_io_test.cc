// ExtentReader's verification of the chunk trailer, through a real ObjectStore: damaged
// bytes are refused chunk by chunk, damaged or truncated trailers at open, and files
// written before the trailer existed still read. Every test runs three ways: the
// synchronous Read/Append, and ReadAsync/AppendAsync on an io_context over each data path
// (io_uring, skipped where the kernel refuses it, and pread/pwrite).
#include "storage/local/local_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "storage/data_path.h"
#include "storage/integrity.h"
#include "storage/local/local_object_store.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_io_context.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;
using testing::RunAwaitable;

using testing::TempDir;

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint64_t kChunk = kChunkSize;

// Bytes after `size` data bytes: one CRC per chunk, then the footer.
constexpr std::uint64_t TrailerSize(std::uint64_t size) {
  return (size + kChunk - 1) / kChunk * 8 + kFooterSize;
}

void FlipByte(const std::string& path, std::uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  char c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, static_cast<off_t>(offset)), 1);
  c = static_cast<char>(c ^ 0x01);
  ASSERT_EQ(::pwrite(fd, &c, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
}

enum class Mode { kSync, kAsyncPread, kAsyncIoUring };

class ChunkVerifyTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    const bool io_uring = GetParam() == Mode::kAsyncIoUring;
    if (SelectDataPath(io_uring) != (io_uring ? DataPath::kIoUring : DataPath::kPread)) {
      STRATA_SKIP_OR_FAIL_IN_CI("io_uring is unavailable here");
    }
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    auto tier = LocalTier::Open("hot", (dir_.path() / "hot").string(), false);
    ASSERT_TRUE(tier.ok()) << tier.error().message;
    tier_ = tier->get();
    store_ = std::make_unique<LocalObjectStore>(std::move(tier).value(),
                                                std::vector<std::unique_ptr<LocalTier>>{},
                                                std::map<std::string, std::string>{}, *index_,
                                                SweepOptions{.interval = {}, .at_open = false});
    ASSERT_TRUE(store_->CreateBucket(BucketName("bucket"), "alice", "").ok());
  }
  void TearDown() override { SelectDataPath(false); }

  bool async() const { return GetParam() != Mode::kSync; }

  Result<void> Append(PendingWrite& w, std::string_view data) {
    return async() ? RunAwaitable(ioc_, w.AppendAsync(data)) : w.Append(data);
  }
  Result<std::size_t> Read(ObjectReader& reader, std::uint64_t offset, std::span<char> buf) {
    return async() ? RunAwaitable(ioc_, reader.ReadAsync(offset, buf)) : reader.Read(offset, buf);
  }

  // The multipart object bucket/`key` made of `parts`, one extent each.
  Result<metadata::ObjectRecord> PutMultipart(const std::string& key,
                                              const std::vector<const std::string*>& parts) {
    metadata::UploadRecord upload;
    upload.object.bucket = BucketName("bucket");
    upload.object.key = ObjectKey(key);
    auto created = store_->CreateUpload(upload);
    STRATA_RETURN_IF_ERROR(created);
    CompletionRequest request;
    std::uint32_t number = 0;
    for (const std::string* body : parts) {
      auto w = store_->BeginWrite(BucketName("bucket"), {});
      if (!w.ok()) {
        return std::move(w).error();
      }
      STRATA_RETURN_IF_ERROR(Append(**w, *body));
      auto part = store_->CommitPart(std::move(w).value(), *created, ++number);
      STRATA_RETURN_IF_ERROR(part);
      request.parts.push_back({part->number, part->etag, {}});
    }
    return store_->CompleteUpload(BucketName("bucket"), ObjectKey(key), created->upload_id,
                                  request);
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body) {
    auto w = store_->BeginWrite(BucketName("bucket"), {});
    EXPECT_TRUE(w.ok());
    for (std::size_t pos = 0; pos < body.size(); pos += 100'000) {
      EXPECT_TRUE(Append(**w, std::string_view(body).substr(pos, 100'000)).ok());
    }
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    auto put = store_->CommitWrite(std::move(w).value(), record);
    EXPECT_TRUE(put.ok()) << put.error().message;
    return *put;
  }

  std::string DataPath(const metadata::ObjectRecord& record, std::size_t extent = 0) const {
    return tier_->DataPath(record.placements.at(0).extents.at(extent).location);
  }

  // Reads [offset, offset + length) with reads of `block` bytes.
  Result<std::string> ReadRange(const metadata::ObjectRecord& record, std::uint64_t offset,
                                std::uint64_t length, std::size_t block = 256 * 1024) {
    auto reader = store_->OpenObject(record);
    if (!reader.ok()) {
      return std::move(reader).error();
    }
    std::string out;
    std::vector<char> buf(block);
    while (out.size() < length) {
      const auto want =
          static_cast<std::size_t>(std::min<std::uint64_t>(block, length - out.size()));
      auto n = Read(**reader, offset + out.size(), std::span<char>(buf.data(), want));
      if (!n.ok()) {
        return std::move(n).error();
      }
      if (*n == 0) {
        break;
      }
      out.append(buf.data(), *n);
    }
    return out;
  }

  boost::asio::io_context ioc_{1};
  TempDir dir_;
  std::unique_ptr<metadata::Index> index_;
  LocalTier* tier_ = nullptr;
  std::unique_ptr<LocalObjectStore> store_;
};

TEST_P(ChunkVerifyTest, DataFileCarriesTrailerAndReadsBackInAnyBlockSize) {
  const std::string body = RandomBytes(3 * kChunk + 12345, 1);
  const auto record = Put("k", body);
  EXPECT_EQ(std::filesystem::file_size(DataPath(record)), body.size() + TrailerSize(body.size()));
  for (std::size_t block :
       {std::size_t{777}, std::size_t{kChunk - 1}, std::size_t{kChunk + 1}, std::size_t{256 * 1024},
        std::size_t{MiB}, std::size_t{3 * MiB}, std::size_t{8 * MiB}}) {
    auto got = ReadRange(record, 0, body.size(), block);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_TRUE(*got == body) << block;
  }
  auto middle = ReadRange(record, kChunk - 10, 2 * kChunk + 20, 100'000);
  ASSERT_TRUE(middle.ok());
  EXPECT_TRUE(*middle == body.substr(kChunk - 10, 2 * kChunk + 20));
}

TEST_P(ChunkVerifyTest, DamagedChunkFailsOnlyTheRangesThatTouchIt) {
  const std::string body = RandomBytes(3 * kChunk + 500, 2);
  const auto record = Put("k", body);
  const std::string path = DataPath(record);
  FlipByte(path, kChunk + kChunk / 2);  // in chunk 1
  const std::uint64_t before = ChecksumMismatches();

  auto bad = ReadRange(record, kChunk + 100, 1000);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kCorruption);
  EXPECT_NE(bad.error().message.find(path), std::string::npos) << bad.error().message;
  EXPECT_EQ(ChecksumMismatches(), before + 1);
  // A whole-chunk read straight into the caller's buffer is verified as well.
  auto whole_chunk = ReadRange(record, kChunk, kChunk, kChunk);
  ASSERT_FALSE(whole_chunk.ok());
  EXPECT_EQ(whole_chunk.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(ChecksumMismatches(), before + 2);
  // The whole object, as a GET reads it: fails when it reaches chunk 1.
  EXPECT_FALSE(ReadRange(record, 0, body.size()).ok());

  // Ranges in undamaged chunks read fine, right up to the damaged one.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> good_ranges = {
      {0, kChunk}, {kChunk - 1, 1}, {2 * kChunk, kChunk + 500}, {3 * kChunk + 499, 1}};
  for (const auto& [offset, length] : good_ranges) {
    auto good = ReadRange(record, offset, length);
    ASSERT_TRUE(good.ok()) << offset << ": " << good.error().message;
    EXPECT_TRUE(*good == body.substr(offset, length)) << offset;
  }
}

TEST_P(ChunkVerifyTest, LargeFileLoadsChunkCrcsByWindowAndVerifiesEveryChunkOfARead) {
  // More chunks than one CRC window (1024): the second window is loaded without the
  // trailer-wide check, so a damaged CRC entry there fails its own chunk instead.
  constexpr std::uint64_t kWindow = 1024;
  const std::string body = RandomBytes((kWindow + 4) * kChunk + 17, 12);
  const auto record = Put("big", body);
  const std::string path = DataPath(record);
  FlipByte(path, (kWindow + 1) * kChunk + 9);           // data of chunk 1025
  FlipByte(path, body.size() + 8 * (kWindow + 2) + 1);  // the CRC of chunk 1026
  const std::uint64_t before = ChecksumMismatches();

  auto first_window = ReadRange(record, 0, kWindow * kChunk + 100);
  ASSERT_TRUE(first_window.ok()) << first_window.error().message;
  EXPECT_TRUE(*first_window == body.substr(0, kWindow * kChunk + 100));
  // A multi-chunk read fails on its damaged chunk, wherever it lies in the buffer.
  auto across = ReadRange(record, kWindow * kChunk, 4 * kChunk, 4 * kChunk);
  ASSERT_FALSE(across.ok());
  EXPECT_EQ(across.error().code, ErrorCode::kCorruption);
  EXPECT_NE(across.error().message.find("chunk 1025"), std::string::npos) << across.error().message;
  auto damaged_crc = ReadRange(record, (kWindow + 2) * kChunk + 5, 1);
  ASSERT_FALSE(damaged_crc.ok());
  EXPECT_EQ(damaged_crc.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(ChecksumMismatches(), before + 2);
  auto tail = ReadRange(record, (kWindow + 3) * kChunk, kChunk + 17);
  ASSERT_TRUE(tail.ok()) << tail.error().message;
  EXPECT_TRUE(*tail == body.substr((kWindow + 3) * kChunk));

  // One reader: a read stops at the window's end, then windows load in any order.
  auto reader = store_->OpenObject(record);
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(4 * kChunk);
  auto n = Read(**reader, (kWindow - 2) * kChunk, buf);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 2 * kChunk);
  auto last = Read(**reader, (kWindow + 3) * kChunk, buf);
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_EQ(*last, kChunk + 17);
  EXPECT_EQ(std::string(buf.data(), *last), body.substr((kWindow + 3) * kChunk));
  auto back = Read(**reader, 5 * kChunk, buf);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, 4 * kChunk);
  EXPECT_EQ(std::string(buf.data(), *back), body.substr(5 * kChunk, 4 * kChunk));
}

TEST_P(ChunkVerifyTest, DamagedChunkCrcFailsTheRead) {
  const std::string body = RandomBytes(2 * MiB, 3);
  const auto record = Put("k", body);
  FlipByte(DataPath(record), body.size() + 3);  // the first chunk CRC
  const std::uint64_t before = ChecksumMismatches();
  auto got = ReadRange(record, 0, 10);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(ChecksumMismatches(), before + 1);
}

TEST_P(ChunkVerifyTest, TruncatedOrDamagedTrailerIsRefusedAtOpen) {
  const std::string body = RandomBytes(MiB + 7, 4);
  const std::uint64_t trailer = TrailerSize(body.size());
  for (std::uint64_t keep : {body.size() + trailer - 1, body.size() + trailer - 20, body.size() + 5,
                             body.size() + 1, body.size() - 1}) {
    const auto record = Put("k" + std::to_string(keep), body);
    std::filesystem::resize_file(DataPath(record), keep);
    auto reader = store_->OpenObject(record);
    ASSERT_FALSE(reader.ok()) << keep;
    EXPECT_EQ(reader.error().code, ErrorCode::kCorruption) << keep;
    EXPECT_NE(reader.error().message.find(DataPath(record)), std::string::npos);
  }
  // Damaged magic, and a footer whose length disagrees with the record.
  for (std::uint64_t at : {body.size() + trailer - kFooterSize, body.size() + trailer - 24}) {
    const auto record = Put("m" + std::to_string(at), body);
    FlipByte(DataPath(record), at);
    auto reader = store_->OpenObject(record);
    ASSERT_FALSE(reader.ok()) << at;
    EXPECT_EQ(reader.error().code, ErrorCode::kCorruption) << at;
  }
}

TEST_P(ChunkVerifyTest, FilesWithoutTrailerReadUnverified) {
  // Written by a strata from before the trailer: the file is exactly the object bytes.
  const std::string body = RandomBytes(2 * MiB + 3, 5);
  const auto record = Put("legacy", body);
  std::filesystem::resize_file(DataPath(record), body.size());
  auto got = ReadRange(record, 0, body.size());
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body);
  auto part = ReadRange(record, MiB - 3, 10, 4);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, body.substr(MiB - 3, 10));

  const auto empty = Put("empty-legacy", "");
  std::filesystem::resize_file(DataPath(empty), 0);
  auto none = ReadRange(empty, 0, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ChunkVerifyTest, EmptyObjectHasAnEmptyTrailer) {
  const auto record = Put("empty", "");
  EXPECT_EQ(std::filesystem::file_size(DataPath(record)), kFooterSize);
  auto reader = store_->OpenObject(record);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ((*reader)->size(), 0u);
  std::vector<char> buf(10);
  auto n = Read(**reader, 0, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
}

TEST_P(ChunkVerifyTest, MultipartObjectAndRangedCopyPartVerifyEveryExtent) {
  const std::string one = RandomBytes(5 * MiB + 3, 6);
  const std::string two = RandomBytes(MiB + MiB / 2, 7);
  auto done = PutMultipart("mp", {&one, &two});
  ASSERT_TRUE(done.ok()) << done.error().message;
  ASSERT_EQ(done->placements.at(0).extents.size(), 2u);
  const std::string body = one + two;
  auto got = ReadRange(*done, 0, body.size());
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body);
  // Across the extent boundary, unaligned on both sides.
  auto across = ReadRange(*done, one.size() - 1000, 5000, 3000);
  ASSERT_TRUE(across.ok());
  EXPECT_TRUE(*across == body.substr(one.size() - 1000, 5000));

  // A ranged UploadPartCopy from it: read through the verified path, written with a
  // trailer of its own.
  metadata::UploadRecord upload2;
  upload2.object.bucket = BucketName("bucket");
  upload2.object.key = ObjectKey("copy");
  auto created2 = store_->CreateUpload(upload2);
  ASSERT_TRUE(created2.ok());
  const std::uint64_t first = MiB + 3;
  const std::uint64_t length = one.size() + 1000 - first;
  auto copied = store_->CopyPart(*done, first, length, *created2, 1);
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_EQ(copied->size, length);
  EXPECT_EQ(std::filesystem::file_size(tier_->DataPath(copied->location)),
            length + TrailerSize(length));
  CompletionRequest request2;
  request2.parts.push_back({1, copied->etag, {}});
  auto done2 = store_->CompleteUpload(BucketName("bucket"), ObjectKey("copy"), created2->upload_id,
                                      request2);
  ASSERT_TRUE(done2.ok()) << done2.error().message;
  auto got2 = ReadRange(*done2, 0, length);
  ASSERT_TRUE(got2.ok());
  EXPECT_TRUE(*got2 == body.substr(first, length));

  // Damage in the second extent: the first still reads, the second does not.
  FlipByte(DataPath(*done, 1), 10);
  EXPECT_TRUE(ReadRange(*done, 0, one.size()).ok());
  auto bad = ReadRange(*done, one.size(), 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kCorruption);
  EXPECT_NE(bad.error().message.find(DataPath(*done, 1)), std::string::npos);
}

TEST_P(ChunkVerifyTest, CopyObjectSharesTheTrailer) {
  const std::string body = RandomBytes(MiB + 1, 8);
  const auto source = Put("src", body);
  metadata::ObjectRecord record;
  record.bucket = BucketName("bucket");
  record.key = ObjectKey("dst");
  auto copy = store_->CopyObject(source, record);
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  auto got = ReadRange(*copy, 0, body.size());
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body);
  FlipByte(DataPath(source), 5);  // one inode, two names
  EXPECT_EQ(ReadRange(*copy, 0, 10).error().code, ErrorCode::kCorruption);
  EXPECT_TRUE(ReadRange(*copy, MiB, 1).ok());
}

TEST_P(ChunkVerifyTest, ReadsStopAtChunkAndExtentBoundaries) {
  const std::string one = RandomBytes(5 * MiB + 100, 9);  // parts but the last: 5 MiB
  const std::string two = RandomBytes(1000, 10);
  auto done = PutMultipart("mp", {&one, &two});
  ASSERT_TRUE(done.ok()) << done.error().message;
  const std::string body = one + two;
  auto reader = store_->OpenObject(*done);
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(4096);
  // Short reads: up to the end of the chunk, of the extent, of the object.
  const std::vector<std::pair<std::uint64_t, std::size_t>> cases = {
      {MiB - 10, 10}, {one.size() - 30, 30}, {one.size(), 1000}, {body.size() - 1, 1}};
  for (const auto& [offset, expect] : cases) {
    auto n = Read(**reader, offset, buf);
    ASSERT_TRUE(n.ok()) << offset << ": " << n.error().message;
    EXPECT_EQ(*n, expect) << offset;
    EXPECT_EQ(std::string(buf.data(), *n), body.substr(offset, *n)) << offset;
  }
  auto end = Read(**reader, body.size(), buf);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 0u);
}

TEST_P(ChunkVerifyTest, FileTruncatedUnderAnOpenReaderIsCorruption) {
  const std::string body = RandomBytes(2 * MiB + 10, 11);
  const auto record = Put("k", body);
  auto reader = store_->OpenObject(record);
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(256 * 1024);
  auto first = Read(**reader, 0, buf);  // loads the chunk CRCs
  ASSERT_TRUE(first.ok()) << first.error().message;
  std::filesystem::resize_file(DataPath(record), MiB + 5);
  auto second = Read(**reader, MiB, buf);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kCorruption);
  EXPECT_NE(second.error().message.find("shorter than its record"), std::string::npos)
      << second.error().message;
}

INSTANTIATE_TEST_SUITE_P(Paths, ChunkVerifyTest,
                         ::testing::Values(Mode::kSync, Mode::kAsyncPread, Mode::kAsyncIoUring),
                         [](const auto& info) {
                           switch (info.param) {
                             case Mode::kSync:
                               return "Sync";
                             case Mode::kAsyncPread:
                               return "AsyncPread";
                             case Mode::kAsyncIoUring:
                               return "AsyncIoUring";
                           }
                           return "";
                         });

}  // namespace
}  // namespace strata::storage
