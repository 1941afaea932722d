// RocksIndex's multipart uploads: records, listing, completion and abort, and the key
// lock that keeps a racing UploadPart from being lost.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "metadata/index.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

namespace fs = std::filesystem;

class RocksIndexMultipartTest : public testing::IndexFixture {
 protected:
  void SetUp() override {
    IndexFixture::SetUp();
    MakeBucket("bucket");
  }
  void MakeBucket(const std::string& name) {
    ASSERT_TRUE(index_->CreateBucket({BucketName(name), "alice", 1, ""}).ok());
  }

  static UploadRecord Upload(const std::string& key, const std::string& id,
                             const std::string& bucket = "bucket") {
    UploadRecord u;
    u.upload_id = UploadId(id);
    u.initiated_ms = 1000;
    u.owner = "alice";
    u.checksum_algorithm = "CRC32C";
    u.checksum_type = "FULL_OBJECT";
    u.object.bucket = BucketName(bucket);
    u.object.key = ObjectKey(key);
    u.object.content_type = "text/plain";
    u.object.user_metadata = {{"color", "green"}};
    return u;
  }
  static PartRecord Part(std::uint32_t number, const std::string& location) {
    PartRecord p;
    p.number = number;
    p.size = 100 + number;
    p.etag = "etag-" + location;
    p.last_modified_ms = 7;
    p.checksums = {{"CRC64NVME", "AAAAAAAAAAA="}};
    p.tier = "hot";
    p.location = location;
    return p;
  }
  static ObjectRecord Obj(const std::string& key, const std::string& etag) {
    ObjectRecord o;
    o.bucket = BucketName("bucket");
    o.key = ObjectKey(key);
    o.version_id = VersionId("null");
    o.etag = etag;
    o.placements = {{"hot", {{"obj-" + etag, 1}}}};
    return o;
  }
  // The object a completion makes from `parts`: their files as extents, in order.
  static ObjectRecord ObjectOf(const UploadRecord& upload, const std::vector<PartRecord>& parts) {
    ObjectRecord o = upload.object;
    o.version_id = VersionId("null");
    o.etag = "mpu-" + std::to_string(parts.size());
    o.placements = {{"hot", {}}};
    for (const auto& part : parts) {
      o.size += part.size;
      o.placements[0].extents.push_back({part.location, part.size});
    }
    return o;
  }

  // The completion storage hands the index: the parts `select` keeps of those stored now,
  // made into an object (ObjectOf), with the parts it was built from.
  using PartSelector = std::function<std::vector<PartRecord>(const std::vector<PartRecord>&)>;
  UploadCompletion CompletionOf(const std::string& key, const std::string& id,
                                const PartSelector& select) {
    UploadCompletion completion;
    completion.upload_id = UploadId(id);
    auto upload = index_->GetUpload(BucketName("bucket"), ObjectKey(key), UploadId(id));
    auto stored = index_->ListParts(UploadId(id), 0, 10000);
    EXPECT_TRUE(upload.ok() && stored.ok());
    if (upload.ok() && stored.ok()) {
      auto used = select(stored->parts);
      completion.object = ObjectOf(*upload, used);
      for (const auto& part : used) {
        completion.parts.push_back({part.number, part.tier, part.location});
      }
    }
    return completion;
  }
  static std::vector<PartRecord> AllOf(const std::vector<PartRecord>& parts) { return parts; }
  Result<CompletedUpload> Complete(const std::string& key, const std::string& id,
                                   const PartSelector& select = AllOf) {
    return index_->CompleteUpload(BucketName("bucket"), ObjectKey(key),
                                  CompletionOf(key, id, select));
  }

