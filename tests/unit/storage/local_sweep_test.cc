// The orphan sweep: removes exactly the data files no record references and that are old
// enough, at open and in the background.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "storage/local/local_object_store.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_tier.h"

namespace strata::storage {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;
using testing::FilesUnder;
using testing::TempDir;

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    Open(SweepOptions{.interval = {}, .at_open = false});
    ASSERT_TRUE(store_->CreateBucket(BucketName("bucket"), "alice", "").ok());
  }

  fs::path Root() const { return dir_.path() / "hot"; }

  void Open(SweepOptions options) {
    store_.reset();
    auto tier = LocalTier::Open("hot", Root().string(), false);
    ASSERT_TRUE(tier.ok()) << tier.error().message;
    tier_ = tier->get();
    store_ = std::make_unique<LocalObjectStore>(
        std::move(tier).value(), std::vector<std::unique_ptr<LocalTier>>{},
        std::map<std::string, std::string>{}, *index_, options);
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body) {
    auto w = store_->BeginWrite(BucketName("bucket"), {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(body).ok());
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    auto put = store_->CommitWrite(std::move(w).value(), record);
    EXPECT_TRUE(put.ok()) << put.error().message;
    return *put;
  }

  // A promoted data file that no record names: a crash between promote and commit.
  std::string PromotedOrphan(const std::string& body) { return testing::Promoted(*tier_, body); }

  std::set<std::string> DataFiles() const {
    std::set<std::string> out;
    for (const auto& path : FilesUnder(Root() / "data")) {
      out.insert(path.filename().string());
    }
    return out;
  }

  static std::string Location(const metadata::ObjectRecord& record, std::size_t extent = 0) {
    return record.placements.at(0).extents.at(extent).location;
  }

  TempDir dir_;
  std::unique_ptr<metadata::Index> index_;
  LocalTier* tier_ = nullptr;
  std::unique_ptr<LocalObjectStore> store_;
};

TEST_F(SweepTest, RemovesExactlyTheUnreferencedFiles) {
  const auto plain = Put("plain", "bytes");
  const auto source = Put("source", "shared");
  metadata::ObjectRecord copy_record;
  copy_record.bucket = BucketName("bucket");
  copy_record.key = ObjectKey("copy");
  auto copy = store_->CopyObject(source, copy_record);  // a hard link
  ASSERT_TRUE(copy.ok());

  // A multipart upload in progress (its part) and a completed one (its extents).
  metadata::UploadRecord upload;
  upload.object.bucket = BucketName("bucket");
  upload.object.key = ObjectKey("in-progress");
  auto pending_upload = store_->CreateUpload(upload);
  ASSERT_TRUE(pending_upload.ok());
  auto w = store_->BeginWrite(BucketName("bucket"), {});
  ASSERT_TRUE((*w)->Append("part one").ok());
  auto part = store_->CommitPart(std::move(w).value(), *pending_upload, 1);
  ASSERT_TRUE(part.ok());
  upload.object.key = ObjectKey("completed");
  auto done_upload = store_->CreateUpload(upload);
  ASSERT_TRUE(done_upload.ok());
  w = store_->BeginWrite(BucketName("bucket"), {});
  ASSERT_TRUE((*w)->Append("only part").ok());
  auto done_part = store_->CommitPart(std::move(w).value(), *done_upload, 1);
  ASSERT_TRUE(done_part.ok());
  CompletionRequest request;
  request.parts.push_back({1, done_part->etag, {}});
  auto completed = store_->CompleteUpload(BucketName("bucket"), ObjectKey("completed"),
                                          done_upload->upload_id, request);
  ASSERT_TRUE(completed.ok()) << completed.error().message;

  // Orphans: a promoted file never committed, and the file of an overwritten version
  // that a crash kept from being unlinked.
  const std::string never_committed = PromotedOrphan("lost");
  const auto old = Put("overwritten", "old version");
  const std::string old_path = tier_->DataPath(Location(old));
  fs::copy_file(old_path, dir_.path() / "saved");
  Put("overwritten", "new version");
  ASSERT_FALSE(fs::exists(old_path));
  fs::copy_file(dir_.path() / "saved", old_path);
  // A file that is not a data file at all is never touched.
  std::ofstream(Root() / "data" / Location(plain).substr(0, 2) / "README") << "not ours";

  const std::set<std::string> referenced = {
      Location(plain),
      Location(source),
      Location(*copy),
      part->location,
      Location(*completed),
      Location(*index_->GetObject(BucketName("bucket"), ObjectKey("overwritten")))};
  const std::set<std::string> before = DataFiles();
  ASSERT_EQ(before.size(), referenced.size() + 3);

  // Everything is younger than a 10-minute grace period: nothing goes.
  auto young = store_->SweepOrphans(system_clock::now() - std::chrono::minutes(10));
  ASSERT_TRUE(young.ok()) << young.error().message;
  EXPECT_EQ(*young, 0u);
  EXPECT_EQ(DataFiles(), before);

  auto swept = store_->SweepOrphans(system_clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(swept.ok()) << swept.error().message;
  EXPECT_EQ(*swept, 2u);
  std::set<std::string> expected = referenced;
  expected.insert("README");
  EXPECT_EQ(DataFiles(), expected);
  EXPECT_FALSE(fs::exists(tier_->DataPath(never_committed)));
  EXPECT_FALSE(fs::exists(old_path));

  // Every object still reads.
  for (const metadata::ObjectRecord* record :
       std::vector<const metadata::ObjectRecord*>{&plain, &source, &*copy, &*completed}) {
    auto reader = store_->OpenObject(*record);
    EXPECT_TRUE(reader.ok()) << record->key.str();
  }
}

TEST_F(SweepTest, OpenSweepsFilesFromBeforeTheOpen) {
  const auto kept = Put("kept", "bytes");
  const std::string orphan = tier_->DataPath(PromotedOrphan("lost"));
  ASSERT_TRUE(fs::exists(orphan));
  store_.reset();
  Config config;
  TierConfig hot;
  hot.name = "hot";
  hot.kind = TierKind::kLocal;
  hot.path = Root().string();
  config.tiers = {hot};
  config.storage_classes = {{"STANDARD", "hot"}};
  auto store = ObjectStore::Open(config, *index_, SweepOptions{.interval = {}});
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(DataFiles(), std::set<std::string>{Location(kept)});
  EXPECT_FALSE(fs::exists(orphan));
  auto reader = (*store)->OpenObject(kept);
  EXPECT_TRUE(reader.ok());
}

TEST_F(SweepTest, BackgroundSweeperRunsAndStops) {
  const auto kept = Put("kept", "bytes");
  Open(SweepOptions{.grace = std::chrono::milliseconds(0),
                    .interval = std::chrono::milliseconds(5),
                    .at_open = false});
  store_->StartSweeper();
  const std::string orphan = PromotedOrphan("lost");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (fs::exists(tier_->DataPath(orphan)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(fs::exists(tier_->DataPath(orphan)));
  EXPECT_TRUE(fs::exists(tier_->DataPath(Location(kept))));
  store_.reset();  // joins the sweeper
}

}  // namespace
}  // namespace strata::storage
