// Decoded bucket records by name, in front of RocksIndex's bucket rows: every request
// reads its bucket, and a record carrying a policy or CORS rules runs to kilobytes, so a
// RocksDB lookup and a decode per request cost a measurable share of a small GET. A hit
// is a copy whose texts are shared (common/shared_text.h), so it costs little more than
// the record's small fields.
//
// Coherence: RocksIndex calls Forget(name) after every write of a bucket row, write
// failed or not. A reader that missed takes a generation before its RocksDB read and
// Keeps what it read only when no Forget came meanwhile, so a record read before a
// write is never kept after it. Thread-safe; bounded in entries and bytes (past either,
// arbitrary entries go: a few misses, then warm again). Private to metadata/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/string_hash.h"
#include "metadata/records.h"

namespace strata::metadata::internal {

class BucketRecordCache {
 public:
  struct Limits {
    std::size_t max_entries = 4096;
    std::size_t max_bytes = 32u << 20;  // counted as the records' encoded sizes
  };

  BucketRecordCache() : BucketRecordCache(Limits{}) {}
  explicit BucketRecordCache(Limits limits) : limits_(limits) {}

  // A miss's ticket: hand it back to Keep.
  struct Miss {
    std::uint64_t generation = 0;
  };

  // The cached record (a copy), or the ticket for keeping what the caller reads next.
  std::optional<BucketRecord> Find(std::string_view name, Miss* miss);
  // Keeps `record` (encoded in `bytes` bytes) unless a Forget came since `miss`.
  void Keep(BucketRecord record, std::size_t bytes, Miss miss);
  // Drops `name`'s record: its row was written (or deleted).
  void Forget(std::string_view name);

  std::size_t entries() const;
  std::size_t bytes() const;

 private:
  struct Entry {
    std::shared_ptr<const BucketRecord> record;
    std::size_t bytes = 0;
  };

  const Limits limits_;
  mutable std::mutex mu_;
  std::uint64_t generation_ = 0;  // advanced by every Forget
  std::unordered_map<std::string, Entry, StringHash, std::equal_to<>> entries_;
  std::size_t bytes_ = 0;
};

}  // namespace strata::metadata::internal
