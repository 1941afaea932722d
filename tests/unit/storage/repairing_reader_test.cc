#include "storage/local/repairing_reader.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <vector>

#include "storage/local/chunk_trailer.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_io_context.h"
#include "tests/unit/storage/test_repair.h"

namespace strata::storage {
namespace {

using testing::RandomBytes;
using testing::RunAwaitable;

constexpr std::uint64_t kChunk = kChunkSize;

class RepairingReaderTest : public testing::RepairTest {
 protected:
  // Reads the whole object with ReadAsync in `block`-sized reads, as a GET does; the
  // error of the first read that fails.
  Result<std::string> ReadAllAsync(const metadata::ObjectRecord& record, std::size_t block) {
    auto reader = store_->OpenObject(record);
    if (!reader.ok()) {
      return std::move(reader).error();
    }
    std::string out;
    std::vector<char> buf(block);
    while (out.size() < record.size) {
      auto n = RunAwaitable(ioc_, (*reader)->ReadAsync(out.size(), buf));
      if (!n.ok()) {
        return std::move(n).error();
      }
      if (*n == 0) {
        return Error(ErrorCode::kCorruption, "short");
      }
      out.append(buf.data(), *n);
    }
    return out;
  }

  boost::asio::io_context ioc_;
};

TEST_F(RepairingReaderTest, DamageMidObjectIsRepairedAndTheReadGoesOn) {
  store_->SetRepairer(repairer_.get());
  const std::string body = RandomBytes(10 * kChunk + 123, 1);
  const auto record = Put("k", body);
  const auto damaged = DataFile(record);
  Flip(record, 7 * kChunk + 9);

  auto got = ReadAllAsync(record, 4 * kChunk);  // chunk 7 is in the second read
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, body);
  EXPECT_EQ(repairer_->calls, 1);
  // The version now names a new file; the damaged one is gone.
  const auto repaired = Head("k");
  EXPECT_NE(repaired.placements.front().extents.front().location,
            record.placements.front().extents.front().location);
  EXPECT_FALSE(std::filesystem::exists(damaged));
  EXPECT_EQ(repaired.etag, record.etag);
  EXPECT_EQ(repaired.checksums, record.checksums);
  // Read again, from the repaired copy: nothing to repair.
  auto again = ReadAllAsync(repaired, 1000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, body);
  EXPECT_EQ(repairer_->calls, 1);
}

TEST_F(RepairingReaderTest, ADamagedFooterIsRepairedOnTheFirstRead) {
  store_->SetRepairer(repairer_.get());
  const std::string body = RandomBytes(3 * kChunk, 2);
  const auto record = Put("k", body);
  Flip(record, body.size() + 8 * 3 + 2);  // the footer's magic: the file does not open
  auto got = ReadAllAsync(record, 1 << 20);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, body);
  EXPECT_EQ(repairer_->calls, 1);
}

TEST_F(RepairingReaderTest, SmallReadsInsideADamagedChunkAreRepaired) {
  store_->SetRepairer(repairer_.get());
  const std::string body = RandomBytes(2 * kChunk + 5, 3);
  const auto record = Put("k", body);
  Flip(record, kChunk + 100);
  auto reader = store_->OpenObject(record);
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(50);
  auto n = RunAwaitable(ioc_, (*reader)->ReadAsync(kChunk + 80, buf));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(std::string(buf.data(), *n), body.substr(kChunk + 80, *n));
}

TEST_F(RepairingReaderTest, TheOnlyCopyStaysAnError) {
  store_->SetRepairer(repairer_.get());
  const std::string body = RandomBytes(2 * kChunk, 4);
  const auto record = Put("dirty", body, /*clean=*/false);
  Flip(record, 10);
  auto got = ReadAllAsync(record, 1 << 20);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kCorruption);  // what the damaged copy answered
  EXPECT_EQ(repairer_->calls, 1);
  EXPECT_TRUE(std::filesystem::exists(DataFile(record)));  // kept
}

TEST_F(RepairingReaderTest, SynchronousReadsNeverRepair) {
  store_->SetRepairer(repairer_.get());
  const std::string body = RandomBytes(kChunk, 5);
  const auto record = Put("k", body);
  Flip(record, 10);
  auto reader = store_->OpenObject(record);
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(kChunk);
  auto n = (*reader)->Read(0, buf);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(repairer_->calls, 0);
}

TEST_F(RepairingReaderTest, WithoutARepairerDamageIsAnError) {
  const std::string body = RandomBytes(kChunk, 6);
  const auto record = Put("k", body);
  Flip(record, 10);
  auto got = ReadAllAsync(record, 1 << 20);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(repairer_->calls, 0);
}

TEST_F(RepairingReaderTest, ReplaceLocalCopyRefusesAStaleRecord) {
  const std::string body = RandomBytes(kChunk + 1, 7);
  const auto record = Put("k", body);
  auto replace = [&] {
    auto w = store_->BeginWrite(BucketName("bucket"), {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(body).ok());
    return store_->ReplaceLocalCopy(std::move(w).value(), record);
  };
  auto first = replace();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(*first);
  // `record` names the copy replaced a moment ago: another repair won, nothing to do.
  auto second = replace();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(*second);
  auto reader = store_->OpenObject(Head("k"));
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(body.size());
  auto n = (*reader)->Read(0, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf.data(), *n), body.substr(0, *n));
  // One data file: the replaced one and the second, refused write are gone.
  EXPECT_EQ(testing::FilesUnder(dir_.path() / "hot" / "data").size(), 1u);
}

}  // namespace
}  // namespace strata::storage
