// Index: strata's metadata in RocksDB (buckets, object versions, users, queues), opened
// as one database and seen through three interfaces split by what the cluster will do
// with each: BucketCatalog (buckets and users: kept in etcd), ObjectIndex (per-key
// versions, placements, uploads: partitioned and replicated) and NodeQueues (write-back,
// lifecycle, usage, maintenance scans: local to a node). Code that needs one part takes
// that interface; Index is the whole, for main and the engine that wires the parts.
//
// The only place `rocksdb::` appears. Every method is synchronous and thread-safe; the
// ones that write commit one WriteBatch (synced to the WAL when `sync` is set, so an
// acknowledged change survives a crash). Callers on an I/O thread run the writing
// methods on the blocking pool. Key schema: metadata/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/bucket_catalog.h"
#include "metadata/keys.h"
#include "metadata/node_queues.h"
#include "metadata/object_index.h"
#include "metadata/records.h"

namespace strata {
class Clock;  // common/clock.h
}  // namespace strata

namespace strata::metadata {

struct IndexOptions {
  bool sync = true;  // fsync the WAL on every committing write
  // The length of a lifecycle "day" (config [lifecycle] day), for the due times the index
  // queues when a key of a bucket with lifecycle rules changes.
  std::int64_t lifecycle_day_ms = 86'400'000;
  // RocksDB's block cache, shared by every column family (config server.index_cache).
  std::size_t block_cache_bytes = std::size_t{64} << 20;
  // The wall time queue items are stamped with (a write-back item's enqueued_ms); it
  // outlives the index. nullptr: the system clock.
  const Clock* clock = nullptr;
};

// The block cache: its size and the bytes of blocks it holds now.
struct IndexCacheStats {
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;
};

class Index : public BucketCatalog, public ObjectIndex, public NodeQueues {
 public:
  // Opens (creating if needed) the index under `dir`. Errors: kUnavailable when another
  // process holds it, kCorruption when RocksDB cannot read it.
  static Result<std::unique_ptr<Index>> Open(const std::string& dir, IndexOptions options);
  virtual ~Index() = default;

  // The block cache (IndexOptions::block_cache_bytes) and what it holds now; for metrics.
  virtual IndexCacheStats BlockCache() const = 0;
};

}  // namespace strata::metadata
