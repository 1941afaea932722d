// Local tiers beyond the hot one: a version whose storage class names the warm tier is put
// there as it is committed (PUT, CopyObject, CompleteUpload), MoveToLocalTier moves versions
// between local tiers (a hard link on one file system, a copy across two), parts copied from
// a warm source land on hot, and deletes, expirations and the orphan sweep cover every local
// tier. Checked down to the files under each tier's data/ and tmp/ directories.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "storage/local/local_object_store.h"
#include "storage/local/local_tier.h"
#include "storage/object_store.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_tier.h"
#include "tests/unit/storage/test_writeback.h"

namespace strata::storage {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;
using testing::FilesUnder;
using testing::Md5Hex;
using testing::Promoted;
using testing::RandomBytes;
using testing::TempDir;

// Appends go in pieces of this size (several chunks of the trailer each).
constexpr std::size_t kPiece = 256 * 1024;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct stat StatOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

fs::path DataFile(const fs::path& root, const std::string& id) {
  return root / "data" / id.substr(0, 2) / id;
}

// Every extent location of every placement, in order.
std::vector<std::string> Locations(const metadata::ObjectRecord& record) {
  std::vector<std::string> out;
  for (const auto& p : record.placements) {
    for (const auto& e : p.extents) {
      out.push_back(e.location);
    }
  }
  return out;
}

// The local tier the record's bytes are on ("" when none).
std::string LocalTierOf(const metadata::ObjectRecord& record) {
  for (const auto& p : record.placements) {
    if (p.tier == "hot" || p.tier == "warm") {
      return p.tier;
    }
  }
  return "";
}

// All of an object's bytes through a reader; reads stop at extent and CRC window ends.
std::string ReadAllFrom(ObjectReader& reader) {
  std::string out;
  std::vector<char> buf(kPiece);
  while (true) {
    auto n = reader.Read(out.size(), buf);
    EXPECT_TRUE(n.ok()) << n.error().message;
    if (!n.ok() || *n == 0) {
      break;
    }
    out.append(buf.data(), *n);
  }
  return out;
}

// A data file no record names, as a crash would leave one: written straight into data/.
std::string Plant(const fs::path& root, const std::string& body) {
  const std::string id = RandomHexId();
  fs::create_directories(DataFile(root, id).parent_path());
  std::ofstream(DataFile(root, id), std::ios::binary) << body;
  return id;
}

// A store as ObjectStore::Open makes it from a config with two local tiers, hot (where
// writes land; STANDARD) and warm (STANDARD_IA), both under the test's directory unless a
// derived fixture points warm_root_ elsewhere first.
class LocalPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (warm_root_.empty()) {
      warm_root_ = dir_.path() / "warm";
    }
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = true;
    TierConfig hot;
    hot.name = "hot";
    hot.kind = TierKind::kLocal;
    hot.path = HotRoot().string();
    TierConfig warm = hot;
    warm.name = "warm";
    warm.path = warm_root_.string();
    config_.tiers = {hot, warm};
    config_.storage_classes = {{"STANDARD", "hot"}, {"STANDARD_IA", "warm"}};
    OpenStore(SweepOptions{.interval = {}, .at_open = false});
    ASSERT_TRUE(store_ != nullptr);
    ASSERT_TRUE(store_->CreateBucket(BucketName("bucket"), "alice", "").ok());
  }

  void OpenStore(SweepOptions sweep) {
    store_.reset();
    auto store = ObjectStore::Open(config_, *index_, sweep);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }

  fs::path HotRoot() const { return dir_.path() / "hot"; }
  fs::path Root(const std::string& tier) const { return tier == "warm" ? warm_root_ : HotRoot(); }
  std::size_t DataFiles(const std::string& tier) const {
    return FilesUnder(Root(tier) / "data").size();
  }
  std::size_t TempFiles() const {
    return FilesUnder(HotRoot() / "tmp").size() + FilesUnder(warm_root_ / "tmp").size() +
           testing::UnnamedFilesOpenUnder(HotRoot()) + testing::UnnamedFilesOpenUnder(warm_root_);
  }

  std::unique_ptr<PendingWrite> Write(const std::string& bucket, const std::string& body) {
    auto w = store_->BeginWrite(BucketName(bucket), {});
    EXPECT_TRUE(w.ok()) << w.error().message;
    if (!w.ok()) {
      return nullptr;
    }
    for (std::size_t pos = 0; pos < body.size(); pos += kPiece) {
      EXPECT_TRUE((*w)->Append(std::string_view(body).substr(pos, kPiece)).ok());
    }
    return std::move(w).value();
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body,
                             const std::string& storage_class = "STANDARD",
                             const std::string& bucket = "bucket") {
    metadata::ObjectRecord record;
    record.bucket = BucketName(bucket);
    record.key = ObjectKey(key);
    record.storage_class = storage_class;
    auto put = store_->CommitWrite(Write(bucket, body), record);
    EXPECT_TRUE(put.ok()) << put.error().message;
    return put.ok() ? *put : metadata::ObjectRecord{};
  }

  metadata::ObjectRecord Head(const std::string& key, const std::string& bucket = "bucket") {
    auto head = store_->HeadObject(BucketName(bucket), ObjectKey(key));
    EXPECT_TRUE(head.ok()) << key << ": " << head.error().message;
    return head.ok() ? *head : metadata::ObjectRecord{};
  }

  std::string ReadAll(const metadata::ObjectRecord& record) {
    auto reader = store_->OpenObject(record);
    EXPECT_TRUE(reader.ok()) << reader.error().message;
    return reader.ok() ? ReadAllFrom(**reader) : "";
  }

  // The record's bytes are on `tier` alone: its one placement names it, and every extent
  // is a file there and none on the other tier.
  void ExpectOnlyOn(const metadata::ObjectRecord& record, const std::string& tier) {
    ASSERT_EQ(record.placements.size(), 1u) << record.key.str();
    EXPECT_EQ(record.placements[0].tier, tier) << record.key.str();
    ASSERT_FALSE(record.placements[0].extents.empty());
    const std::string other = tier == "hot" ? "warm" : "hot";
    for (const auto& id : Locations(record)) {
      EXPECT_TRUE(fs::exists(DataFile(Root(tier), id))) << record.key.str() << " " << id;
      EXPECT_FALSE(fs::exists(DataFile(Root(other), id))) << record.key.str() << " " << id;
    }
  }

  static metadata::ObjectRecord Target(const std::string& key, const std::string& storage_class) {
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    record.content_type = "application/x-copy";
    record.storage_class = storage_class;
    return record;
  }

  metadata::UploadRecord NewUpload(const std::string& key,
                                   const std::string& storage_class = "STANDARD") {
    metadata::UploadRecord upload;
    upload.owner = "alice";
    upload.object.bucket = BucketName("bucket");
    upload.object.key = ObjectKey(key);
    upload.object.storage_class = storage_class;
    auto created = store_->CreateUpload(upload);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? *created : upload;
  }

  metadata::PartRecord CommitPart(const metadata::UploadRecord& upload, std::uint32_t number,
                                  const std::string& body) {
    auto part = store_->CommitPart(Write(upload.object.bucket.str(), body), upload, number);
    EXPECT_TRUE(part.ok()) << part.error().message;
    return part.ok() ? *part : metadata::PartRecord{};
  }

  Result<metadata::ObjectRecord> Complete(const metadata::UploadRecord& upload,
                                          const std::vector<metadata::PartRecord>& parts) {
    CompletionRequest request;
    for (const auto& p : parts) {
      request.parts.push_back({p.number, p.etag, {}});
    }
    return store_->CompleteUpload(upload.object.bucket, upload.object.key, upload.upload_id,
                                  request);
  }

  // A completed two-part upload (a 5 MiB part, then a short one): two extents on hot.
  metadata::ObjectRecord MultipartObject(const std::string& key, const std::string& body1,
                                         const std::string& body2) {
    auto upload = NewUpload(key);
    auto p1 = CommitPart(upload, 1, body1);
    auto p2 = CommitPart(upload, 2, body2);
    auto object = Complete(upload, {p1, p2});
    EXPECT_TRUE(object.ok()) << object.error().message;
    return object.ok() ? *object : metadata::ObjectRecord{};
  }

  TempDir dir_;
  fs::path warm_root_;
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(LocalPlacementTest, PutOfAWarmClassEndsOnTheWarmTier) {
  const std::string body = RandomBytes(300'000, 1);
  const auto put = Put("ia", body, "STANDARD_IA");
  EXPECT_EQ(put.storage_class, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(put, "warm"));
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(DataFiles("hot"), 0u) << "the hot name the write was promoted under is freed";
  EXPECT_EQ(TempFiles(), 0u);
  // One file system: the warm name was linked to the promoted file, whose hot name is gone.
  EXPECT_EQ(StatOf(DataFile(warm_root_, Locations(put)[0])).st_nlink, 1u);

  const auto head = Head("ia");
  EXPECT_EQ(head.storage_class, "STANDARD_IA");
  EXPECT_EQ(head.etag, put.etag);
  EXPECT_EQ(head.last_modified_ms, put.last_modified_ms);
  EXPECT_EQ(Locations(head), Locations(put)) << "the returned record is the stored one";
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(head, "warm"));
  EXPECT_TRUE(ReadAll(head) == body);
  EXPECT_TRUE(ReadAll(put) == body);

  const auto standard = Put("std", "stays hot", "STANDARD");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(standard, "hot"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Head("std"), "hot"));
  EXPECT_EQ(ReadAll(Head("std")), "stays hot");
  // A class that names no local tier here leaves the version where it was written.
  const auto cold = Put("cold", "no tier of its own", "GLACIER");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(cold, "hot"));
  EXPECT_EQ(Head("cold").storage_class, "GLACIER");
  EXPECT_EQ(DataFiles("hot"), 2u);
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalPlacementTest, MoveToLocalTierAndBack) {
  const std::string body = RandomBytes(200'000, 2);
  const auto put = Put("k", body);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(put, "hot"));

  auto moved = store_->MoveToLocalTier(put, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto warm = Head("k");
  EXPECT_EQ(warm.storage_class, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(warm, "warm"));
  // The same version, rewritten in place: only its placement and class changed.
  EXPECT_EQ(warm.version_id.str(), put.version_id.str());
  EXPECT_EQ(warm.etag, put.etag);
  EXPECT_EQ(warm.last_modified_ms, put.last_modified_ms);
  EXPECT_EQ(warm.size, put.size);
  EXPECT_EQ(warm.checksums, put.checksums);
  EXPECT_NE(Locations(warm), Locations(put));
  EXPECT_EQ(DataFiles("hot"), 0u) << "the old name is freed";
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(warm) == body);
  // The record read before the move names a file that is gone.
  auto stale = store_->OpenObject(put);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::kNoSuchKey);

  // Already there with that class: nothing to do.
  moved = store_->MoveToLocalTier(warm, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  EXPECT_EQ(Locations(Head("k")), Locations(warm));

  moved = store_->MoveToLocalTier(warm, "hot", "STANDARD");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto hot = Head("k");
  EXPECT_EQ(hot.storage_class, "STANDARD");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(hot, "hot"));
  EXPECT_EQ(hot.etag, put.etag);
  EXPECT_EQ(hot.last_modified_ms, put.last_modified_ms);
  EXPECT_EQ(DataFiles("hot"), 1u);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(hot) == body);

  // A tier that is not a local one is refused.
  auto unknown = store_->MoveToLocalTier(hot, "cold", "GLACIER");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Head("k").storage_class, "STANDARD");
}

