// Test helpers for storage/ unit tests that run a real ObjectStore: a local tier's config,
// and an object written through BeginWrite/CommitWrite as the PUT path writes it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "common/config.h"
#include "metadata/records.h"
#include "storage/object_store.h"

namespace strata::storage::testing {

// A tier of kind local named `name`, with its directory under `root`.
inline TierConfig LocalTierConfig(const std::string& name, const std::filesystem::path& root) {
  TierConfig tier;
  tier.name = name;
  tier.kind = TierKind::kLocal;
  tier.path = (root / name).string();
  return tier;
}

// A hot local tier under `root` (STANDARD) and an `s3` tier "cold" whose endpoint is never
// contacted: for tests that give a worker a MemTier as the upstream. No fsync.
inline Config HotAndMemColdConfig(const std::filesystem::path& root) {
  Config config;
  config.server.fsync = false;
  TierConfig cold;
  cold.name = "cold";
  cold.kind = TierKind::kS3;
  cold.endpoint = "http://127.0.0.1:1";
  config.tiers = {LocalTierConfig("hot", root), cold};
  config.storage_classes = {{"STANDARD", "hot"}};
  return config;
}

// `body` as the current version of bucket/key; its record, or an empty one after failing
// the test.
inline metadata::ObjectRecord PutBytes(ObjectStore& store, std::string_view bucket,
                                       const std::string& key, std::string_view body) {
  auto write = store.BeginWrite(BucketName(std::string(bucket)), {});
  EXPECT_TRUE(write.ok()) << write.error().message;
  if (!write.ok()) {
    return {};
  }
  EXPECT_TRUE((*write)->Append(body).ok());
  metadata::ObjectRecord record;
  record.bucket = BucketName(std::string(bucket));
  record.key = ObjectKey(key);
  auto put = store.CommitWrite(std::move(write).value(), record);
  EXPECT_TRUE(put.ok()) << put.error().message;
  return put.ok() ? *put : metadata::ObjectRecord{};
}

}  // namespace strata::storage::testing
