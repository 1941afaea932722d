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

// multipart CF: bucket 0x00 key 0x00 upload_id, so uploads list in (key, upload id)
// order, and upload ids begin with their creation time, so a key's uploads list oldest
// first as in S3.
std::string UploadRowKey(std::string_view bucket, std::string_view key, std::string_view upload_id);

// parts CF: upload_id 0x00 BE32(part number): an upload's parts, in number order.
std::string PartPrefix(std::string_view upload_id);
std::string PartRowKey(std::string_view upload_id, std::uint32_t number);

// queues CF, write-back items: "w" 0x00 bucket 0x00 key, one row per key, in (bucket, key)
// order. Other queues (transitions, upstream deletes) will take other leading letters.
std::string WritebackRowKey(std::string_view bucket, std::string_view key);
inline constexpr std::string_view kWritebackRowPrefix{"w\0", 2};
struct ParsedWritebackRow {
  std::string_view bucket;
  std::string_view key;
};
std::optional<ParsedWritebackRow> ParseWritebackRowKey(std::string_view row);

// queues CF, lifecycle due rows: "l" 0x00 BE64(due ms) kind bucket 0x00 key [0x00 upload_id],
// kind 'k' (a key whose versions the rules act on) or 'u' (a multipart upload to abort), so
// the rows due first sort first and the worker reads exactly those. Values are empty.
// A row is a hint: the worker re-reads the key and the rules before it acts.
inline constexpr std::string_view kLifecycleRowPrefix{"l\0", 2};
struct LifecycleRow {
  std::int64_t due_ms = 0;
  std::string bucket;
  std::string key;
  std::string upload_id;  // empty: a key row
};
std::string LifecycleRowKey(const LifecycleRow& row);
std::optional<LifecycleRow> ParseLifecycleRowKey(std::string_view row);

// queues CF, lifecycle reseeds: "r" 0x00 bucket: a bucket whose rules changed, whose keys
// the worker must queue anew. Written in the same batch as the rules.
inline constexpr std::string_view kReseedRowPrefix{"r\0", 2};
std::string ReseedRowKey(std::string_view bucket);

}  // namespace strata::metadata
