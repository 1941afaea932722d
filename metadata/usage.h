// Usage counters: objects and bytes per (bucket, tier), kept in the index's `usage`
// column family and changed in the same WriteBatch as the records they count, so they
// stay exact through crashes (metadata/README.md, "Usage counters"). Pure helpers, safe
// from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "metadata/records.h"

namespace strata::metadata {

// A change of the counters of one (bucket, tier), or their value.
struct UsageCounts {
  std::int64_t objects = 0;
  std::int64_t bytes = 0;
  bool operator==(const UsageCounts&) const = default;
};

// What a batch changes, summed per (bucket, tier). A stored version counts one object and
// its bytes on every tier it has a placement on (a clean version is on the hot tier and
// the upstream); a delete marker counts nothing; an uploaded part counts its bytes and no
// object.
class UsageDelta {
 public:
  // sign: +1 for a record the batch writes, -1 for one it removes or replaces.
  void AddVersion(const BucketName& bucket, const ObjectRecord& version, int sign);
  void AddPart(const BucketName& bucket, const PartRecord& part, int sign);
  // (bucket, tier) -> change; entries that sum to zero are left out.
  std::map<std::pair<std::string, std::string>, UsageCounts> Changes() const;

 private:
  std::map<std::pair<std::string, std::string>, UsageCounts> changes_;
};

// usage CF row key: bucket 0x00 tier. The empty key marks counters that are complete
// (counted from the records once, when an index written before counters existed opens).
std::string UsageRowKey(std::string_view bucket, std::string_view tier);
struct ParsedUsageRow {
  std::string_view bucket;
  std::string_view tier;
};
std::optional<ParsedUsageRow> ParseUsageRowKey(std::string_view row);

// Values and merge operands: two little-endian int64s (objects, bytes). A merge adds.
std::string EncodeUsage(const UsageCounts& counts);
std::optional<UsageCounts> DecodeUsage(std::string_view bytes);

}  // namespace strata::metadata
