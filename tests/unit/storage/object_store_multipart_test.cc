// LocalObjectStore's CopyObject (hard links) and multipart uploads (parts as extents),
// checked down to the files under the tier's data/ directory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <random>
#include <set>

#include "storage/object_store.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;

using testing::FilesUnder;
using testing::TempDir;

const std::string* Find(const std::vector<std::pair<std::string, std::string>>& checksums,
                        const std::string& name) {
  for (const auto& [n, v] : checksums) {
    if (n == name) {
      return &v;
    }
  }
  return nullptr;
}

class StoreCopyMultipartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = metadata::Index::Open((dir_.path() / "index").string(), {.sync = false});
    ASSERT_TRUE(index.ok()) << index.error().message;
    index_ = std::move(index).value();
    config_.server.fsync = false;
    TierConfig hot;
    hot.name = "hot";
    hot.kind = TierKind::kLocal;
    hot.path = (dir_.path() / "hot").string();
    config_.tiers = {hot};
    config_.storage_classes = {{"STANDARD", "hot"}};
    auto store = ObjectStore::Open(config_, *index_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->CreateBucket(BucketName("bucket"), "alice", "").ok());
  }

  std::unique_ptr<PendingWrite> Write(const std::string& body,
                                      std::vector<ChecksumAlgorithm> checksums = {}) {
    auto w = store_->BeginWrite(BucketName("bucket"), checksums);
    EXPECT_TRUE(w.ok());
    for (std::size_t pos = 0; pos < body.size(); pos += 100'000) {
      EXPECT_TRUE((*w)->Append(std::string_view(body).substr(pos, 100'000)).ok());
    }
    return std::move(w).value();
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body,
                             std::vector<ChecksumAlgorithm> checksums = {}) {
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    auto put = store_->CommitWrite(Write(body, std::move(checksums)), record);
    EXPECT_TRUE(put.ok()) << put.error().message;
    return put.ok() ? *put : metadata::ObjectRecord{};
  }

  static metadata::ObjectRecord Target(const std::string& key) {
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    record.content_type = "application/x-copy";
    return record;
  }

  // [offset, offset + n) of the object, looping because one Read stops at an extent's end.
  std::string ReadRange(ObjectReader& reader, std::uint64_t offset, std::size_t n) {
    std::string out;
    std::vector<char> buf(n);
    while (out.size() < n) {
      auto got = reader.Read(offset + out.size(), std::span<char>(buf.data(), n - out.size()));
      EXPECT_TRUE(got.ok()) << got.error().message;
      if (!got.ok() || *got == 0) {
        break;
      }
      out.append(buf.data(), *got);
    }
    return out;
  }

  std::string ReadAll(const metadata::ObjectRecord& record, std::size_t chunk = 65536) {
    auto reader = store_->OpenObject(record);
    EXPECT_TRUE(reader.ok()) << reader.error().message;
    if (!reader.ok()) {
      return "";
    }
    std::string out;
    while (true) {
      std::string piece = ReadRange(**reader, out.size(), chunk);
      if (piece.empty()) {
        break;
      }
      out += piece;
    }
    return out;
  }

  std::string DataPath(const std::string& location) const {
    return (dir_.path() / "hot" / "data" / location.substr(0, 2) / location).string();
  }
  struct stat Stat(const std::string& location) const {
    struct stat st {};
    EXPECT_EQ(::stat(DataPath(location).c_str(), &st), 0) << location;
    return st;
  }
  static const std::string& OnlyLocation(const metadata::ObjectRecord& record) {
    EXPECT_EQ(record.placements.size(), 1u);
    EXPECT_EQ(record.placements.at(0).extents.size(), 1u);
    return record.placements.at(0).extents.at(0).location;
  }
  std::size_t DataFiles() const { return FilesUnder(dir_.path() / "hot" / "data").size(); }
  // Files being written: unnamed ones open here, or named ones in tmp/.
  std::size_t TempFiles() const {
    return FilesUnder(dir_.path() / "hot" / "tmp").size() +
           testing::UnnamedFilesOpenUnder(dir_.path() / "hot");
  }

  metadata::UploadRecord NewUpload(const std::string& key, const std::string& algorithm = "",
                                   const std::string& type = "") {
    metadata::UploadRecord upload;
    upload.owner = "alice";
    upload.checksum_algorithm = algorithm;
    upload.checksum_type = type;
    upload.object.bucket = BucketName("bucket");
    upload.object.key = ObjectKey(key);
    upload.object.content_type = "application/octet-stream";
    auto created = store_->CreateUpload(upload);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? *created : upload;
  }

  metadata::PartRecord CommitPart(const metadata::UploadRecord& upload, std::uint32_t number,
                                  const std::string& body) {
    std::vector<ChecksumAlgorithm> checksums;
    if (auto algorithm = ParseChecksumAlgorithm(upload.checksum_algorithm)) {
      checksums.push_back(*algorithm);
    }
    auto part = store_->CommitPart(Write(body, checksums), upload, number);
    EXPECT_TRUE(part.ok()) << part.error().message;
    return part.ok() ? *part : metadata::PartRecord{};
  }

  static CompletionRequest Naming(const std::vector<metadata::PartRecord>& parts) {
    CompletionRequest request;
    for (const auto& p : parts) {
      request.parts.push_back({p.number, p.etag, {}});
    }
    return request;
  }

  TempDir dir_;
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
};

// ---- CopyObject ----

TEST_F(StoreCopyMultipartTest, CopyObjectIsASecondNameForTheSameBytes) {
  const std::string body = RandomBytes(300'000, 1);
  auto source = Put("src", body, {ChecksumAlgorithm::kSha256});
  auto copy = store_->CopyObject(source, Target("dst"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_EQ(copy->key.str(), "dst");
  EXPECT_EQ(copy->content_type, "application/x-copy");
  EXPECT_EQ(copy->size, body.size());
  EXPECT_EQ(copy->etag, Md5Hex(body));
  EXPECT_EQ(copy->checksums, source.checksums);
  EXPECT_EQ(copy->version_id.str(), "null");

  const std::string& from = OnlyLocation(source);
  const std::string& to = OnlyLocation(*copy);
  EXPECT_NE(from, to);
  EXPECT_EQ(Stat(from).st_nlink, 2u);
  EXPECT_EQ(Stat(from).st_ino, Stat(to).st_ino);
  EXPECT_EQ(DataFiles(), 2u);

  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("dst"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(OnlyLocation(*head), to);
  EXPECT_EQ(ReadAll(*head), body);
}

TEST_F(StoreCopyMultipartTest, DeletingTheSourceKeepsTheCopy) {
  const std::string body = RandomBytes(50'000, 2);
  auto source = Put("src", body);
  auto copy = store_->CopyObject(source, Target("dst"));
  ASSERT_TRUE(copy.ok());
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("src")).ok());
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(Stat(OnlyLocation(*copy)).st_nlink, 1u);
  EXPECT_EQ(ReadAll(*copy), body);
}

TEST_F(StoreCopyMultipartTest, OverwritingTheCopyKeepsTheSource) {
  const std::string body = RandomBytes(50'000, 3);
  auto source = Put("src", body);
  ASSERT_TRUE(store_->CopyObject(source, Target("dst")).ok());
  Put("dst", "new contents");
  EXPECT_EQ(DataFiles(), 2u);
  EXPECT_EQ(Stat(OnlyLocation(source)).st_nlink, 1u);
  EXPECT_EQ(ReadAll(source), body);
  auto dst = store_->HeadObject(BucketName("bucket"), ObjectKey("dst"));
  ASSERT_TRUE(dst.ok());
  EXPECT_EQ(ReadAll(*dst), "new contents");
}

TEST_F(StoreCopyMultipartTest, CopyOntoItselfReplacesMetadataAndKeepsBytes) {
  const std::string body = RandomBytes(10'000, 4);
  auto source = Put("same", body);
  auto copy = store_->CopyObject(source, Target("same"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  // The old name is freed, the new one holds the bytes.
  EXPECT_EQ(DataFiles(), 1u);
  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("same"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->content_type, "application/x-copy");
  EXPECT_EQ(ReadAll(*head), body);
}

TEST_F(StoreCopyMultipartTest, CopyOfAVanishedSourceIsNoSuchKey) {
  auto source = Put("src", RandomBytes(1000, 5));
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("src")).ok());
  ASSERT_EQ(DataFiles(), 0u);
  auto copy = store_->CopyObject(source, Target("dst"));  // the stale record
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("dst")).error().code,
            ErrorCode::kNoSuchKey);
}

// ---- multipart ----

TEST_F(StoreCopyMultipartTest, CreateUploadFillsIdAndTimeAndNeedsTheBucket) {
  auto a = NewUpload("k");
  auto b = NewUpload("k");
  EXPECT_FALSE(a.upload_id.empty());
  EXPECT_NE(a.upload_id, b.upload_id);
  EXPECT_GT(a.initiated_ms, 0);
  auto got = store_->GetUpload(BucketName("bucket"), ObjectKey("k"), a.upload_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->initiated_ms, a.initiated_ms);
  EXPECT_EQ(store_->GetUpload(BucketName("bucket"), ObjectKey("k"), UploadId("nope")).error().code,
            ErrorCode::kNoSuchUpload);

  metadata::UploadRecord orphan;
  orphan.object.bucket = BucketName("nobucket");
  orphan.object.key = ObjectKey("k");
  auto refused = store_->CreateUpload(orphan);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNoSuchBucket);
}

TEST_F(StoreCopyMultipartTest, CompletedObjectReadsByteExactAcrossExtents) {
  // Part 1 uploaded; part 2 a whole-object copy (linked); part 3 a ranged copy (copied
  // bytes); part 4 uploaded but left out of the completion.
  const std::string body1 = RandomBytes(kMinPartSize + 13, 10);
  const std::string body2 = RandomBytes(kMinPartSize, 11);
  const std::string ranged_source = RandomBytes(40'000, 12);
  const std::string body3 = ranged_source.substr(1000, 7777);
  auto source2 = Put("whole-src", body2, {ChecksumAlgorithm::kCrc32});
  auto source3 = Put("range-src", ranged_source);
  auto upload = NewUpload("mpu", "CRC32", "FULL_OBJECT");

  auto part1 = CommitPart(upload, 1, body1);
  EXPECT_EQ(part1.etag, Md5Hex(body1));
  EXPECT_EQ(part1.size, body1.size());
  EXPECT_EQ(*Find(part1.checksums, "CRC32"), ChecksumOf(ChecksumAlgorithm::kCrc32, body1));

  auto part2 = store_->CopyPart(source2, 0, body2.size(), upload, 2);
  ASSERT_TRUE(part2.ok()) << part2.error().message;
  EXPECT_EQ(part2->etag, source2.etag);
  EXPECT_EQ(Stat(OnlyLocation(source2)).st_ino, Stat(part2->location).st_ino);
  EXPECT_EQ(Stat(part2->location).st_nlink, 2u);

  auto part3 = store_->CopyPart(source3, 1000, 7777, upload, 3);
  ASSERT_TRUE(part3.ok()) << part3.error().message;
  EXPECT_EQ(part3->size, 7777u);
  EXPECT_EQ(part3->etag, Md5Hex(body3));
  EXPECT_EQ(*Find(part3->checksums, "CRC32"), ChecksumOf(ChecksumAlgorithm::kCrc32, body3));
  EXPECT_EQ(Stat(part3->location).st_nlink, 1u);

  auto part4 = CommitPart(upload, 4, "left out");
  // Sources 2, plus parts 4 (part 2 is a second name of a source file).
  EXPECT_EQ(DataFiles(), 6u);

  auto listed = store_->ListParts(upload, 0, 100);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->parts.size(), 4u);

  CompletionRequest request = Naming({part1, *part2, *part3});
  const std::string all = body1 + body2 + body3;
  request.object_size = all.size();
  request.object_checksum = {ChecksumAlgorithm::kCrc32, ChecksumOf(ChecksumAlgorithm::kCrc32, all)};
  auto object =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("mpu"), upload.upload_id, request);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_EQ(object->size, all.size());
  EXPECT_EQ(object->checksum_type, "FULL_OBJECT");
  EXPECT_EQ(*Find(object->checksums, "CRC64NVME"), ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, all));
  ASSERT_EQ(object->placements.size(), 1u);
  ASSERT_EQ(object->placements[0].extents.size(), 3u);
  EXPECT_EQ(object->placements[0].extents[1].location, part2->location);

  // Part 4's file is freed; nothing was copied to make the object.
  EXPECT_EQ(DataFiles(), 5u);
  EXPECT_EQ(::access(DataPath(part4.location).c_str(), F_OK), -1);
  EXPECT_EQ(
      store_->GetUpload(BucketName("bucket"), ObjectKey("mpu"), upload.upload_id).error().code,
      ErrorCode::kNoSuchUpload);

  auto head = store_->HeadObject(BucketName("bucket"), ObjectKey("mpu"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, object->etag);
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{777}, std::size_t{(5 << 20) + 1}}) {
    EXPECT_TRUE(ReadAll(*head, chunk) == all) << "chunk " << chunk;
  }

  auto reader = store_->OpenObject(*head);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), all.size());
  // One Read stops at the end of its extent...
  std::vector<char> buf(100);
  auto short_read = (*reader)->Read(body1.size() - 10, buf);
  ASSERT_TRUE(short_read.ok());
  EXPECT_EQ(*short_read, 10u);
  EXPECT_EQ(std::string(buf.data(), 10), body1.substr(body1.size() - 10));
  auto at_end = (*reader)->Read(all.size(), buf);
  ASSERT_TRUE(at_end.ok());
  EXPECT_EQ(*at_end, 0u);
  // ...and looping reads any range exactly, including ones spanning all three extents.
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t offset = rng() % all.size();
    const std::size_t n = static_cast<std::size_t>(
        std::min<std::uint64_t>(all.size() - offset, rng() % (i % 10 == 0 ? all.size() : 20000)));
    ASSERT_TRUE(ReadRange(**reader, offset, n) == all.substr(offset, n))
        << "offset " << offset << " length " << n;
  }

  // The object outlives the source its part 2 was linked from.
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("whole-src")).ok());
  EXPECT_EQ(DataFiles(), 4u);
  EXPECT_TRUE(ReadAll(*head) == all);
  // Deleting the object frees its three extents.
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("mpu")).ok());
  EXPECT_EQ(DataFiles(), 1u);
}

