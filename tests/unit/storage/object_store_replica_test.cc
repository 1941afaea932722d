// ObjectStore::ApplyReplica, a cluster replica's write (storage/replication.h): a primary's
// versions land on a second store byte-exact with the primary's records; copies the replica
// holds are reused; dropped versions free their bytes; a version whose bytes are missing or
// damaged changes nothing.
#include <gtest/gtest.h>

#include <vector>

#include "storage/multipart.h"
#include "storage/object_store.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"

namespace strata::storage {
namespace {

using testing::FilesUnder;
using testing::RandomBytes;
using testing::TempDir;

// One gateway's store: an index and a hot tier under its own directory.
struct Gateway {
  explicit Gateway(const std::filesystem::path& root) : root(root) {
    std::filesystem::create_directories(root);
    auto opened = metadata::Index::Open((root / "index").string(), {.sync = false});
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    index = std::move(opened).value();
    config.server.fsync = false;
    TierConfig hot;
    hot.name = "hot";
    hot.kind = TierKind::kLocal;
    hot.path = (root / "hot").string();
    config.tiers = {hot};
    config.storage_classes = {{"STANDARD", "hot"}};
    auto made = ObjectStore::Open(config, *index);
    EXPECT_TRUE(made.ok());
    store = std::move(made).value();
    EXPECT_TRUE(store->CreateBucket(BucketName("bkt"), "alice", "").ok());
    EXPECT_TRUE(store->SetBucketVersioning(BucketName("bkt"), "Enabled").ok());
  }
  std::size_t DataFiles() const { return FilesUnder(root / "hot" / "data").size(); }

  std::filesystem::path root;
  Config config;
  std::unique_ptr<metadata::Index> index;
  std::unique_ptr<ObjectStore> store;
};

class ReplicaStoreTest : public ::testing::Test {
 protected:
  metadata::ObjectRecord PutOnPrimary(const std::string& body) {
    auto write = primary_.store->BeginWrite(BucketName("bkt"), {});
    EXPECT_TRUE(write.ok());
    EXPECT_TRUE((*write)->Append(body).ok());
    metadata::ObjectRecord record;
    record.bucket = BucketName("bkt");
    record.key = ObjectKey("k");
    record.user_metadata = {{"epoch", "3"}};
    auto put = primary_.store->CommitWrite(std::move(write).value(), record);
    EXPECT_TRUE(put.ok());
    return *put;
  }
  // `record` with `body` as the bytes that came with it (nullopt: none came).
  ReplicaVersion Arrived(const metadata::ObjectRecord& record,
                         const std::optional<std::string>& body) {
    ReplicaVersion version{record, nullptr};
    if (body) {
      auto write = replica_.store->BeginWrite(BucketName("bkt"), {});
      EXPECT_TRUE(write.ok());
      EXPECT_TRUE((*write)->Append(*body).ok());
      version.bytes = std::move(write).value();
    }
    return version;
  }
  Result<std::vector<std::size_t>> Apply(std::vector<ReplicaVersion> versions) {
    return replica_.store->ApplyReplica(BucketName("bkt"), ObjectKey("k"), std::move(versions),
                                        std::nullopt);
  }
  std::string ReadOnReplica(const VersionId& id) {
    auto record = replica_.store->HeadVersion(BucketName("bkt"), ObjectKey("k"), id);
    EXPECT_TRUE(record.ok());
    if (!record.ok()) {
      return "";
    }
    auto reader = replica_.store->OpenObject(*record);
    EXPECT_TRUE(reader.ok());
    std::string out(record->size, '\0');
    // A read may stop at an extent's end (a multipart object's part): read on from there.
    for (std::size_t at = 0; at < out.size();) {
      auto n = (*reader)->Read(at, std::span<char>(out.data() + at, out.size() - at));
      EXPECT_TRUE(n.ok());
      if (!n.ok() || *n == 0) {
        return out.substr(0, at);
      }
      at += *n;
    }
    return out;
  }
  std::vector<std::string> ReplicaIds() {
    auto versions = replica_.index->KeyVersions(BucketName("bkt"), ObjectKey("k"), 100);
    EXPECT_TRUE(versions.ok());
    std::vector<std::string> ids;
    for (const auto& v : *versions) {
      ids.push_back(v.version_id.str());
    }
    return ids;
  }