TEST_F(LocalPlacementTest, MultipartObjectMovesEveryExtent) {
  const std::string body1 = RandomBytes(kMinPartSize, 3);
  const std::string body2 = RandomBytes(70'000, 4);
  const auto object = MultipartObject("mpu", body1, body2);
  ASSERT_EQ(Locations(object).size(), 2u);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(object, "hot"));

  auto moved = store_->MoveToLocalTier(object, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto warm = Head("mpu");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(warm, "warm"));
  ASSERT_EQ(warm.placements[0].extents.size(), 2u);
  EXPECT_EQ(warm.placements[0].extents[0].size, body1.size());
  EXPECT_EQ(warm.placements[0].extents[1].size, body2.size());
  EXPECT_EQ(warm.parts.size(), 2u);
  EXPECT_EQ(warm.etag, object.etag);
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(DataFiles("warm"), 2u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(warm) == body1 + body2);
}

TEST_F(LocalPlacementTest, FailedMoveOfOneExtentRemovesTheOthersNewNames) {
  const std::string body1 = RandomBytes(kMinPartSize, 5);
  const auto object = MultipartObject("mpu", body1, "short tail");
  ASSERT_EQ(Locations(object).size(), 2u);
  // The second extent's file is gone (as if the version were replaced under the move): the
  // first extent was already given a warm name, which must not stay behind.
  ASSERT_TRUE(fs::remove(DataFile(HotRoot(), Locations(object)[1])));
  auto moved = store_->MoveToLocalTier(object, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  const auto head = Head("mpu");
  EXPECT_EQ(head.storage_class, "STANDARD");
  EXPECT_EQ(Locations(head), Locations(object));
  EXPECT_TRUE(fs::exists(DataFile(HotRoot(), Locations(object)[0])));
}

TEST_F(LocalPlacementTest, MoveOfAStaleRecordChangesNothing) {
  const auto first = Put("k", "first version");
  const auto second = Put("k", "second version");  // frees the first one's file
  auto moved = store_->MoveToLocalTier(first, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  auto head = Head("k");
  EXPECT_EQ(head.storage_class, "STANDARD");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(head, "hot"));
  EXPECT_EQ(ReadAll(head), "second version");

  // Bytes still there but the version is not the one read (another time): the warm name
  // made before the index write refused is removed again.
  metadata::ObjectRecord other_time = second;
  other_time.last_modified_ms -= 1;
  moved = store_->MoveToLocalTier(other_time, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(Locations(Head("k")), Locations(second));
  EXPECT_EQ(ReadAll(Head("k")), "second version");

  // The version is the one read but its local copy is no longer the one the record names
  // (replaced meanwhile): the index write refuses, the warm names go.
  const auto other = Put("other", "other bytes");
  metadata::ObjectRecord swapped = second;
  swapped.placements = other.placements;
  moved = store_->MoveToLocalTier(swapped, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_EQ(Head("k").storage_class, "STANDARD");
  EXPECT_EQ(ReadAll(Head("k")), "second version");
  EXPECT_EQ(ReadAll(Head("other")), "other bytes");
}

TEST_F(LocalPlacementTest, CopyObjectFromAWarmSourceToAHotClassEndsOnHot) {
  const std::string body = RandomBytes(120'000, 6);
  const auto source = Put("src", body, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(source, "warm"));
  const fs::path source_file = DataFile(warm_root_, Locations(source)[0]);

  auto copy = store_->CopyObject(source, Target("copy", "STANDARD"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_EQ(copy->storage_class, "STANDARD");
  EXPECT_EQ(copy->etag, source.etag);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*copy, "hot"));
  EXPECT_EQ(Locations(Head("copy")), Locations(*copy));
  // One file system: linked on warm, then moved to hot by a second link; the warm name the
  // copy had first is freed, so the inode has two names, the source's and the copy's.
  const fs::path copy_file = DataFile(HotRoot(), Locations(*copy)[0]);
  EXPECT_EQ(StatOf(copy_file).st_ino, StatOf(source_file).st_ino);
  EXPECT_EQ(StatOf(copy_file).st_nlink, 2u);
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(DataFiles("hot"), 1u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(*copy) == body);

  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("src")).ok());
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(StatOf(copy_file).st_nlink, 1u);
  EXPECT_TRUE(ReadAll(Head("copy")) == body);
}

TEST_F(LocalPlacementTest, CopyObjectFromAWarmSourceToTheWarmClassLinksOnWarm) {
  const std::string body = RandomBytes(120'000, 7);
  const auto source = Put("src", body, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(source, "warm"));

  auto copy = store_->CopyObject(source, Target("copy", "STANDARD_IA"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_EQ(copy->storage_class, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*copy, "warm"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Head("copy"), "warm"));
  const fs::path copy_file = DataFile(warm_root_, Locations(*copy)[0]);
  EXPECT_EQ(StatOf(copy_file).st_ino, StatOf(DataFile(warm_root_, Locations(source)[0])).st_ino);
  EXPECT_EQ(StatOf(copy_file).st_nlink, 2u);
  EXPECT_EQ(DataFiles("warm"), 2u);
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(TempFiles(), 0u);

  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("src")).ok());
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(StatOf(copy_file).st_nlink, 1u);
  EXPECT_TRUE(ReadAll(Head("copy")) == body);
}

TEST_F(LocalPlacementTest, CopyPartFromAWarmSourceLandsOnHot) {
  const std::string big = RandomBytes(kMinPartSize, 8);
  const std::string small = RandomBytes(90'000, 9);
  const auto big_source = Put("big", big, "STANDARD_IA");
  const auto small_source = Put("small", small, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(big_source, "warm"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(small_source, "warm"));

  // Parts of one upload must share a tier: both the shared whole-object part and the
  // copied range go to hot, wherever the source is.
  auto upload = NewUpload("mpu");
  auto whole = store_->CopyPart(big_source, 0, big.size(), upload, 1);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->tier, "hot");
  EXPECT_EQ(whole->etag, big_source.etag);
  EXPECT_TRUE(fs::exists(DataFile(HotRoot(), whole->location)));
  // One file system: a second name of the warm source's file.
  EXPECT_EQ(StatOf(DataFile(HotRoot(), whole->location)).st_nlink, 2u);
  auto range = store_->CopyPart(small_source, 1000, 50'000, upload, 2);
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->tier, "hot");
  EXPECT_EQ(range->size, 50'000u);
  EXPECT_EQ(range->etag, Md5Hex(small.substr(1000, 50'000)));
  EXPECT_TRUE(fs::exists(DataFile(HotRoot(), range->location)));

  auto object = Complete(upload, {*whole, *range});
  ASSERT_TRUE(object.ok()) << object.error().message;
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*object, "hot"));
  EXPECT_EQ(object->placements[0].extents.size(), 2u);
  const std::string all = big + small.substr(1000, 50'000);
  EXPECT_TRUE(ReadAll(*object) == all);
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("big")).ok());
  EXPECT_TRUE(ReadAll(Head("mpu")) == all);

  // The upload's object is of a warm class: completed, it is moved there.
  auto ia_upload = NewUpload("mpu-ia", "STANDARD_IA");
  auto part = store_->CopyPart(small_source, 0, small.size(), ia_upload, 1);
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(part->tier, "hot");
  auto ia = Complete(ia_upload, {*part});
  ASSERT_TRUE(ia.ok()) << ia.error().message;
  EXPECT_EQ(ia->storage_class, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*ia, "warm"));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Head("mpu-ia"), "warm"));
  EXPECT_TRUE(ReadAll(Head("mpu-ia")) == small);
  EXPECT_FALSE(fs::exists(DataFile(HotRoot(), part->location))) << "the part's hot name is freed";
  EXPECT_EQ(TempFiles(), 0u);

  // A warm source replaced since its record was read.
  Put("small", "replaced");
  auto gone = store_->CopyPart(small_source, 0, small.size(), NewUpload("late"), 1);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchKey);
}