TEST_F(StoreCopyMultipartTest, WholeCopyLackingTheUploadsChecksumIsCopiedNotLinked) {
  const std::string body = RandomBytes(20'000, 20);
  auto source = Put("src", body);  // no SHA256
  auto upload = NewUpload("mpu", "SHA256");
  auto part = store_->CopyPart(source, 0, body.size(), upload, 1);
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(Stat(OnlyLocation(source)).st_nlink, 1u);
  EXPECT_EQ(*Find(part->checksums, "SHA256"), ChecksumOf(ChecksumAlgorithm::kSha256, body));
  EXPECT_EQ(part->etag, Md5Hex(body));
}

TEST_F(StoreCopyMultipartTest, CopyOfAMultipartObjectKeepsItsPartsAndExtents) {
  const std::string body1 = RandomBytes(kMinPartSize, 30);
  const std::string body2 = RandomBytes(4321, 31);
  auto upload = NewUpload("mpu");
  auto p1 = CommitPart(upload, 1, body1);
  auto p2 = CommitPart(upload, 2, body2);
  auto object = store_->CompleteUpload(BucketName("bucket"), ObjectKey("mpu"), upload.upload_id,
                                       Naming({p1, p2}));
  ASSERT_TRUE(object.ok()) << object.error().message;
  auto copy = store_->CopyObject(*object, Target("copy"));
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_EQ(copy->etag, object->etag);
  ASSERT_EQ(copy->parts.size(), 2u);
  EXPECT_EQ(copy->parts[1].size, 4321u);
  ASSERT_EQ(copy->placements.size(), 1u);
  ASSERT_EQ(copy->placements[0].extents.size(), 2u);
  EXPECT_EQ(DataFiles(), 4u);
  ASSERT_TRUE(store_->DeleteObject(BucketName("bucket"), ObjectKey("mpu")).ok());
  EXPECT_TRUE(ReadAll(*copy) == body1 + body2);
}

TEST_F(StoreCopyMultipartTest, CopyMissingALaterExtentLeavesNoLinks) {
  auto upload = NewUpload("mpu");
  auto p1 = CommitPart(upload, 1, RandomBytes(kMinPartSize, 40));
  auto p2 = CommitPart(upload, 2, "tail");
  auto object = store_->CompleteUpload(BucketName("bucket"), ObjectKey("mpu"), upload.upload_id,
                                       Naming({p1, p2}));
  ASSERT_TRUE(object.ok()) << object.error().message;
  // The second extent vanishes (as when the source is overwritten mid-copy): the link
  // already made for the first must be undone.
  ASSERT_EQ(::unlink(DataPath(p2.location).c_str()), 0);
  ASSERT_EQ(DataFiles(), 1u);
  auto copy = store_->CopyObject(*object, Target("copy"));
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(Stat(p1.location).st_nlink, 1u);
}

TEST_F(StoreCopyMultipartTest, ReplacingAPartFreesTheOldFile) {
  auto upload = NewUpload("k");
  auto first = CommitPart(upload, 1, "first");
  auto second = CommitPart(upload, 1, "second");
  EXPECT_NE(first.location, second.location);
  EXPECT_EQ(DataFiles(), 1u);
  auto listed = store_->ListParts(upload, 0, 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->parts.size(), 1u);
  EXPECT_EQ(listed->parts[0].etag, Md5Hex("second"));
}

TEST_F(StoreCopyMultipartTest, AbortFreesEveryPartFile) {
  auto upload = NewUpload("k");
  CommitPart(upload, 1, RandomBytes(1000, 50));
  CommitPart(upload, 2, RandomBytes(2000, 51));
  auto source = Put("src", "copied whole");
  ASSERT_TRUE(store_->CopyPart(source, 0, source.size, upload, 3).ok());
  EXPECT_EQ(DataFiles(), 4u);

  ASSERT_TRUE(store_->AbortUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id).ok());
  EXPECT_EQ(DataFiles(), 1u);  // the copy source only
  EXPECT_EQ(ReadAll(source), "copied whole");
  EXPECT_EQ(
      store_->AbortUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id).error().code,
      ErrorCode::kNoSuchUpload);

  // A part arriving after the abort is refused and leaves no file behind.
  auto late = store_->CommitPart(Write("late"), upload, 4);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kNoSuchUpload);
  auto late_copy = store_->CopyPart(source, 0, source.size, upload, 5);
  ASSERT_FALSE(late_copy.ok());
  EXPECT_EQ(late_copy.error().code, ErrorCode::kNoSuchUpload);
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(TempFiles(), 0u);
  EXPECT_EQ(Stat(OnlyLocation(source)).st_nlink, 1u);
}