  void Create(const std::string& key, const std::string& id, const std::string& bucket = "bucket") {
    auto created = index_->CreateUpload(Upload(key, id, bucket));
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  void Put(const std::string& key, const std::string& id, std::uint32_t number,
           const std::string& location) {
    auto put =
        index_->PutPart(BucketName("bucket"), ObjectKey(key), UploadId(id), Part(number, location));
    ASSERT_TRUE(put.ok()) << put.error().message;
  }
  std::vector<std::uint32_t> PartNumbers(const std::string& id, std::uint32_t after = 0,
                                         std::size_t max = 1000, bool* truncated = nullptr) {
    auto page = index_->ListParts(UploadId(id), after, max);
    EXPECT_TRUE(page.ok());
    std::vector<std::uint32_t> numbers;
    if (page.ok()) {
      for (const auto& p : page->parts) {
        numbers.push_back(p.number);
      }
      if (truncated != nullptr) {
        *truncated = page->truncated;
      }
    }
    return numbers;
  }
  // "key/id" of each listed upload, in order.
  std::vector<std::string> Uploads(const std::string& prefix, const std::string& key_marker = "",
                                   const std::string& id_marker = "", std::size_t max = 1000,
                                   bool* truncated = nullptr) {
    auto page = index_->ListUploads(BucketName("bucket"), prefix, key_marker, id_marker, max);
    EXPECT_TRUE(page.ok());
    std::vector<std::string> out;
    if (page.ok()) {
      for (const auto& u : page->uploads) {
        out.push_back(u.object.key.str() + "/" + u.upload_id.str());
      }
      if (truncated != nullptr) {
        *truncated = page->truncated;
      }
    }
    return out;
  }
};

using Strings = std::vector<std::string>;
using Numbers = std::vector<std::uint32_t>;

TEST_F(RocksIndexMultipartTest, CreateNeedsTheBucket) {
  auto created = index_->CreateUpload(Upload("k", "u1", "nobucket"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(index_->GetUpload(BucketName("nobucket"), ObjectKey("k"), UploadId("u1")).error().code,
            ErrorCode::kNotFound);
}

TEST_F(RocksIndexMultipartTest, GetUploadRoundTripsAndIsScopedToItsKey) {
  Create("dir/k", "u1");
  auto got = index_->GetUpload(BucketName("bucket"), ObjectKey("dir/k"), UploadId("u1"));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->upload_id.str(), "u1");
  EXPECT_EQ(got->initiated_ms, 1000);
  EXPECT_EQ(got->owner, "alice");
  EXPECT_EQ(got->checksum_algorithm, "CRC32C");
  EXPECT_EQ(got->checksum_type, "FULL_OBJECT");
  EXPECT_EQ(got->object.key.str(), "dir/k");
  EXPECT_EQ(got->object.content_type, "text/plain");
  ASSERT_EQ(got->object.user_metadata.size(), 1u);
  EXPECT_EQ(got->object.user_metadata[0].second, "green");

  // An upload id only means something together with its key.
  EXPECT_EQ(index_->GetUpload(BucketName("bucket"), ObjectKey("dir"), UploadId("u1")).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(
      index_->GetUpload(BucketName("bucket"), ObjectKey("dir/k"), UploadId("u2")).error().code,
      ErrorCode::kNotFound);
  EXPECT_EQ(index_->GetUpload(BucketName("bucket"), ObjectKey("dir/k"), UploadId("")).error().code,
            ErrorCode::kNotFound);
  auto wrong_key =
      index_->PutPart(BucketName("bucket"), ObjectKey("other"), UploadId("u1"), Part(1, "p1"));
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_EQ(wrong_key.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(PartNumbers("u1").empty());
}

TEST_F(RocksIndexMultipartTest, PutPartReplacesAndReturnsTheOldPart) {
  Create("k", "u1");
  auto first = index_->PutPart(BucketName("bucket"), ObjectKey("k"), UploadId("u1"), Part(3, "a"));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->has_value());
  auto second = index_->PutPart(BucketName("bucket"), ObjectKey("k"), UploadId("u1"), Part(3, "b"));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->location, "a");
  EXPECT_EQ((*second)->etag, "etag-a");

  auto page = index_->ListParts(UploadId("u1"), 0, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->parts.size(), 1u);
  EXPECT_EQ(page->parts[0].number, 3u);
  EXPECT_EQ(page->parts[0].location, "b");
  EXPECT_EQ(page->parts[0].size, 103u);
  EXPECT_EQ(page->parts[0].tier, "hot");
  EXPECT_EQ(page->parts[0].checksums, Part(3, "b").checksums);
}

TEST_F(RocksIndexMultipartTest, PutPartAfterAbortOrCompleteIsNotFound) {
  Create("k", "aborted");
  Create("k", "completed");
  ASSERT_TRUE(index_->AbortUpload(BucketName("bucket"), ObjectKey("k"), UploadId("aborted")).ok());
  ASSERT_TRUE(Complete("k", "completed").ok());
  for (const char* id : {"aborted", "completed", "never-created"}) {
    auto put = index_->PutPart(BucketName("bucket"), ObjectKey("k"), UploadId(id), Part(1, "x"));
    ASSERT_FALSE(put.ok()) << id;
    EXPECT_EQ(put.error().code, ErrorCode::kNotFound) << id;
    EXPECT_TRUE(PartNumbers(id).empty()) << id;
  }
}

TEST_F(RocksIndexMultipartTest, ListPartsPagesInNumberOrder) {
  Create("k", "u1");
  // "u10" shares a prefix with "u1": its parts must not leak into u1's listing.
  Create("k", "u10");
  for (std::uint32_t n : {10000u, 5u, 1u, 300u, 2u, 8u}) {
    Put("k", "u1", n, "p" + std::to_string(n));
  }
  Put("k", "u10", 4, "other");

  EXPECT_EQ(PartNumbers("u1"), (Numbers{1, 2, 5, 8, 300, 10000}));
  EXPECT_EQ(PartNumbers("u10"), (Numbers{4}));
  bool truncated = false;
  EXPECT_EQ(PartNumbers("u1", 0, 2, &truncated), (Numbers{1, 2}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(PartNumbers("u1", 2, 2, &truncated), (Numbers{5, 8}));
  EXPECT_TRUE(truncated);
  // Exactly the rest: not truncated.
  EXPECT_EQ(PartNumbers("u1", 8, 2, &truncated), (Numbers{300, 10000}));
  EXPECT_FALSE(truncated);
  // `after` need not be a stored number.
  EXPECT_EQ(PartNumbers("u1", 3, 1, &truncated), (Numbers{5}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(PartNumbers("u1", 299, 1000, &truncated), (Numbers{300, 10000}));
  EXPECT_FALSE(truncated);
  EXPECT_TRUE(PartNumbers("u1", 10000).empty());
  EXPECT_TRUE(PartNumbers("u1", 0xffffffffu).empty());
  EXPECT_TRUE(PartNumbers("nope").empty());
}

TEST_F(RocksIndexMultipartTest, ListUploadsOrderPrefixAndMarkers) {
  MakeBucket("bucket2");
  Create("b", "0003");
  Create("a", "0002");
  Create("a/x", "0001");
  Create("a", "0001");
  Create("ab", "0009");
  Create("a", "elsewhere", "bucket2");

  // Key order, then upload id (ids start with the creation time: oldest first).
  EXPECT_EQ(Uploads(""), (Strings{"a/0001", "a/0002", "a/x/0001", "ab/0009", "b/0003"}));
  EXPECT_EQ(Uploads("a"), (Strings{"a/0001", "a/0002", "a/x/0001", "ab/0009"}));
  EXPECT_EQ(Uploads("a/"), (Strings{"a/x/0001"}));
  EXPECT_EQ(Uploads("c"), Strings{});

  // A key marker alone skips every upload of that key.
  EXPECT_EQ(Uploads("", "a"), (Strings{"a/x/0001", "ab/0009", "b/0003"}));
  // With an upload id marker, the key's later uploads come first.
  EXPECT_EQ(Uploads("", "a", "0001"), (Strings{"a/0002", "a/x/0001", "ab/0009", "b/0003"}));
  EXPECT_EQ(Uploads("", "a", "0002"), (Strings{"a/x/0001", "ab/0009", "b/0003"}));
  // A marker between keys, and markers combined with a prefix.
  EXPECT_EQ(Uploads("", "a/y"), (Strings{"ab/0009", "b/0003"}));
  EXPECT_EQ(Uploads("b", "a"), (Strings{"b/0003"}));
  EXPECT_EQ(Uploads("a", "b"), Strings{});

  bool truncated = false;
  EXPECT_EQ(Uploads("", "", "", 2, &truncated), (Strings{"a/0001", "a/0002"}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(Uploads("", "a", "0002", 3, &truncated), (Strings{"a/x/0001", "ab/0009", "b/0003"}));
  EXPECT_FALSE(truncated);

  auto missing = index_->ListUploads(BucketName("nobucket"), "", "", "", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNoSuchBucket);
}

TEST_F(RocksIndexMultipartTest, CompleteReplacesObjectAndReturnsUnusedParts) {
  ASSERT_TRUE(index_->PutObject(Obj("k", "old")).ok());
  Create("k", "u1");
  Put("k", "u1", 2, "p2");
  Put("k", "u1", 1, "p1");
  Put("k", "u1", 3, "p3");

  auto completion = CompletionOf("k", "u1", [](const std::vector<PartRecord>& parts) {
    // All the upload's parts, in number order.
    EXPECT_EQ(parts.size(), 3u);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      EXPECT_EQ(parts[i].number, i + 1);
    }
    // The completion names parts 1 and 3 only.
    return std::vector<PartRecord>{parts[0], parts[2]};
  });
  EXPECT_EQ(completion.object.content_type, "text/plain");
  auto done = index_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), completion);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->object.etag, "mpu-2");
  ASSERT_TRUE(done->replaced.has_value());
  EXPECT_EQ(done->replaced->etag, "old");
  ASSERT_EQ(done->unused_parts.size(), 1u);
  EXPECT_EQ(done->unused_parts[0].number, 2u);
  EXPECT_EQ(done->unused_parts[0].location, "p2");

  auto current = index_->GetObject(BucketName("bucket"), ObjectKey("k"));
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->etag, "mpu-2");
  EXPECT_EQ(current->size, 101u + 103u);
  ASSERT_EQ(current->placements.size(), 1u);
  ASSERT_EQ(current->placements[0].extents.size(), 2u);
  EXPECT_EQ(current->placements[0].extents[1].location, "p3");

  // The upload and every part row are gone.
  EXPECT_EQ(index_->GetUpload(BucketName("bucket"), ObjectKey("k"), UploadId("u1")).error().code,
            ErrorCode::kNotFound);
  EXPECT_TRUE(PartNumbers("u1").empty());
  EXPECT_TRUE(Uploads("").empty());
  // Completing twice: the upload is gone, and the current version stays.
  auto again = index_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), completion);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(index_->GetObject(BucketName("bucket"), ObjectKey("k"))->etag, "mpu-2");
}

TEST_F(RocksIndexMultipartTest, CompleteWithoutPreviousObjectReplacesNothing) {
  Create("fresh", "u1");
  Put("fresh", "u1", 1, "p1");
  auto done = Complete("fresh", "u1");
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(done->replaced.has_value());
  EXPECT_TRUE(done->unused_parts.empty());
}

TEST_F(RocksIndexMultipartTest, APartUploadedAgainSinceTheReadRefusesTheCompletion) {
  ASSERT_TRUE(index_->PutObject(Obj("k", "old")).ok());
  Create("k", "u1");
  Put("k", "u1", 1, "p1");
  Put("k", "u1", 2, "p2");
  auto completion = CompletionOf("k", "u1", AllOf);
  // Part 2 is uploaded again between the builder's read and its commit: the object would
  // point at p2, whose bytes the replacement frees.
  Put("k", "u1", 2, "p2-again");
  auto done = index_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), completion);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, ErrorCode::kInvalidPart);
  EXPECT_TRUE(done.error().retryable);

  // Nothing changed, and the upload still works: a fresh read completes it.
  EXPECT_EQ(index_->GetObject(BucketName("bucket"), ObjectKey("k"))->etag, "old");
  EXPECT_EQ(PartNumbers("u1"), (Numbers{1, 2}));
  auto fresh = Complete("k", "u1");
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_EQ(fresh->object.placements[0].extents[1].location, "p2-again");
  EXPECT_TRUE(fresh->unused_parts.empty());
}

