#include "storage/local/local_tier.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "storage/local/open_files.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_tier.h"

namespace strata::storage {
namespace {

using testing::FilesUnder;
using testing::Promoted;
using testing::TempDir;
using testing::UnlinkedFilesOpenAt;
using testing::UnnamedFilesOpenUnder;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LocalTierTest, WritePromoteReadRemove) {
  TempDir dir;
  auto tier = LocalTier::Open("hot", (dir.path() / "hot").string(), true);
  ASSERT_TRUE(tier.ok()) << tier.error().message;
  auto file = (*tier)->CreateTemp();
  ASSERT_TRUE(file.ok());
  const std::string id = (*file)->id();
  EXPECT_TRUE(LocalTier::IsValidId(id));
  ASSERT_TRUE((*file)->Append("hello ").ok());
  ASSERT_TRUE((*file)->Append("world").ok());
  EXPECT_EQ((*file)->size(), 11u);
  // Unnamed until promoted: nothing to see under the tier, one file open.
  EXPECT_FALSE((*file)->named());
  EXPECT_TRUE(FilesUnder(dir.path()).empty());
  EXPECT_EQ(UnnamedFilesOpenUnder(dir.path() / "hot"), 1u);

  ASSERT_TRUE((*tier)->Promote(**file).ok());
  file->reset();  // a promoted file survives its handle
  EXPECT_EQ(UnnamedFilesOpenUnder(dir.path() / "hot"), 0u);
  const std::string data_path = (*tier)->DataPath(id);
  struct stat st {};
  ASSERT_EQ(::stat(data_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(data_path, (dir.path() / "hot" / "data" / id.substr(0, 2) / id).string());
  // The object bytes, then their chunk trailer: one chunk CRC and the footer.
  const std::string stored = ReadFile(data_path);
  EXPECT_EQ(stored.substr(0, 11), "hello world");
  EXPECT_EQ(stored.size(), 11 + 8 + kFooterSize);
  EXPECT_EQ(stored.substr(11 + 8, 8), kTrailerMagic);

  EXPECT_TRUE(FilesUnder(dir.path() / "hot" / "tmp").empty());

  auto fd = (*tier)->OpenForRead(id);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE((*tier)->Remove(id).ok());
  EXPECT_TRUE((*tier)->Remove(id).ok());  // already gone is fine
  EXPECT_EQ((*tier)->OpenForRead(id).error().code, ErrorCode::kNotFound);
  EXPECT_EQ((*tier)->OpenForRead("../../etc/passwd").error().code, ErrorCode::kCorruption);
  EXPECT_TRUE(FilesUnder(dir.path()).empty());
}

// OpenData shares one open descriptor per data file, with its size and trailer bytes;
// Remove forgets it, so no descriptor keeps a removed file's blocks once readers are done.
TEST(LocalTierTest, OpenDataIsSharedAndRemoveForgetsIt) {
  TempDir dir;
  auto tier = LocalTier::Open("hot", (dir.path() / "hot").string(), false);
  ASSERT_TRUE(tier.ok()) << tier.error().message;
  const std::string id = Promoted(**tier, "hello world");
  ASSERT_FALSE(id.empty());
  const std::string path = (*tier)->DataPath(id);
  auto first = (*tier)->OpenData(id);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ((*first)->path, path);
  EXPECT_EQ((*first)->size, 11 + 8 + kFooterSize);
  EXPECT_EQ((*first)->tail.size(), kFooterSize);
  EXPECT_EQ((*first)->tail, ReadFile(path).substr(11 + 8));
  auto again = (*tier)->OpenData(id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get());  // the cached entry, not a second open

  // A reader holding the file keeps reading it after the remove; the cache lets go.
  ASSERT_TRUE((*tier)->Remove(id).ok());
  EXPECT_EQ(UnlinkedFilesOpenAt(path), 1u);
  char byte = 0;
  EXPECT_EQ(::pread((*first)->fd.get(), &byte, 1, 6), 1);
  EXPECT_EQ(byte, 'w');
  first->reset();
  again->reset();
  EXPECT_EQ(UnlinkedFilesOpenAt(path), 0u);
  EXPECT_EQ((*tier)->OpenData(id).error().code, ErrorCode::kNotFound);
}

TEST(OpenFilesTest, BoundedAndNeverKeepsAnUnlinkedFile) {
  TempDir dir;
  auto tier = LocalTier::Open("hot", (dir.path() / "hot").string(), false);
  ASSERT_TRUE(tier.ok()) << tier.error().message;
  OpenFiles cache(32);
  std::vector<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    const std::string id = Promoted(**tier, "x");
    auto fd = (*tier)->OpenForRead(id);
    ASSERT_TRUE(fd.ok());
    auto file = std::make_shared<OpenDataFile>();
    file->fd = std::move(fd).value();
    cache.Insert(id, std::move(file));
    ids.push_back(id);
  }
  EXPECT_LE(cache.size(), 32u);
  EXPECT_NE(cache.Find(ids.back()), nullptr);  // the newest of its shard stays
  cache.Erase(ids.back());
  EXPECT_EQ(cache.Find(ids.back()), nullptr);

  // Opened, then unlinked before it reached the cache (a remove racing a reader).
  const std::string id = Promoted(**tier, "y");
  auto fd = (*tier)->OpenForRead(id);
  ASSERT_TRUE(fd.ok());
  ASSERT_EQ(::unlink((*tier)->DataPath(id).c_str()), 0);
  auto file = std::make_shared<OpenDataFile>();
  file->fd = std::move(fd).value();
  cache.Insert(id, std::move(file));
  EXPECT_EQ(cache.Find(id), nullptr);
}

// Where O_TMPFILE is missing (or TempFiles::kNamed), files are written as tmp/<id> and
// renamed into data/.
TEST(LocalTierTest, NamedTempFilesAreRenamedIntoPlace) {
  TempDir dir;
  auto tier = LocalTier::Open("hot", (dir.path() / "hot").string(), true, TempFiles::kNamed);
  ASSERT_TRUE(tier.ok()) << tier.error().message;
  auto file = (*tier)->CreateTemp();
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE((*file)->named());
  const std::string id = (*file)->id();
  ASSERT_TRUE((*file)->Append("hello").ok());
  struct stat st {};
  ASSERT_EQ(::stat((*tier)->TempPath(id).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_TRUE((*tier)->Promote(**file).ok());
  file->reset();
  EXPECT_TRUE(FilesUnder(dir.path() / "hot" / "tmp").empty());
  EXPECT_EQ(ReadFile((*tier)->DataPath(id)).substr(0, 5), "hello");
}

TEST(LocalTierTest, AbandonedTempFileIsRemoved) {
  for (TempFiles temps : {TempFiles::kUnnamed, TempFiles::kNamed}) {
    TempDir dir;
    auto tier = LocalTier::Open("hot", dir.path().string(), false, temps);
    ASSERT_TRUE(tier.ok());
    {
      auto file = (*tier)->CreateTemp();
      ASSERT_TRUE(file.ok());
      ASSERT_TRUE((*file)->Append("x").ok());
      EXPECT_EQ(FilesUnder(dir.path()).size() + UnnamedFilesOpenUnder(dir.path()), 1u);
    }
    EXPECT_TRUE(FilesUnder(dir.path()).empty());
    EXPECT_EQ(UnnamedFilesOpenUnder(dir.path()), 0u);
  }
}

TEST(LocalTierTest, OpenDeletesOrphansInTmp) {
  TempDir dir;
  {
    auto tier = LocalTier::Open("hot", dir.path().string(), false);
    ASSERT_TRUE(tier.ok());
  }
  std::ofstream(dir.path() / "tmp" / "0123456789abcdef0123456789abcdef") << "orphan";
  std::filesystem::create_directories(dir.path() / "tmp" / "stray-dir");
  std::ofstream(dir.path() / "tmp" / "stray-dir" / "f") << "x";
  std::filesystem::create_directories(dir.path() / "data" / "ab");
  std::ofstream(dir.path() / "data" / "ab" / "ab456789abcdef0123456789abcdef01") << "kept";
  auto tier = LocalTier::Open("hot", dir.path().string(), false);
  ASSERT_TRUE(tier.ok());
  auto left = FilesUnder(dir.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].filename(), "ab456789abcdef0123456789abcdef01");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "tmp"));
}

TEST(LocalTierTest, OpenFailsOnUnusablePath) {
  TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  auto tier = LocalTier::Open("hot", (dir.path() / "file" / "sub").string(), false);
  EXPECT_FALSE(tier.ok());
  EXPECT_FALSE(LocalTier::Open("hot", "", false).ok());
}

}  // namespace
}  // namespace strata::storage