TEST_F(StoreCopyMultipartTest, RefusedCompletionKeepsUploadAndFiles) {
  auto upload = NewUpload("k");
  auto p1 = CommitPart(upload, 1, "small");
  auto p2 = CommitPart(upload, 2, "also small");
  CompletionRequest wrong_etag = Naming({p1});
  wrong_etag.parts[0].etag = Md5Hex("other");
  auto refused =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, wrong_etag);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidPart);
  auto too_small = store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id,
                                          Naming({p1, p2}));
  ASSERT_FALSE(too_small.ok());
  EXPECT_EQ(too_small.error().code, ErrorCode::kEntityTooSmall);
  EXPECT_EQ(DataFiles(), 2u);
  EXPECT_TRUE(store_->GetUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id).ok());
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("k")).error().code,
            ErrorCode::kNoSuchKey);

  // Completing with the last part alone works and frees the other.
  auto done =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, Naming({p2}));
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(ReadAll(*done), "also small");
  // The same completion again (a retry whose first answer was lost) answers the same
  // object and changes nothing; another parts list finds no upload.
  auto again =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, Naming({p2}));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->etag, done->etag);
  EXPECT_EQ(again->version_id, done->version_id);
  EXPECT_EQ(again->last_modified_ms, done->last_modified_ms);
  EXPECT_EQ(DataFiles(), 1u);
  auto gone =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, Naming({p1}));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchUpload);
  auto elsewhere = store_->CompleteUpload(BucketName("bucket"), ObjectKey("other"),
                                          upload.upload_id, Naming({p2}));
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kNoSuchUpload);
}