TEST_F(RocksIndexMultipartTest, APartMissingSinceTheReadOrAFailedConditionChangesNothing) {
  ASSERT_TRUE(index_->PutObject(Obj("k", "old")).ok());
  Create("k", "u1");
  Put("k", "u1", 1, "p1");
  auto completion = CompletionOf("k", "u1", AllOf);
  // A part the completion names that was never stored (a forged or stale record).
  completion.parts.push_back({7, "hot", "p7"});
  auto missing = index_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), completion);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidPart);
  completion.parts.pop_back();

  WriteCondition absent;
  absent.if_absent = true;
  auto refused = index_->CompleteUpload(BucketName("bucket"), ObjectKey("k"), completion, absent);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPreconditionFailed);

  EXPECT_EQ(index_->GetObject(BucketName("bucket"), ObjectKey("k"))->etag, "old");
  EXPECT_TRUE(index_->GetUpload(BucketName("bucket"), ObjectKey("k"), UploadId("u1")).ok());
  EXPECT_EQ(PartNumbers("u1"), (Numbers{1}));
}

TEST_F(RocksIndexMultipartTest, AbortReturnsEveryPartOnce) {
  Create("k", "u1");
  Create("k", "u2");
  Put("k", "u1", 2, "p2");
  Put("k", "u1", 1, "p1");
  Put("k", "u1", 1, "p1b");  // replaced: the caller freed p1 already
  Put("k", "u2", 1, "q1");
  auto parts = index_->AbortUpload(BucketName("bucket"), ObjectKey("k"), UploadId("u1"));
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].location, "p1b");
  EXPECT_EQ((*parts)[1].location, "p2");

  EXPECT_EQ(index_->GetUpload(BucketName("bucket"), ObjectKey("k"), UploadId("u1")).error().code,
            ErrorCode::kNotFound);
  EXPECT_TRUE(PartNumbers("u1").empty());
  auto again = index_->AbortUpload(BucketName("bucket"), ObjectKey("k"), UploadId("u1"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
  // The other upload of the same key is untouched.
  EXPECT_EQ(PartNumbers("u2"), (Numbers{1}));
  EXPECT_EQ(Uploads(""), (Strings{"k/u2"}));
}

TEST_F(RocksIndexMultipartTest, DeleteBucketDiscardsUploadsAndReturnsTheirParts) {
  // "bucket" and "bucket2" share a prefix: deleting one must not touch the other's uploads.
  MakeBucket("bucket2");
  Create("a", "u1");
  Create("b", "u2");
  Create("c", "u3");  // no parts
  Put("a", "u1", 1, "a1");
  Put("a", "u1", 2, "a2");
  Put("b", "u2", 7, "b7");
  Create("a", "v1", "bucket2");
  ASSERT_TRUE(
      index_->PutPart(BucketName("bucket2"), ObjectKey("a"), UploadId("v1"), Part(1, "v")).ok());

  auto parts = index_->DeleteBucket(BucketName("bucket"));
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  std::set<std::string> locations;
  for (const auto& p : *parts) {
    locations.insert(p.location);
  }
  EXPECT_EQ(parts->size(), 3u);
  EXPECT_EQ(locations, (std::set<std::string>{"a1", "a2", "b7"}));
  EXPECT_TRUE(PartNumbers("u1").empty());
  EXPECT_TRUE(PartNumbers("u2").empty());

  // Recreating the bucket does not bring the uploads back.
  MakeBucket("bucket");
  EXPECT_TRUE(Uploads("").empty());
  EXPECT_EQ(index_->GetUpload(BucketName("bucket"), ObjectKey("a"), UploadId("u1")).error().code,
            ErrorCode::kNotFound);

  auto other = index_->ListUploads(BucketName("bucket2"), "", "", "", 10);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->uploads.size(), 1u);
  EXPECT_EQ(PartNumbers("v1"), (Numbers{1}));
}

