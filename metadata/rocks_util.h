// Helpers the RocksIndex's source files share (private to metadata/).
#pragma once

#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/records.h"

namespace strata::metadata {

// The usage family's merge operator (rocks_index_usage.cc): operands are usage changes
// and add up.
std::shared_ptr<rocksdb::MergeOperator> NewUsageMergeOperator();

// A RocksDB status as an Error: kCorruption, kNoSpace, kUnavailable (retryable),
// kNotFound or kInternal; the message starts with `what`. An Incomplete status inside
// MemoryOnlyReads (a block not in memory) is noted on the scope.
Error FromStatus(const rocksdb::Status& s, std::string_view what);

// The options of a read on the calling thread: from memory only inside MemoryOnlyReads
// (metadata/read_inline.h).
rocksdb::ReadOptions ThreadReadOptions();

// Names the index can store: non-empty, without 0x00 (the key schema's separator).
Result<void> CheckBucketName(const BucketName& b);
Result<void> CheckObjectKey(const ObjectKey& k);

// The smallest string greater than every string that starts with `prefix`; `prefix`
// must contain a byte below 0xff (ours always hold a 0x00 terminator).
std::string PrefixSuccessor(std::string prefix);

bool StartsWith(const rocksdb::Slice& s, std::string_view prefix);

// Whether `object` has a placement on `tier` (on an upstream tier: it is clean).
bool HasCopyOn(const ObjectRecord& object, std::string_view tier);
inline std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

// An iterator bounded to the keys of `cf` that start with `prefix` (the upper bound lets
// RocksDB stop early and the prefix bloom filter skip files), positioned at `seek`.
class PrefixScan {
 public:
  PrefixScan(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const std::string& prefix,
             const std::string& seek);
  PrefixScan(const PrefixScan&) = delete;
  PrefixScan& operator=(const PrefixScan&) = delete;

  rocksdb::Iterator* operator->() const { return it_.get(); }

 private:
  std::string upper_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace strata::metadata