TEST_F(StoreCopyMultipartTest, CompletionConditionsLookAtTheCurrentVersion) {
  auto old = Put("k", "the old object");
  auto upload = NewUpload("k");
  auto p1 = CommitPart(upload, 1, "new");
  CompletionRequest absent = Naming({p1});
  absent.condition.if_absent = true;
  auto refused =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, absent);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPreconditionFailed);
  CompletionRequest other_etag = Naming({p1});
  other_etag.condition.if_etag = Md5Hex("something else");
  refused =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, other_etag);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPreconditionFailed);
  // Refusals changed nothing: the old object and the upload's part are both still there.
  EXPECT_EQ(DataFiles(), 2u);
  EXPECT_EQ(store_->HeadObject(BucketName("bucket"), ObjectKey("k"))->etag, old.etag);
  CompletionRequest same_etag = Naming({p1});
  same_etag.condition.if_etag = old.etag;
  auto done =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, same_etag);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(ReadAll(*done), "new");
  EXPECT_EQ(done->upload_id, upload.upload_id);
  // Its retry still succeeds: the condition held when it first ran.
  auto again =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, same_etag);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->etag, done->etag);
}

TEST_F(StoreCopyMultipartTest, CompletionOverwritingAnObjectFreesItsBytes) {
  Put("k", "the old object");
  ASSERT_EQ(DataFiles(), 1u);
  auto upload = NewUpload("k");
  auto p1 = CommitPart(upload, 1, "new");
  auto done =
      store_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), upload.upload_id, Naming({p1}));
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(DataFiles(), 1u);
  EXPECT_EQ(ReadAll(*done), "new");
}

}  // namespace
}  // namespace strata::storage