TEST_F(RocksIndexMultipartTest, DeleteBucketWithObjectKeepsUploads) {
  Create("a", "u1");
  Put("a", "u1", 1, "a1");
  ASSERT_TRUE(index_->PutObject(Obj("x", "e")).ok());
  auto refused = index_->DeleteBucket(BucketName("bucket"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kBucketNotEmpty);
  EXPECT_EQ(PartNumbers("u1"), (Numbers{1}));
}

// Writers store parts while the main thread completes the upload. Every part write that
// succeeded must be accounted for, in the object or among the unused parts, and every one
// that failed must have failed with kNotFound: no part is stored and then forgotten.
TEST_F(RocksIndexMultipartTest, PartsRacingCompletionAreNeverLost) {
  for (int round = 0; round < 15; ++round) {
    const std::string id = "race" + std::to_string(round);
    Create("k", id);
    std::atomic<int> started{0};
    std::mutex mu;
    std::set<std::string> stored;  // locations whose PutPart succeeded
    int refused = 0;
    int other_errors = 0;
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&, t] {
        for (std::uint32_t i = 0; i < 30; ++i) {
          const std::uint32_t number = 1 + t * 30 + i;  // distinct numbers: no replacement
          const std::string location = id + "-" + std::to_string(number);
          auto put = index_->PutPart(BucketName("bucket"), ObjectKey("k"), UploadId(id),
                                     Part(number, location));
          ++started;
          std::lock_guard lock(mu);
          if (put.ok()) {
            stored.insert(location);
          } else if (put.error().code == ErrorCode::kNotFound) {
            ++refused;
          } else {
            ++other_errors;
          }
        }
      });
    }
    // Complete once some parts are in (spin, no sleep), while writers are still going.
    while (started.load() < 10 + round * 3) {
      std::this_thread::yield();
    }
    // Odd part numbers only, so both the object and unused_parts are exercised. Parts
    // stored after this read are removed as unused.
    auto done = Complete("k", id, [](const std::vector<PartRecord>& parts) {
      std::vector<PartRecord> odd;
      for (const auto& p : parts) {
        if (p.number % 2 == 1) {
          odd.push_back(p);
        }
      }
      return odd;
    });
    for (auto& w : writers) {
      w.join();
    }
    ASSERT_TRUE(done.ok()) << done.error().message;
    EXPECT_EQ(other_errors, 0);

    std::set<std::string> accounted;
    for (const auto& extent : done->object.placements[0].extents) {
      EXPECT_TRUE(accounted.insert(extent.location).second) << extent.location;
    }
    for (const auto& extent : done->object.placements[0].extents) {
      EXPECT_EQ(extent.location.back() % 2, 1) << extent.location;  // odd numbers only
    }
    // Even parts, and odd ones stored after the completion read the parts.
    for (const auto& part : done->unused_parts) {
      EXPECT_TRUE(accounted.insert(part.location).second) << part.location;
    }
    EXPECT_EQ(accounted, stored) << id;
    EXPECT_EQ(static_cast<int>(stored.size()) + refused, 120) << id;
    // Nothing was written for the upload after it completed.
    EXPECT_TRUE(PartNumbers(id).empty()) << id;
  }
}

}  // namespace
}  // namespace strata::metadata
