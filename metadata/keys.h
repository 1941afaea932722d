// The row keys of the index's column families (schema: metadata/README.md). Pure
// functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::metadata {

// objects CF: bucket 0x00 key 0x00 BE64(~sequence). Bucket names never contain 0x00 and
// object keys containing 0x00 are refused by the index, so the layout is unambiguous and
// byte order is (bucket, key, newest version first).
std::string ObjectBucketPrefix(std::string_view bucket);                     // bucket 0x00
std::string ObjectKeyPrefix(std::string_view bucket, std::string_view key);  // ... key 0x00
std::string ObjectRowKey(std::string_view bucket, std::string_view key, std::uint64_t sequence);

struct ParsedObjectRow {
  std::string_view bucket;
  std::string_view key;
  std::uint64_t sequence = 0;
};
// Views into `row`; nullopt when `row` is not a well-formed object row key.
std::optional<ParsedObjectRow> ParseObjectRowKey(std::string_view row);

}  // namespace strata::metadata
