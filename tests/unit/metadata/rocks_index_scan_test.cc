#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>
#include <utility>

#include "metadata/rocks_index.h"

namespace strata::metadata {
namespace {

namespace fs = std::filesystem;

TEST(RocksIndexScanTest, ForEachLocationReportsObjectExtentsAndParts) {
  std::random_device rd;
  const fs::path dir =
      fs::temp_directory_path() /
      ("strata-index-scan-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  {
    auto index = Index::Open(dir.string(), IndexOptions{.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    for (const char* name : {"a-bucket", "b-bucket"}) {
      ASSERT_TRUE((*index)->CreateBucket({BucketName(name), "alice", 1, ""}).ok());
    }
    auto object = [](const char* bucket, const char* key, std::vector<Placement> placements) {
      ObjectRecord o;
      o.bucket = BucketName(bucket);
      o.key = ObjectKey(key);
      o.version_id = VersionId("null");
      o.placements = std::move(placements);
      return o;
    };
    ASSERT_TRUE((*index)->PutObject(object("a-bucket", "k", {{"hot", {{"f1", 1}}}})).ok());
    ASSERT_TRUE((*index)
                    ->PutObject(object("b-bucket", "multi",
                                       {{"hot", {{"f2", 1}, {"f3", 1}}}, {"cold", {{"c1", 1}}}}))
                    .ok());
    ASSERT_TRUE((*index)->PutObject(object("b-bucket", "gone", {{"hot", {{"f4", 1}}}})).ok());
    ASSERT_TRUE((*index)->PutObject(object("b-bucket", "gone", {{"hot", {{"f5", 1}}}})).ok());
    ASSERT_TRUE((*index)->DeleteObject(BucketName("b-bucket"), ObjectKey("gone")).ok());
    UploadRecord upload;
    upload.upload_id = UploadId("0001upload");
    upload.object = object("a-bucket", "up", {});
    ASSERT_TRUE((*index)->CreateUpload(upload).ok());
    for (std::uint32_t n : {1u, 2u}) {
      PartRecord part;
      part.number = n;
      part.tier = "hot";
      part.location = "p" + std::to_string(n);
      ASSERT_TRUE(
          (*index)->PutPart(BucketName("a-bucket"), ObjectKey("up"), upload.upload_id, part).ok());
    }

    std::set<std::pair<std::string, std::string>> seen;
    auto scanned = (*index)->ForEachLocation(
        [&](std::string_view tier, std::string_view location) { seen.emplace(tier, location); });
    ASSERT_TRUE(scanned.ok()) << scanned.error().message;
    const std::set<std::pair<std::string, std::string>> expected = {
        {"hot", "f1"}, {"hot", "f2"}, {"hot", "f3"}, {"cold", "c1"}, {"hot", "p1"}, {"hot", "p2"}};
    EXPECT_EQ(seen, expected);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace strata::metadata