TEST_F(LocalPlacementTest, DeletingOrOverwritingAWarmVersionFreesItsFile) {
  Put("a", "warm a", "STANDARD_IA");
  Put("b", "warm b", "STANDARD_IA");
  EXPECT_EQ(DataFiles("warm"), 2u);

  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("a")).ok());
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("a")).error().code,
            ErrorCode::kNoSuchKey);

  // Overwritten by a hot version, then by a warm one again.
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Put("b", "now hot"), "hot"));
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(DataFiles("hot"), 1u);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Put("b", "warm again", "STANDARD_IA"), "warm"));
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(ReadAll(Head("b")), "warm again");

  // A warm version deleted by id.
  ASSERT_TRUE(store_->SetBucketVersioning(BucketName("bucket"), "Enabled").ok());
  const auto versioned = Put("c", "versioned", "STANDARD_IA");
  EXPECT_EQ(DataFiles("warm"), 2u);
  auto deleted = store_->DeleteVersion(BucketName("bucket"), ObjectKey("c"), versioned.version_id);
  ASSERT_TRUE(deleted.ok()) << deleted.error().message;
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalPlacementTest, OrphanSweepCoversTheWarmTier) {
  // ObjectStore::Open makes the LocalObjectStore, which has the sweep.
  auto* local = dynamic_cast<LocalObjectStore*>(store_.get());
  ASSERT_NE(local, nullptr);
  const auto warm = Put("warm", "kept on warm", "STANDARD_IA");
  const auto hot = Put("hot", "kept on hot");
  // An upload in progress whose part was copied from the warm object (the part is on hot).
  auto upload = NewUpload("mpu");
  auto part = store_->CopyPart(warm, 0, warm.size, upload, 1);
  ASSERT_TRUE(part.ok()) << part.error().message;
  const std::string warm_orphan = Plant(warm_root_, "lost on warm");
  const std::string hot_orphan = Plant(HotRoot(), "lost on hot");
  ASSERT_EQ(DataFiles("warm"), 2u);
  ASSERT_EQ(DataFiles("hot"), 3u);

  // Everything is younger than a 10-minute grace period: nothing goes.
  auto young = local->SweepOrphans(system_clock::now() - std::chrono::minutes(10));
  ASSERT_TRUE(young.ok()) << young.error().message;
  EXPECT_EQ(*young, 0u);
  EXPECT_EQ(DataFiles("warm"), 2u);

  auto swept = local->SweepOrphans(system_clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(swept.ok()) << swept.error().message;
  EXPECT_EQ(*swept, 2u);
  EXPECT_FALSE(fs::exists(DataFile(warm_root_, warm_orphan)));
  EXPECT_FALSE(fs::exists(DataFile(HotRoot(), hot_orphan)));
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(DataFiles("hot"), 2u);
  EXPECT_EQ(ReadAll(Head("warm")), "kept on warm");
  EXPECT_EQ(ReadAll(hot), "kept on hot");
  auto completed = Complete(upload, {*part});
  ASSERT_TRUE(completed.ok()) << completed.error().message;
  EXPECT_EQ(ReadAll(*completed), "kept on warm");
}

TEST_F(LocalPlacementTest, ReopenSweepsEveryLocalTierAndKeepsWarmObjects) {
  const auto warm = Put("warm", "kept on warm", "STANDARD_IA");
  const std::string orphan = Plant(warm_root_, "lost on warm");
  OpenStore(SweepOptions{.interval = {}});  // sweeps at open
  ASSERT_TRUE(store_ != nullptr);
  EXPECT_FALSE(fs::exists(DataFile(warm_root_, orphan)));
  EXPECT_EQ(DataFiles("warm"), 1u);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Head("warm"), "warm"));
  EXPECT_EQ(Locations(Head("warm")), Locations(warm));
  EXPECT_EQ(ReadAll(Head("warm")), "kept on warm");
  // Class placement works after a reopen too.
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(Put("again", "x", "STANDARD_IA"), "warm"));
}