  TempDir dir_;
  Gateway primary_{dir_.path() / "primary"};
  Gateway replica_{dir_.path() / "replica"};
};

TEST_F(ReplicaStoreTest, VersionsArriveByteExactAndCopiesAreReused) {
  const std::string one = RandomBytes(70'000, 1);
  const auto v1 = PutOnPrimary(one);
  auto applied = Apply([&] {
    std::vector<ReplicaVersion> list;
    list.push_back(Arrived(v1, one));
    return list;
  }());
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_TRUE(applied->empty());
  EXPECT_EQ(ReadOnReplica(v1.version_id), one);
  auto head = replica_.store->HeadObject(BucketName("bkt"), ObjectKey("k"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->version_id, v1.version_id);
  EXPECT_EQ(head->etag, v1.etag);
  EXPECT_EQ(head->last_modified_ms, v1.last_modified_ms);
  EXPECT_EQ(head->user_metadata, v1.user_metadata);

  // The next write: only the new version's bytes travel; the first keeps its copy.
  const std::string two = RandomBytes(1'000, 2);
  const auto v2 = PutOnPrimary(two);
  std::vector<ReplicaVersion> list;
  list.push_back(Arrived(v2, two));
  list.push_back(Arrived(v1, std::nullopt));
  applied = Apply(std::move(list));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_TRUE(applied->empty());
  EXPECT_EQ(ReplicaIds(), (std::vector<std::string>{v2.version_id.str(), v1.version_id.str()}));
  EXPECT_EQ(ReadOnReplica(v1.version_id), one);
  EXPECT_EQ(ReadOnReplica(v2.version_id), two);
  EXPECT_EQ(replica_.DataFiles(), 2u);

  // v1 deleted on the primary: dropped here with its bytes.
  list.clear();
  list.push_back(Arrived(v2, std::nullopt));
  ASSERT_TRUE(Apply(std::move(list)).ok());
  EXPECT_EQ(ReplicaIds(), (std::vector<std::string>{v2.version_id.str()}));
  EXPECT_EQ(replica_.DataFiles(), 1u);

  // The key deleted for good.
  ASSERT_TRUE(Apply({}).ok());
  EXPECT_TRUE(ReplicaIds().empty());
  EXPECT_EQ(replica_.DataFiles(), 0u);
}

TEST_F(ReplicaStoreTest, AVersionWithoutItsBytesIsNamedAndNothingChanges) {
  const std::string one = RandomBytes(5'000, 3);
  const auto v1 = PutOnPrimary(one);
  const auto v2 = PutOnPrimary(RandomBytes(10, 4));
  metadata::ObjectRecord marker = v2;
  marker.version_id = VersionId("marker");
  marker.delete_marker = true;
  marker.size = 0;
  marker.placements.clear();
  std::vector<ReplicaVersion> list;
  list.push_back(Arrived(marker, std::nullopt));  // needs no bytes
  list.push_back(Arrived(v2, std::nullopt));      // needs them: this replica has none
  list.push_back(Arrived(v1, one));
  auto applied = Apply(std::move(list));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(*applied, (std::vector<std::size_t>{1}));
  EXPECT_TRUE(ReplicaIds().empty());
  EXPECT_EQ(replica_.DataFiles(), 0u);  // v1's bytes that came were dropped
}

TEST_F(ReplicaStoreTest, DamagedBytesAreRefusedAndNothingChanges) {
  const std::string one = RandomBytes(5'000, 5);
  const auto v1 = PutOnPrimary(one);
  std::string damaged = one;
  damaged[1234] ^= 0x01;
  std::vector<ReplicaVersion> list;
  list.push_back(Arrived(v1, damaged));
  auto applied = Apply(std::move(list));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.error().code, ErrorCode::kCorruption);
  list.clear();
  list.push_back(Arrived(v1, one.substr(1)));  // short
  applied = Apply(std::move(list));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.error().code, ErrorCode::kCorruption);
  EXPECT_TRUE(ReplicaIds().empty());
  EXPECT_EQ(replica_.DataFiles(), 0u);
}

// An upload on the primary whose parts the replica also holds (as SyncUpload leaves them):
// the completed version is made there from those parts, no byte travelling again.
class ReplicaUploadTest : public ReplicaStoreTest {
 protected:
  // Part `number` with `body` on `gateway`'s copy of `upload`.
  metadata::PartRecord Part(Gateway& gateway, const metadata::UploadRecord& upload,
                            std::uint32_t number, const std::string& body) {
    auto write = gateway.store->BeginWrite(BucketName("bkt"), {});
    EXPECT_TRUE(write.ok());
    EXPECT_TRUE((*write)->Append(body).ok());
    auto part = gateway.store->CommitPart(std::move(write).value(), upload, number);
    EXPECT_TRUE(part.ok());
    return *part;
  }
  // An upload of two parts on the primary, its record copied to the replica with parts
  // made of `replica_bodies`; the primary completes it.
  metadata::ObjectRecord Completed(const std::vector<std::string>& bodies,
                                   const std::vector<std::string>& replica_bodies) {
    metadata::UploadRecord upload;
    upload.object.bucket = BucketName("bkt");
    upload.object.key = ObjectKey("k");
    auto created = primary_.store->CreateUpload(upload);
    EXPECT_TRUE(created.ok());
    upload = *created;
    EXPECT_TRUE(replica_.index->CreateUpload(upload).ok());
    CompletionRequest request;
    for (std::uint32_t n = 1; n <= bodies.size(); ++n) {
      request.parts.push_back({n, Part(primary_, upload, n, bodies[n - 1]).etag, {}});
      Part(replica_, upload, n, replica_bodies[n - 1]);
    }
    auto done = primary_.store->CompleteUpload(BucketName("bkt"), ObjectKey("k"), upload.upload_id,
                                               request);
    EXPECT_TRUE(done.ok()) << done.error().message;
    return *done;
  }
};

TEST_F(ReplicaUploadTest, TheCompletedVersionIsMadeFromThePartsHeld) {
  const std::vector<std::string> bodies{RandomBytes(5 << 20, 7), RandomBytes(1'000, 8)};
  const auto object = Completed(bodies, bodies);
  std::vector<ReplicaVersion> list;
  list.push_back(Arrived(object, std::nullopt));
  auto applied = Apply(std::move(list));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_TRUE(applied->empty());
  EXPECT_TRUE(ReadOnReplica(object.version_id) == bodies[0] + bodies[1]);
  EXPECT_EQ(replica_.DataFiles(), 4u);  // the upload's parts and the version's own names
  // The upload ends (the key sync's EndCompletedUpload): the version keeps its bytes.
  ASSERT_TRUE(
      replica_.store->AbortUpload(BucketName("bkt"), ObjectKey("k"), object.upload_id).ok());
  EXPECT_EQ(replica_.DataFiles(), 2u);
  EXPECT_TRUE(ReadOnReplica(object.version_id) == bodies[0] + bodies[1]);
}

TEST_F(ReplicaUploadTest, PartsThatDifferAreNotUsed) {
  const std::vector<std::string> bodies{RandomBytes(5 << 20, 9), RandomBytes(1'000, 10)};
  std::vector<std::string> other = bodies;
  other[1][10] ^= 0x01;  // same sizes, other bytes: the ETag and the CRC tell
  const auto object = Completed(bodies, other);
  std::vector<ReplicaVersion> list;
  list.push_back(Arrived(object, std::nullopt));
  auto applied = Apply(std::move(list));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(*applied, (std::vector<std::size_t>{0}));  // asked for
  EXPECT_TRUE(ReplicaIds().empty());
  EXPECT_EQ(replica_.DataFiles(), 2u);  // the parts only: no link left behind
}

}  // namespace
}  // namespace strata::storage
