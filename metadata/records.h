// The records the index stores, as plain values. Encoding lives in metadata/codec.*.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"

namespace strata::metadata {

struct BucketRecord {
  BucketName name;
  std::string owner;            // access key of the creator
  std::int64_t created_ms = 0;  // Unix epoch milliseconds
  std::string region;           // LocationConstraint ("" means us-east-1)
};

// Where a version's bytes live on a tier.
struct Placement {
  std::string tier;      // tier name from the config
  std::string location;  // tier-specific: for local tiers the data file id
};

struct ObjectRecord {
  BucketName bucket;
  ObjectKey key;
  VersionId version_id;  // "null" in unversioned buckets
  std::uint64_t size = 0;
  std::string etag;  // without quotes: hex MD5, or "<hex>-N" for multipart
  std::int64_t last_modified_ms = 0;
  std::string content_type;
  // Standard headers stored and returned as sent: cache-control, content-disposition,
  // content-encoding, content-language, expires. Names lower-case.
  std::vector<std::pair<std::string, std::string>> system_metadata;
  // x-amz-meta-* with the prefix stripped, names lower-case.
  std::vector<std::pair<std::string, std::string>> user_metadata;
  std::string storage_class = "STANDARD";
  // Checksums: algorithm name ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256") ->
  // base64 value, as S3 returns them.
  std::vector<std::pair<std::string, std::string>> checksums;
  std::vector<Placement> placements;
};

struct UserRecord {
  std::string access_key;
  std::string secret_key;
  bool admin = false;
  std::int64_t created_ms = 0;
};

}  // namespace strata::metadata
