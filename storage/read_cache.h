// ReadCache: in a cluster, a gateway's copies of versions it read through another
// gateway, the key's owner (DESIGN.md "Cluster": a gateway caches bytes it served in its
// hot tier by version, asking the primary which version is current). A GET through a
// non-owner that holds a copy still goes to the primary, which answers the request as
// ever (authentication, conditions, range, headers) and, when the version it would serve
// is the one the copy holds (same tag), lets the non-owner send the bytes from its copy
// instead of streaming them over: reads stay strongly consistent, and only the bytes
// stay local. The gateway's forwarding (gateway/forward.h) drives it.
//
// A copy is one data file of a local tier of its own (storage/local/local_tier.h) under
// the hot tier's directory, with the chunk trailer every data file has, so its bytes are
// verified as they are read; nothing is fsynced (a cache), and the directory is emptied at
// open, since what it held is not known after a restart. It holds at most one version per
// key, the latest filled, and evicts the least recently used copies past its capacity or
// entry count. Its index is in memory: a few hundred bytes per copy. Thread-safe.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/ids.h"
#include "metadata/records.h"
#include "storage/object_store.h"

namespace strata::storage {

// The longest tag (ReadCacheVersion) a forwarded head may carry.
inline constexpr std::size_t kMaxReadCacheTag = 256;

// What names the bytes of a version wherever they are kept (the primary, a replica, a read
// cache). `tag`: its version id and a hash of what identifies one write's bytes (ETag, time
// in ms, size, CRC64NVME), so an overwrite of a "null" version shares a tag with the bytes
// it replaced only if it has their MD5, CRC64NVME and size and came in the same
// millisecond: the same bytes, short of a crafted collision of both digests, which only a
// writer of the key could send, and who may write any bytes there anyway; `crc`: their
// CRC64NVME, which a copy must match to be kept.
struct ReadCacheVersion {
  std::string tag;
  std::uint64_t crc = 0;
};

// nullopt for a version no gateway caches: a delete marker, an empty object, one without
// a recorded CRC64NVME, and versions of any class but STANDARD (STANDARD_IA and WARM live
// only in the warm pool, the cold classes only upstream).
std::optional<ReadCacheVersion> ReadCacheVersionOf(const metadata::ObjectRecord& record);

struct ReadCacheOptions {
  std::string root;             // its directory: emptied at open
  std::uint64_t capacity = 0;   // bytes of copies at most
  std::size_t max_entries = 1;  // copies at most
  // The largest copy admitted: larger versions are streamed and never kept, so one read
  // cannot empty the cache. 0: capacity / 8.
  std::uint64_t max_object = 0;
};

struct ReadCacheStats {
  std::uint64_t capacity = 0;
  std::uint64_t bytes = 0;    // held now
  std::uint64_t entries = 0;  // held now
  std::uint64_t hits = 0;     // reads served from a copy
  std::uint64_t fills = 0;    // copies kept
  std::uint64_t refused = 0;  // fills dropped: too large, cut short, or their CRC differed
  std::uint64_t evictions = 0;
  std::uint64_t errors = 0;  // copies found damaged or unreadable, and dropped
};

// A copy being written as its version streams through the gateway; dropped (nothing kept)
// unless committed.
class ReadCacheFill {
 public:
  virtual ~ReadCacheFill() = default;
  // Appends the next bytes. An error drops the fill (the stream goes on without it).
  virtual boost::asio::awaitable<Result<void>> Append(std::string_view bytes) = 0;
  // Keeps the copy when it holds the announced size and its CRC64NVME is `crc`; the copy
  // then replaces any other of its key. False when it is dropped.
  virtual bool Commit(std::uint64_t crc) = 0;
};

// A copy found for a read, open: the files stay readable whatever the cache does next.
struct ReadCacheHit {
  std::string tag;
  std::unique_ptr<ObjectReader> reader;
};

class ReadCache {
 public:
  virtual ~ReadCache() = default;

  // The copy of the key, opened (and made the most recently used); nullopt when there is
  // none or it cannot be opened (then it is dropped).
  virtual std::optional<ReadCacheHit> Find(const BucketName& bucket, const ObjectKey& key) = 0;
  // A read of the copy was served (counted); or it failed (the copy is dropped).
  virtual void Served(const BucketName& bucket, const ObjectKey& key, bool ok) = 0;
  // A fill of the key's version `tag`, `size` bytes; nullptr when not admitted (too large,
  // empty tag, or this copy already held or being filled).
  virtual std::unique_ptr<ReadCacheFill> BeginFill(const BucketName& bucket, const ObjectKey& key,
                                                   std::string_view tag, std::uint64_t size) = 0;
  virtual ReadCacheStats Stats() const = 0;
};

// The cache in `options.root` (created, or emptied when it exists).
Result<std::unique_ptr<ReadCache>> OpenReadCache(const ReadCacheOptions& options);

}  // namespace strata::storage
