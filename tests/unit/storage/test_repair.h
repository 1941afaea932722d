// What the repair tests share: a store on a temporary directory whose copies the test
// damages, and FakeRepairer, the CopyRepairer that plays the upstream: it holds the bytes
// each key was written with and repairs by writing them again, checked against the
// recorded CRC64NVME as the fetcher checks the upstream's copy.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "storage/checksum.h"
#include "storage/integrity.h"
#include "storage/object_store.h"
#include "tests/unit/storage/test_dir.h"

namespace strata::storage::testing {

class FakeRepairer final : public CopyRepairer {
 public:
  explicit FakeRepairer(ObjectStore& store) : store_(store) {}

  void Repair(const metadata::ObjectRecord& record, Done done) override {
    ++calls;
    const auto found = originals.find(record.key.str());
    if (found == originals.end()) {
      done(Error(ErrorCode::kNotFound, "no other copy"));
      return;
    }
    std::string recorded;
    for (const auto& [name, value] : record.checksums) {
      if (name == "CRC64NVME") {
        recorded = value;
      }
    }
    auto digest = MakeChecksummer(ChecksumAlgorithm::kCrc64Nvme);
    digest->Update(found->second);
    if (digest->FinalBase64() != recorded) {
      done(Error(ErrorCode::kCorruption, "the other copy does not match the record either"));
      return;
    }
    auto write = store_.BeginWrite(record.bucket, {});
    if (!write.ok()) {
      done(std::move(write).error());
      return;
    }
    auto appended = (*write)->Append(found->second);
    if (!appended.ok()) {
      done(std::move(appended).error());
      return;
    }
    done(store_.ReplaceLocalCopy(std::move(write).value(), record));
  }

  std::map<std::string, std::string> originals;  // key -> its bytes: "the upstream"
  int calls = 0;

 private:
  ObjectStore& store_;
};

class RepairTest : public ::testing::Test {
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
    repairer_ = std::make_unique<FakeRepairer>(*store_);
  }

  metadata::ObjectRecord Put(const std::string& key, const std::string& body, bool clean = true) {
    auto w = store_->BeginWrite(BucketName("bucket"), {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(body).ok());
    metadata::ObjectRecord record;
    record.bucket = BucketName("bucket");
    record.key = ObjectKey(key);
    auto committed = store_->CommitWrite(std::move(w).value(), record);
    EXPECT_TRUE(committed.ok()) << committed.error().message;
    if (clean) {
      repairer_->originals[key] = body;
    }
    return *committed;
  }

  metadata::ObjectRecord Head(const std::string& key) {
    auto record = store_->HeadObject(BucketName("bucket"), ObjectKey(key));
    EXPECT_TRUE(record.ok());
    return *record;
  }

  std::filesystem::path DataFile(const metadata::ObjectRecord& record) const {
    const std::string& id = record.placements.front().extents.front().location;
    return dir_.path() / "hot" / "data" / id.substr(0, 2) / id;
  }

  // Flips every bit of the byte at `offset` of the record's data file.
  void Flip(const metadata::ObjectRecord& record, std::uint64_t offset) const {
    std::fstream f(DataFile(record), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(~c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
  }

  TempDir dir_;
  Config config_;
  std::unique_ptr<metadata::Index> index_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<FakeRepairer> repairer_;
};

}  // namespace strata::storage::testing
