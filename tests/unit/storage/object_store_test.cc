#include "storage/object_store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <thread>

#include "storage/crc64nvme.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_writeback.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;

using testing::FilesUnder;
using testing::TempDir;

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = true;
    TierConfig hot;
    hot.name = "hot";
    hot.kind = TierKind::kLocal;
    hot.path = HotPath().string();
    TierConfig warm = hot;
    warm.name = "warm";
    warm.path = (dir_.path() / "warm").string();
    config_.tiers = {warm, hot};
    config_.storage_classes = {{"STANDARD", "hot"}, {"STANDARD_IA", "warm"}};
    auto store = ObjectStore::Open(config_, *index_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(BucketName("bucket"), "alice", "").ok());
  }

  std::filesystem::path HotPath() const { return dir_.path() / "hot"; }

  Result<metadata::ObjectRecord> Put(const std::string& key, const std::string& body,
                                     std::vector<ChecksumAlgorithm> checksums = {}) {
    auto w = store_->BeginWrite(BucketName("bucket"), checksums);
    if (!w.ok()) {
      return std::move(w).error();
    }
    // Append in uneven pieces.
    for (std::size_t pos = 0; pos < body.size(); pos += 1000) {
      auto appended = (*w)->Append(std::string_view(body).substr(pos, 1000));
      if (!appended.ok()) {
        return std::move(appended).error();
      }
    }
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    record.content_type = "text/plain";
    record.user_metadata = {{"color", "blue"}};
    return store_->CommitWrite(std::move(w).value(), record);
  }

  std::string ReadAll(const metadata::ObjectRecord& record, std::size_t chunk = 777) {
    auto reader = store_->OpenObject(record);
    EXPECT_TRUE(reader.ok()) << reader.error().message;
    if (!reader.ok()) {
      return "";
    }
    std::string out;
    std::vector<char> buf(chunk);
    while (true) {
      auto n = (*reader)->Read(out.size(), buf);
      EXPECT_TRUE(n.ok());
      if (!n.ok() || *n == 0) {
        break;
      }
      out.append(buf.data(), *n);
    }
    return out;
  }

  std::size_t DataFiles() const { return FilesUnder(HotPath() / "data").size(); }
  // Files being written: unnamed ones open here, or named ones in tmp/.
  std::size_t TempFiles() const {
    return FilesUnder(HotPath() / "tmp").size() + testing::UnnamedFilesOpenUnder(HotPath());
  }

  TempDir dir_;
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(ObjectStoreTest, PutHeadGetRoundTrip) {
  const std::string body = RandomBytes(100'000, 1);
  auto put = Put("dir/file.bin", body, {ChecksumAlgorithm::kSha256, ChecksumAlgorithm::kCrc32c});
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->size, body.size());
  Md5 md5;
  md5.Update(body);
  EXPECT_EQ(put->etag, md5.FinalHex());
  EXPECT_EQ(put->version_id.str(), "null");
  EXPECT_GT(put->last_modified_ms, 0);
  ASSERT_EQ(put->placements.size(), 1u);
  EXPECT_EQ(put->placements[0].tier, "hot");

  auto checksum = [&](std::string_view name) -> std::string {
    for (const auto& [n, v] : put->checksums) {
      if (n == name) {
        return v;
      }
    }
    return "";
  };
  auto expect = [&](ChecksumAlgorithm a) {
    auto c = MakeChecksummer(a);
    c->Update(body);
    return c->FinalBase64();
  };
  EXPECT_EQ(checksum("CRC64NVME"), expect(ChecksumAlgorithm::kCrc64Nvme));
  EXPECT_EQ(checksum("SHA256"), expect(ChecksumAlgorithm::kSha256));
  EXPECT_EQ(checksum("CRC32C"), expect(ChecksumAlgorithm::kCrc32c));
  EXPECT_EQ(checksum("CRC32"), "");

  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("dir/file.bin"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, put->etag);
  EXPECT_EQ(head->content_type, "text/plain");
  EXPECT_EQ(head->user_metadata, put->user_metadata);
  EXPECT_EQ(head->checksums, put->checksums);
  EXPECT_EQ(ReadAll(*head), body);
  EXPECT_EQ(ReadAll(*head, 1 << 20), body);

  // Ranged reads and reads past the end.
  auto reader = store_->OpenObject(*head);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), body.size());
  std::vector<char> buf(10);
  auto n = (*reader)->Read(99'995, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 5u);
  EXPECT_EQ(std::string(buf.data(), 5), body.substr(99'995));
  EXPECT_EQ(*(*reader)->Read(100'000, buf), 0u);
  EXPECT_EQ(*(*reader)->Read(1'000'000, buf), 0u);

  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(ObjectStoreTest, EmptyObject) {
  auto put = Put("empty", "");
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->size, 0u);
  EXPECT_EQ(put->etag, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(ReadAll(*put), "");
}

TEST_F(ObjectStoreTest, PendingWriteDigests) {
  auto w = store_->BeginWrite(BucketName("bucket"), {ChecksumAlgorithm::kSha1});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("123456789").ok());
  EXPECT_EQ((*w)->size(), 9u);
  EXPECT_EQ((*w)->Checksum(ChecksumAlgorithm::kCrc64Nvme), "rosUhgp5mIg=");
  EXPECT_FALSE((*w)->Checksum(ChecksumAlgorithm::kCrc32).has_value());
  EXPECT_TRUE((*w)->Checksum(ChecksumAlgorithm::kSha1).has_value());
  EXPECT_EQ((*w)->Md5Hex(), "25f9e794323b453885f5181f1b624d0b");
  EXPECT_EQ((*w)->Md5Base64(), "JfnnlDI7RTiF9RgfG2JNCw==");
  EXPECT_EQ(TempFiles(), 1u);
}

TEST_F(ObjectStoreTest, OverwriteFreesOldBytes) {
  auto v1 = Put("k", "version one");
  ASSERT_TRUE(v1.ok());
  auto v2 = Put("k", "version two, longer");
  ASSERT_TRUE(v2.ok());
  EXPECT_NE(v1->placements[0].extents[0].location, v2->placements[0].extents[0].location);
  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("k"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(ReadAll(*head), "version two, longer");
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(TempFiles(), 0u);
  // The old record's bytes are gone.
  EXPECT_EQ(store_->OpenObject(*v1).error().code, ErrorCode::kNoSuchKey);
}

TEST_F(ObjectStoreTest, InFlightReadSurvivesOverwriteAndDelete) {
  const std::string body = RandomBytes(50'000, 2);
  auto v1 = Put("k", body);
  ASSERT_TRUE(v1.ok());
  auto reader = store_->OpenObject(*v1);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(Put("k", "new").ok());
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("k")).ok());
  std::string got(body.size(), '\0');
  auto n = (*reader)->Read(0, std::span<char>(got.data(), got.size()));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, body.size());
  EXPECT_EQ(got, body);
  EXPECT_EQ(DataFiles(), 0u);
}

TEST_F(ObjectStoreTest, DeleteObject) {
  ASSERT_TRUE(Put("k", "x").ok());
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("k")).ok());
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchKey);
  // Deleting what is not there succeeds (S3), in a bucket that is.
  EXPECT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("k")).ok());
  EXPECT_EQ(store_->DeleteObject(BucketName("nope"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchBucket);
  EXPECT_EQ(store_->HeadObject(BucketName("nope"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchBucket);
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(ObjectStoreTest, AbandonedWriteLeavesNothing) {
  {
    auto w = store_->BeginWrite(BucketName("bucket"), {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(RandomBytes(10'000, 3)).ok());
    EXPECT_EQ(TempFiles(), 1u);
  }
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchKey);
}

TEST_F(ObjectStoreTest, FailedIndexCommitRemovesPromotedFile) {
  ASSERT_TRUE(Put("keep", "x").ok());
  auto w = store_->BeginWrite(BucketName("bucket"), {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("data").ok());
  metadata::ObjectRecord record;
  record.key = ObjectKey(std::string("bad\0key", 7));  // the index refuses NUL in keys
  auto committed = store_->CommitWrite(std::move(w).value(), record);
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(ObjectStoreTest, WriteIntoMissingOrDeletedBucket) {
  EXPECT_EQ(store_->BeginWrite(BucketName("nope"), {}).error().code, ErrorCode::kNoSuchBucket);
  ASSERT_TRUE(store_->CreateBucket(BucketName("gone"), "alice", "").ok());
  auto w = store_->BeginWrite(BucketName("gone"), {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("x").ok());
  ASSERT_TRUE(store_->DeleteBucket(BucketName("gone")).ok());
  metadata::ObjectRecord record;
  record.bucket = BucketName("gone");
  record.key = ObjectKey("k");
  auto committed = store_->CommitWrite(std::move(w).value(), record);
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(ObjectStoreTest, Buckets) {
  auto mine = store_->CreateBucket(BucketName("bucket"), "alice", "");
  EXPECT_EQ(mine.error().code, ErrorCode::kBucketAlreadyOwnedByYou);
  auto theirs = store_->CreateBucket(BucketName("bucket"), "bob", "");
  EXPECT_EQ(theirs.error().code, ErrorCode::kBucketAlreadyExists);
  EXPECT_EQ(store_->CreateBucket(BucketName("Bad_Name"), "alice", "").error().code,
            ErrorCode::kInvalidBucketName);
  auto created = store_->CreateBucket(BucketName("second"), "bob", "eu-west-1");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->region, "eu-west-1");
  EXPECT_GT(created->created_ms, 0);
  auto got = store_->GetBucket(BucketName("second"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->owner, "bob");
  EXPECT_EQ(store_->GetBucket(BucketName("absent")).error().code, ErrorCode::kNoSuchBucket);
  auto list = store_->ListBuckets();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);

  ASSERT_TRUE(Put("k", "x").ok());
  EXPECT_EQ(store_->DeleteBucket(BucketName("bucket")).error().code, ErrorCode::kBucketNotEmpty);
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("k")).ok());
  EXPECT_TRUE(store_->DeleteBucket(BucketName("bucket")).ok());
  EXPECT_EQ(store_->DeleteBucket(BucketName("bucket")).error().code, ErrorCode::kNoSuchBucket);
}

TEST_F(ObjectStoreTest, ConcurrentOverwritesLeaveOneFile) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 15; ++i) {
        if (!Put("hot-key", RandomBytes(3000 + i, t * 100 + i)).ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(failures.load(), 0);
  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("hot-key"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(ReadAll(*head).size(), head->size);
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(ObjectStoreTest, ReopenKeepsObjectsAndClearsTmp) {
  ASSERT_TRUE(Put("k", "persisted").ok());
  auto w = store_->BeginWrite(BucketName("bucket"), {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("in flight").ok());
  // A crash takes an unnamed file with it; one written where O_TMPFILE is missing stays
  // behind in tmp/.
  EXPECT_TRUE(FilesUnder(HotPath() / "tmp").empty());
  std::ofstream(HotPath() / "tmp" / "0123456789abcdef0123456789abcdef") << "orphan";
  w->reset();
  store_.reset();
  auto store = ObjectStore::Open(config_, *index_);
  ASSERT_TRUE(store.ok());
  store_ = std::move(store).value();
  EXPECT_EQ(TempFiles(), 0u);
  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("k"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(ReadAll(*head), "persisted");
}

TEST_F(ObjectStoreTest, OpenRefusesMissingHotTier) {
  Config config = config_;
  config.storage_classes.clear();
  EXPECT_FALSE(ObjectStore::Open(config, *index_).ok());
  config = config_;
  config.tiers[1].kind = TierKind::kS3;
  EXPECT_FALSE(ObjectStore::Open(config, *index_).ok());
}

struct NameCase {
  const char* name;
  bool valid;
};

TEST(BucketNameTest, Rules) {
  const NameCase cases[] = {
      {"abc", true},
      {"my-bucket", true},
      {"my.bucket.name", true},
      {"123", true},
      {"a1-b2.c3", true},
      {"xn-bucket", true},
      {"bucket-s3alia", true},
      {"192.168.5", true},
      {"1.2.3.4.5", true},
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},    // 63
      {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},  // 64
      {"ab", false},
      {"", false},
      {"MyBucket", false},
      {"my_bucket", false},
      {"my bucket", false},
      {"-bucket", false},
      {"bucket-", false},
      {".bucket", false},
      {"bucket.", false},
      {"my..bucket", false},
      {"192.168.5.4", false},
      {"10.0.0.1", false},
      {"xn--bucket", false},
      {"bucket-s3alias", false},
      {"sthree-bucket", false},
      {"bucket--ol-s3", false},
      {"bucket.mrap", false},
      {"bucket--x-s3", false},
      {"b\xc3\xa9u", false},
      {"buck/et", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsValidBucketName(c.name), c.valid) << "'" << c.name << "'";
  }
}

}  // namespace
}  // namespace strata::storage

namespace strata::storage {
namespace {

// A bucket bound to an upstream: versions become clean when pushed (FinishWriteback), a
// clean version's local copy can be evicted and restored, and a stale cached copy dropped,
// none of which queues write-back.
class BoundBucketTest : public ObjectStoreTest {
 protected:
  void SetUp() override {
    ObjectStoreTest::SetUp();
    ASSERT_TRUE(store_->CreateBucket(BucketName("bound"), "alice", "", "cold").ok());
  }
  metadata::ObjectRecord PutBound(const std::string& key, const std::string& body) {
    auto w = store_->BeginWrite(BucketName("bound"), {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(body).ok());
    metadata::ObjectRecord record;
    record.bucket = BucketName("bound");
    record.key = ObjectKey(key);
    auto put = store_->CommitWrite(std::move(w).value(), record);
    EXPECT_TRUE(put.ok());
    return *put;
  }
  // What the write-back worker records after a successful push.
  void MarkPushed(const metadata::ObjectRecord& record) { testing::MarkPushed(*index_, record); }

  metadata::ObjectRecord Current(const std::string& key) {
    auto record = store_->HeadObject(BucketName("bound"), ObjectKey(key));
    EXPECT_TRUE(record.ok());
    return *record;
  }
};

TEST_F(BoundBucketTest, BindingIsRecorded) {
  auto bucket = store_->GetBucket(BucketName("bound"));
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->upstream_tier, "cold");
  EXPECT_EQ(bucket->upstream_bucket, "bound");
}

TEST_F(BoundBucketTest, OnlyCleanVersionsAreEvictedAndRestoreBringsTheBytesBack) {
  const std::string body = RandomBytes(200'000, 7);
  auto record = PutBound("k", body);
  const auto files_before = FilesUnder(HotPath()).size();
  auto evicted = store_->EvictLocalCopy(record, "cold");
  ASSERT_TRUE(evicted.ok());
  EXPECT_FALSE(*evicted) << "a dirty version's only copy must stay";
  EXPECT_TRUE(store_->HasLocalCopy(Current("k")));

  MarkPushed(record);
  auto clean = Current("k");
  evicted = store_->EvictLocalCopy(clean, "cold");
  ASSERT_TRUE(evicted.ok());
  EXPECT_TRUE(*evicted);
  auto after = Current("k");
  EXPECT_FALSE(store_->HasLocalCopy(after));
  EXPECT_EQ(after.size, body.size());
  EXPECT_EQ(after.etag, record.etag);
  EXPECT_EQ(FilesUnder(HotPath()).size(), files_before - 1) << "the data file is freed";
  EXPECT_EQ(store_->OpenObject(after).error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u) << "eviction queues nothing";

  auto w = store_->BeginWrite(BucketName("bound"), {});
  ASSERT_TRUE((*w)->Append(body).ok());
  auto restored = store_->RestoreLocalCopy(std::move(w).value(), after);
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_TRUE(*restored);
  EXPECT_EQ(ReadAll(Current("k")), body);
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u);
}

TEST_F(BoundBucketTest, RestoreOfAReplacedVersionDropsTheBytes) {
  auto first = PutBound("k", "first version");
  MarkPushed(first);
  auto clean = Current("k");
  ASSERT_TRUE(*store_->EvictLocalCopy(clean, "cold"));
  PutBound("k", "second version");  // replaces it while the first is being read back
  const auto files = FilesUnder(HotPath()).size();
  auto w = store_->BeginWrite(BucketName("bound"), {});
  ASSERT_TRUE((*w)->Append("first version").ok());
  auto restored = store_->RestoreLocalCopy(std::move(w).value(), clean);
  ASSERT_TRUE(restored.ok());
  EXPECT_FALSE(*restored);
  EXPECT_EQ(FilesUnder(HotPath()).size(), files) << "no orphan left behind";
  EXPECT_EQ(ReadAll(Current("k")), "second version");
}

TEST_F(BoundBucketTest, StaleCachedCopyIsDroppedWithoutQueueing) {
  auto record = PutBound("k", "cached");
  MarkPushed(record);
  auto clean = Current("k");
  metadata::UpstreamCopy copy{
      clean.version_id, clean.etag, clean.last_modified_ms, {"cold", {{clean.etag, clean.size}}}};
  auto dropped = store_->DropCachedCopy(BucketName("bound"), ObjectKey("k"), copy);
  ASSERT_TRUE(dropped.ok());
  EXPECT_TRUE(*dropped);
  EXPECT_EQ(store_->HeadObject(BucketName("bound"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchKey);
  EXPECT_EQ(index_->WritebackBacklog().objects, 0u);

  // A dirty version is never dropped as a stale cache entry.
  auto dirty = PutBound("d", "dirty");
  metadata::UpstreamCopy not_clean{
      dirty.version_id, dirty.etag, dirty.last_modified_ms, {"cold", {{dirty.etag, dirty.size}}}};
  dropped = store_->DropCachedCopy(BucketName("bound"), ObjectKey("d"), not_clean);
  ASSERT_TRUE(dropped.ok());
  EXPECT_FALSE(*dropped);
}

}  // namespace
}  // namespace strata::storage