TEST_F(LocalPlacementTest, ExpireVersionInAnUnversionedBucket) {
  const auto put = Put("k", "expiring", "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(put, "warm"));

  // Not the version the lifecycle pass read (another time): nothing happens.
  metadata::ObjectRecord other_time = put;
  other_time.last_modified_ms -= 1;
  auto expired = store_->ExpireVersion(other_time, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_FALSE(*expired);
  EXPECT_EQ(ReadAll(Head("k")), "expiring");
  EXPECT_EQ(DataFiles("warm"), 1u);

  expired = store_->ExpireVersion(put, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_TRUE(*expired);
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchKey);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(DataFiles("hot"), 0u);

  expired = store_->ExpireVersion(put, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_FALSE(*expired) << "already gone";
}

TEST_F(LocalPlacementTest, ExpireVersionInAVersionedBucket) {
  ASSERT_TRUE(store_->SetBucketVersioning(BucketName("bucket"), "Enabled").ok());
  const auto put = Put("k", "expiring", "STANDARD_IA");
  ASSERT_NE(put.version_id.str(), "null");

  // As the current version: a delete marker on top, the version and its bytes stay.
  auto expired = store_->ExpireVersion(put, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_TRUE(*expired);
  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("k"));
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_TRUE(head->delete_marker);
  EXPECT_NE(head->version_id.str(), put.version_id.str());
  auto kept = store_->HeadVersion(BucketName("bucket"), ObjectKey("k"), put.version_id);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(ReadAll(*kept), "expiring");
  EXPECT_EQ(DataFiles("warm"), 1u);

  // No longer the newest (the marker is): no second marker.
  expired = store_->ExpireVersion(put, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_FALSE(*expired);

  // As a noncurrent version: removed for good, with its bytes.
  expired = store_->ExpireVersion(put, false);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_TRUE(*expired);
  auto gone = store_->HeadVersion(BucketName("bucket"), ObjectKey("k"), put.version_id);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchVersion);
  EXPECT_EQ(DataFiles("warm"), 0u);

  // A locked version is never expired as noncurrent (its bytes stay), nor removed by id,
  // until its hold is lifted; a GOVERNANCE bypass passes a retention, never a hold.
  const auto held = Put("h", "held");
  metadata::VersionSettingsChange hold;
  hold.legal_hold = true;
  ASSERT_TRUE(
      store_->UpdateVersionSettings(BucketName("bucket"), ObjectKey("h"), held.version_id, hold)
          .ok());
  expired = store_->ExpireVersion(held, false);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_FALSE(*expired);
  auto refused = store_->DeleteVersion(BucketName("bucket"), ObjectKey("h"), held.version_id, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(ReadAll(Head("h")), "held");
  hold.legal_hold = false;
  ASSERT_TRUE(
      store_->UpdateVersionSettings(BucketName("bucket"), ObjectKey("h"), held.version_id, hold)
          .ok());
  ASSERT_TRUE(store_->DeleteVersion(BucketName("bucket"), ObjectKey("h"), held.version_id).ok());

  // A newer PUT came after the version was read: it is not expired as current.
  const auto older = Put("j", "older");
  const auto newer = Put("j", "newer");
  expired = store_->ExpireVersion(older, true);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_FALSE(*expired);
  const auto current = Head("j");
  EXPECT_FALSE(current.delete_marker);
  EXPECT_EQ(current.version_id.str(), newer.version_id.str());
  EXPECT_EQ(ReadAll(current), "newer");
}

TEST(LocalTierAdoptTest, OnOneFileSystemAdoptLinks) {
  TempDir dir;
  auto hot = LocalTier::Open("hot", (dir.path() / "hot").string(), true);
  ASSERT_TRUE(hot.ok()) << hot.error().message;
  auto warm = LocalTier::Open("warm", (dir.path() / "warm").string(), true);
  ASSERT_TRUE(warm.ok()) << warm.error().message;
  const std::string id = Promoted(**hot, "adopted bytes");
  ASSERT_FALSE(id.empty());

  auto adopted = (*warm)->Adopt(**hot, id);
  ASSERT_TRUE(adopted.ok()) << adopted.error().message;
  EXPECT_TRUE(LocalTier::IsValidId(*adopted));
  EXPECT_NE(*adopted, id);
  const struct stat source = StatOf((*hot)->DataPath(id));
  const struct stat target = StatOf((*warm)->DataPath(*adopted));
  EXPECT_EQ(source.st_ino, target.st_ino);
  EXPECT_EQ(target.st_nlink, 2u);
  EXPECT_TRUE(FilesUnder(dir.path() / "warm" / "tmp").empty());

  auto missing = (*warm)->Adopt(**hot, RandomHexId());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto malformed = (*warm)->Adopt(**hot, "../../etc/passwd");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(FilesUnder(dir.path() / "warm" / "data").size(), 1u);
}

// A bucket bound to an upstream tier ("cold", not a tier of this config: nothing is pushed
// for real): versions become clean when marked pushed, and a clean version's local copy
// can be evicted, after which it has no local copy at all.
class LocalPlacementBoundTest : public LocalPlacementTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(LocalPlacementTest::SetUp());
    ASSERT_TRUE(store_->CreateBucket(BucketName("bound"), "alice", "", "cold").ok());
  }
  // What the write-back worker records after a successful push.
  void MarkPushed(const metadata::ObjectRecord& record) { testing::MarkPushed(*index_, record); }

  metadata::ObjectRecord Current(const std::string& key) { return Head(key, "bound"); }
  // A pushed version of `key` whose local copy was then evicted.
  metadata::ObjectRecord Evicted(const std::string& key, const std::string& body) {
    const auto put = Put(key, body, "STANDARD", "bound");
    MarkPushed(put);
    auto evicted = store_->EvictLocalCopy(Current(key), "cold");
    EXPECT_TRUE(evicted.ok() && *evicted);
    const auto record = Current(key);
    EXPECT_FALSE(store_->HasLocalCopy(record));
    return record;
  }
};

TEST_F(LocalPlacementBoundTest, MoveOfAVersionWithoutLocalCopyOnlyChangesItsClass) {
  const auto evicted = Evicted("k", "pushed bytes");
  EXPECT_EQ(DataFiles("hot") + DataFiles("warm"), 0u);

  auto moved = store_->MoveToLocalTier(evicted, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto after = Current("k");
  EXPECT_EQ(after.storage_class, "STANDARD_IA");
  EXPECT_FALSE(store_->HasLocalCopy(after));
  ASSERT_EQ(after.placements.size(), 1u);
  EXPECT_EQ(after.placements[0].tier, "cold");
  EXPECT_EQ(after.etag, evicted.etag);
  EXPECT_EQ(DataFiles("hot") + DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u) << "a class change queues no write-back";

  // The class is that already: nothing to write, from a fresh record or the old one.
  moved = store_->MoveToLocalTier(after, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
  moved = store_->MoveToLocalTier(evicted, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_FALSE(*moved);
}

TEST_F(LocalPlacementBoundTest, EvictionAndUpstreamTransitionFreeAWarmCopy) {
  const std::string body = RandomBytes(50'000, 10);
  const auto put = Put("k", body, "STANDARD_IA", "bound");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(put, "warm"));
  MarkPushed(put);
  auto evicted = store_->EvictLocalCopy(Current("k"), "cold");
  ASSERT_TRUE(evicted.ok()) << evicted.error().message;
  EXPECT_TRUE(*evicted);
  EXPECT_FALSE(store_->HasLocalCopy(Current("k")));
  EXPECT_EQ(DataFiles("warm"), 0u);

  // Read through again, the bytes come back, onto the tier the class names.
  auto restored = store_->RestoreLocalCopy(Write("bound", body), Current("k"));
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_TRUE(*restored);
  EXPECT_TRUE(ReadAll(Current("k")) == body);
  EXPECT_EQ(Current("k").placements.front().tier, "warm");  // and the upstream copy

  // A lifecycle transition to an upstream class frees a warm copy too.
  const auto other = Put("other", "warm, then upstream", "STANDARD_IA", "bound");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(other, "warm"));
  MarkPushed(other);
  auto transitioned = store_->MoveToUpstream(Current("other"), "cold", "GLACIER");
  ASSERT_TRUE(transitioned.ok()) << transitioned.error().message;
  EXPECT_TRUE(*transitioned);
  EXPECT_EQ(Current("other").storage_class, "GLACIER");
  EXPECT_FALSE(store_->HasLocalCopy(Current("other")));
  EXPECT_EQ(DataFiles("warm"), 1u);  // k's restored copy only
}

// A lifecycle pass read the version while it had no local copy; a GET restored one (on hot)
// before the pass moved it to warm. The move must either see the change (false) or move the
// restored bytes: a version left with a warm class and its bytes on hot is never moved again.
TEST_F(LocalPlacementBoundTest, MoveAfterARestoreKeepsClassAndPlacementInAgreement) {
  const std::string body = "restored meanwhile";
  const auto evicted = Evicted("k", body);
  auto restored = store_->RestoreLocalCopy(Write("bound", body), evicted);
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  ASSERT_TRUE(*restored);

  auto moved = store_->MoveToLocalTier(evicted, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  const auto now = Current("k");
  ASSERT_TRUE(store_->HasLocalCopy(now));
  EXPECT_EQ(ReadAll(now), body);
  if (*moved) {
    EXPECT_EQ(LocalTierOf(now), "warm")
        << "MoveToLocalTier returned true and set class " << now.storage_class
        << ", but the local copy restored meanwhile stays on " << LocalTierOf(now);
  } else {
    EXPECT_EQ(now.storage_class, "STANDARD");
    EXPECT_EQ(LocalTierOf(now), "hot");
  }
}

// The warm tier on another file system (a tmpfs under /dev/shm): adoption copies the bytes,
// trailer included, instead of linking them.
class LocalPlacementCrossDeviceTest : public LocalPlacementTest {
 protected:
  void SetUp() override {
    struct stat shm {};
    struct stat disk {};
    if (::stat("/dev/shm", &shm) != 0 || !S_ISDIR(shm.st_mode)) {
      STRATA_SKIP_OR_FAIL_IN_CI("no /dev/shm");
    }
    ASSERT_EQ(::stat(dir_.path().c_str(), &disk), 0);
    if (shm.st_dev == disk.st_dev) {
      STRATA_SKIP_OR_FAIL_IN_CI("/dev/shm is on the temporary directory's file system");
    }
    std::random_device rd;
    const fs::path dir =
        fs::path("/dev/shm") / ("strata-placement-test-" + std::to_string(::getpid()) + "-" +
                                std::to_string(rd()) + std::to_string(rd()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      STRATA_SKIP_OR_FAIL_IN_CI("cannot create " << dir << ": " << ec.message());
    }
    shm_dir_ = dir;
    warm_root_ = shm_dir_ / "warm";
    ASSERT_NO_FATAL_FAILURE(LocalPlacementTest::SetUp());
  }
  void TearDown() override {
    store_.reset();
    if (!shm_dir_.empty()) {
      std::error_code ec;
      fs::remove_all(shm_dir_, ec);
    }
  }

  // The warm file of `record` is a copy of its own: one name, on the warm file system.
  void ExpectCopiedToWarm(const metadata::ObjectRecord& record) {
    ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(record, "warm"));
    const struct stat hot_dir = StatOf(HotRoot() / "data");
    for (const auto& id : Locations(record)) {
      const struct stat st = StatOf(DataFile(warm_root_, id));
      EXPECT_EQ(st.st_nlink, 1u);
      EXPECT_NE(st.st_dev, hot_dir.st_dev);
    }
  }

  fs::path shm_dir_;
};

TEST_F(LocalPlacementCrossDeviceTest, PutOfAWarmClassIsCopiedToTheWarmFileSystem) {
  // Several MiB: many 64 KiB chunks, and more than one buffer of the copy.
  const std::string body = RandomBytes((3 << 20) + 12'345, 11);
  const auto put = Put("ia", body, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectCopiedToWarm(put));
  ASSERT_NO_FATAL_FAILURE(ExpectCopiedToWarm(Head("ia")));
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(Head("ia")) == body);
}

TEST_F(LocalPlacementCrossDeviceTest, MoveCopiesTheFileWithItsTrailer) {
  const std::string body = RandomBytes((3 << 20) + 777, 12);
  const auto put = Put("k", body);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(put, "hot"));
  const std::string hot_bytes = ReadFile(DataFile(HotRoot(), Locations(put)[0]));
  const std::uint64_t chunks = (body.size() + kChunkSize - 1) / kChunkSize;
  ASSERT_EQ(hot_bytes.size(), body.size() + 8 * chunks + kFooterSize);

  auto moved = store_->MoveToLocalTier(put, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto warm = Head("k");
  EXPECT_EQ(warm.storage_class, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectCopiedToWarm(warm));
  EXPECT_TRUE(ReadFile(DataFile(warm_root_, Locations(warm)[0])) == hot_bytes)
      << "the copy is the whole file, chunk trailer included";
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  // Every chunk is verified against the copied trailer as it is read.
  EXPECT_TRUE(ReadAll(warm) == body);

  moved = store_->MoveToLocalTier(warm, "hot", "STANDARD");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto hot = Head("k");
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(hot, "hot"));
  const struct stat st = StatOf(DataFile(HotRoot(), Locations(hot)[0]));
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_NE(st.st_dev, StatOf(warm_root_ / "data").st_dev);
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(hot) == body);
}

TEST_F(LocalPlacementCrossDeviceTest, MultipartObjectIsCopiedExtentByExtent) {
  const std::string body1 = RandomBytes(kMinPartSize, 13);
  const std::string body2 = RandomBytes(100'000, 14);
  const auto object = MultipartObject("mpu", body1, body2);
  ASSERT_EQ(Locations(object).size(), 2u);
  auto moved = store_->MoveToLocalTier(object, "warm", "STANDARD_IA");
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_TRUE(*moved);
  const auto warm = Head("mpu");
  ASSERT_NO_FATAL_FAILURE(ExpectCopiedToWarm(warm));
  EXPECT_EQ(Locations(warm).size(), 2u);
  EXPECT_EQ(DataFiles("hot"), 0u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_TRUE(ReadAll(warm) == body1 + body2);
}

TEST_F(LocalPlacementCrossDeviceTest, CopiesFromAWarmSourceAreCopiedToHot) {
  const std::string body = RandomBytes((2 << 20) + 99, 15);
  const auto source = Put("src", body, "STANDARD_IA");
  ASSERT_NO_FATAL_FAILURE(ExpectCopiedToWarm(source));
  const struct stat warm_dir = StatOf(warm_root_ / "data");

  // CopyObject links on the source's tier, then the hot class copies it across.
  auto copy = store_->CopyObject(source, Target("copy", "STANDARD"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*copy, "hot"));
  const struct stat copy_st = StatOf(DataFile(HotRoot(), Locations(*copy)[0]));
  EXPECT_EQ(copy_st.st_nlink, 1u);
  EXPECT_NE(copy_st.st_dev, warm_dir.st_dev);
  EXPECT_EQ(StatOf(DataFile(warm_root_, Locations(source)[0])).st_nlink, 1u)
      << "the warm name the copy had first is freed";
  EXPECT_EQ(DataFiles("warm"), 1u);
  EXPECT_TRUE(ReadAll(*copy) == body);

  // UploadPartCopy of the whole source: the part is a copy on hot.
  auto upload = NewUpload("mpu");
  auto part = store_->CopyPart(source, 0, body.size(), upload, 1);
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(part->tier, "hot");
  const struct stat part_st = StatOf(DataFile(HotRoot(), part->location));
  EXPECT_EQ(part_st.st_nlink, 1u);
  EXPECT_NE(part_st.st_dev, warm_dir.st_dev);
  auto object = Complete(upload, {*part});
  ASSERT_TRUE(object.ok()) << object.error().message;
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyOn(*object, "hot"));

  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("src")).ok());
  EXPECT_EQ(DataFiles("warm"), 0u);
  EXPECT_TRUE(ReadAll(Head("copy")) == body);
  EXPECT_TRUE(ReadAll(Head("mpu")) == body);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalPlacementCrossDeviceTest, AdoptCopiesAcrossFileSystems) {
  auto disk = LocalTier::Open("disk", (dir_.path() / "disk").string(), true);
  ASSERT_TRUE(disk.ok()) << disk.error().message;
  auto shm = LocalTier::Open("shm", (shm_dir_ / "shm").string(), true);
  ASSERT_TRUE(shm.ok()) << shm.error().message;
  const std::string body = RandomBytes((1 << 20) * 2 + 4321, 16);
  const std::string id = Promoted(**disk, body);
  ASSERT_FALSE(id.empty());

  auto adopted = (*shm)->Adopt(**disk, id);
  ASSERT_TRUE(adopted.ok()) << adopted.error().message;
  EXPECT_TRUE(LocalTier::IsValidId(*adopted));
  const struct stat source = StatOf((*disk)->DataPath(id));
  const struct stat target = StatOf((*shm)->DataPath(*adopted));
  EXPECT_NE(source.st_dev, target.st_dev);
  EXPECT_EQ(source.st_nlink, 1u);
  EXPECT_EQ(target.st_nlink, 1u);
  EXPECT_TRUE(ReadFile((*shm)->DataPath(*adopted)) == ReadFile((*disk)->DataPath(id)));
  EXPECT_TRUE(FilesUnder(shm_dir_ / "shm" / "tmp").empty());
  const metadata::Extent extent{*adopted, body.size()};
  auto reader = ExtentReader::Open(**shm, {extent});
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_TRUE(ReadAllFrom(**reader) == body);

  auto missing = (*shm)->Adopt(**disk, RandomHexId());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto malformed = (*shm)->Adopt(**disk, "0123456789ABCDEF0123456789ABCDEF");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().code, ErrorCode::kCorruption);
  auto traversal = (*shm)->Adopt(**disk, "../../etc/passwd");
  ASSERT_FALSE(traversal.ok());
  EXPECT_EQ(traversal.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(FilesUnder(shm_dir_ / "shm" / "data").size(), 1u);
  EXPECT_TRUE(FilesUnder(shm_dir_ / "shm" / "tmp").empty());
}

// The copy is written and synced in tmp/, then its data/<xx>/ directory is made. When that
// fails (here data/ is not a directory: ENOTDIR; on a real disk ENOSPC or EIO), nothing may
// stay in tmp/: the orphan sweep only looks at data/, so a copy left there (as large as the
// object) would stay until the next open.
TEST_F(LocalPlacementCrossDeviceTest, FailedCopyLeavesNoTemporaryFile) {
  auto disk = LocalTier::Open("disk", (dir_.path() / "disk").string(), true);
  ASSERT_TRUE(disk.ok()) << disk.error().message;
  const fs::path root = shm_dir_ / "shm";
  auto shm = LocalTier::Open("shm", root.string(), true);
  ASSERT_TRUE(shm.ok()) << shm.error().message;
  const std::string id = Promoted(**disk, RandomBytes(100'000, 17));
  ASSERT_FALSE(id.empty());
  fs::remove_all(root / "data");
  std::ofstream(root / "data") << "not a directory";

  auto adopted = (*shm)->Adopt(**disk, id);
  ASSERT_FALSE(adopted.ok());
  EXPECT_TRUE(FilesUnder(root / "tmp").empty())
      << "LocalTier::CopyPath returned without unlinking its temporary copy";
  EXPECT_TRUE(fs::exists((*disk)->DataPath(id)));
}

}  // namespace
}  // namespace strata::storage
