// AsyncFile and the data path choice: whole-buffer reads through an io_context's
// io_uring ring and through the pread fallback, short files, errors, and the probe that
// picks the path.
#include "storage/local/async_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "storage/data_path.h"
#include "storage/local/local_tier.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_io_context.h"

namespace strata::storage {
namespace {

using testing::RandomBytes;
using testing::RunAwaitable;
using testing::TempDir;

// Runs every test once per data path; io_uring ones skip where the kernel refuses it (and
// fail there with CI=true).
class AsyncFileTest : public ::testing::TestWithParam<DataPath> {
 protected:
  void SetUp() override {
    const DataPath got = SelectDataPath(GetParam() == DataPath::kIoUring);
    if (got != GetParam()) {
      STRATA_SKIP_OR_FAIL_IN_CI("io_uring is unavailable here");
    }
    path_ = (dir_.path() / "f").string();
    fd_ = UniqueFd(::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd_.valid());
  }
  void TearDown() override {
    file_.Reset();
    SelectDataPath(false);
  }

  Result<void> Write(std::string_view data, std::uint64_t offset) {
    return PwriteAll(fd_.get(), data, offset, path_);
  }
  Result<std::string> Read(std::uint64_t offset, std::size_t len) {
    return ReadOn(ioc_, offset, len);
  }
  Result<std::string> ReadOn(boost::asio::io_context& ioc, std::uint64_t offset, std::size_t len) {
    std::string out(len, '\0');
    auto read = RunAwaitable(
        ioc, file_.ReadExact(fd_.get(), std::span<char>(out.data(), out.size()), offset, path_));
    if (!read.ok()) {
      return read.error();
    }
    return out;
  }

  TempDir dir_;
  std::string path_;
  UniqueFd fd_;
  boost::asio::io_context ioc_{1};
  AsyncFile file_;
};

TEST_P(AsyncFileTest, WritesAndReadsBackWholeBuffers) {
  const std::string body = RandomBytes(3 * 1024 * 1024 + 17, 1);
  ASSERT_TRUE(Write(std::string_view(body).substr(0, 1000), 0).ok());
  ASSERT_TRUE(Write(std::string_view(body).substr(1000), 1000).ok());
  EXPECT_EQ(std::filesystem::file_size(path_), body.size());
  auto all = Read(0, body.size());
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_TRUE(*all == body);
  auto middle = Read(12345, 678);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(*middle, body.substr(12345, 678));
  auto nothing = Read(body.size(), 0);
  ASSERT_TRUE(nothing.ok());
}

TEST_P(AsyncFileTest, ReadPastTheEndIsCorruptionNamingTheFile) {
  ASSERT_TRUE(Write("0123456789", 0).ok());
  auto tail = Read(5, 5);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, "56789");
  for (auto [offset, len] : {std::pair{5ul, 6ul}, std::pair{10ul, 1ul}, std::pair{100ul, 3ul}}) {
    auto short_read = Read(offset, len);
    ASSERT_FALSE(short_read.ok()) << offset;
    EXPECT_EQ(short_read.error().code, ErrorCode::kCorruption);
    EXPECT_NE(short_read.error().message.find(path_), std::string::npos);
  }
}

TEST_P(AsyncFileTest, ErrorsNameTheFile) {
  UniqueFd read_only(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(read_only.valid());
  auto wrote = PwriteAll(read_only.get(), "x", 0, path_);
  ASSERT_FALSE(wrote.ok());
  EXPECT_NE(wrote.error().message.find("write " + path_), std::string::npos)
      << wrote.error().message;
  UniqueFd write_only(::open(path_.c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(write_only.valid());
  std::string byte(1, '\0');
  auto read =
      RunAwaitable(ioc_, file_.ReadExact(write_only.get(), std::span<char>(byte), 0, path_));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find(path_), std::string::npos) << read.error().message;
  file_.Reset();
}

TEST_P(AsyncFileTest, FollowsTheCallerToAnotherIoContext) {
  ASSERT_TRUE(Write("firstsecond", 0).ok());
  auto first = Read(0, 5);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "first");
  boost::asio::io_context other{1};
  auto second = ReadOn(other, 5, 6);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "second");
  file_.Reset();
}

INSTANTIATE_TEST_SUITE_P(DataPaths, AsyncFileTest,
                         ::testing::Values(DataPath::kPread, DataPath::kIoUring),
                         [](const auto& info) {
                           return info.param == DataPath::kIoUring ? "IoUring" : "Pread";
                         });

TEST(DataPathTest, ConfiguredOffMeansPread) {
  EXPECT_EQ(SelectDataPath(false), DataPath::kPread);
  EXPECT_EQ(CurrentDataPath(), DataPath::kPread);
  boost::asio::io_context ioc{1};
  EXPECT_FALSE(PrepareDataPath(ioc));
  EXPECT_EQ(DataPathName(DataPath::kPread), "pread/pwrite");
  EXPECT_EQ(DataPathName(DataPath::kIoUring), "io_uring");
}

TEST(DataPathTest, ProbeChoosesIoUringWhereTheKernelAllowsIt) {
  const DataPath got = SelectDataPath(true);
  EXPECT_EQ(CurrentDataPath(), got);
  if (got == DataPath::kIoUring) {
    boost::asio::io_context ioc{1};
    EXPECT_TRUE(PrepareDataPath(ioc));
    EXPECT_EQ(CurrentDataPath(), DataPath::kIoUring);
  }
  SelectDataPath(false);
}

}  // namespace
}  // namespace strata::storage
