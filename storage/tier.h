// Tier: one backend that stores object bytes under a location it names (a local
// directory, the upstream S3 store, the peer pool; MemTier and FaultyTier in tests). The
// tier engine picks a copy and talks to whichever Tier holds it; nothing above it branches
// on a tier's kind.
//
// Five methods, so that caching, metrics and fault injection are cheap decorators
// (tests/unit/storage/testing/faulty_tier.h is one), plus PutFrom, a whole copy from
// another tier's reader that a network tier can send without a spool (its default
// writes through BeginWrite). Everything that touches a disk or
// the network is a coroutine: each method returns an awaitable that does nothing until
// awaited. Arguments are taken by value (an awaitable runs after the caller's temporaries
// are gone); a string_view or span handed to Append or ReadAsync must stay valid until
// that call's awaitable completes.
//
// Threads: a Tier may be used from any thread at once (implementations say what they
// share); one TierWrite or TierReader is used by one coroutine at a time, and from the
// executor it was made on.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace strata::storage {

template <typename T>
using TierTask = boost::asio::awaitable<Result<T>>;

// What a committed write stored.
struct TierObject {
  std::string location;         // what Open and Remove take
  std::uint64_t size = 0;       // the bytes stored (check it: a short write shows here)
  std::uint64_t crc64nvme = 0;  // CRC64NVME of those bytes, as the tier computed them
  std::string etag;             // tiers that have one (upstream: S3's ETag, unquoted)
  std::string version_id;       // upstream, in a bucket that keeps versions
};

struct TierWriteOptions {
  // Where the object should live, for tiers whose caller names it (upstream:
  // "<bucket>/<key>", committed over what is there); tiers that name their own objects
  // (local: a random file id) ignore it, MemTier uses it when set.
  std::string location = {};
  // The size the caller will append, when known: a commit of any other size fails with
  // kIncompleteBody and stores nothing.
  std::optional<std::uint64_t> size = {};
  // Headers the object carries where the tier keeps them (upstream: Content-Type,
  // x-amz-meta-*, ...); others ignore them.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// A byte range of a stored object: `length` bytes from `offset`, or to the end.
struct TierRange {
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> length = {};
};

// What Open reads: a range of the object, pinned to one object where the tier can tell.
struct TierOpenOptions {
  TierRange range = {};
  // With an ETag (unquoted), the open and every read fail with kPreconditionFailed when
  // the object at the location has another; with a version id, a tier that keeps versions
  // (a versioned upstream bucket) reads that version. Tiers without ETags or versions
  // ignore them: there a location names one object that never changes.
  std::string if_match = {};
  std::string version_id = {};
};

// What the tier knows of the object a reader reads (the whole object, not the range).
struct TierObjectInfo {
  std::uint64_t size = 0;
  std::string etag = {};           // unquoted; tiers that have one (upstream)
  std::string version_id = {};     // upstream, in a bucket that keeps versions
  std::string last_modified = {};  // an HTTP date, where the tier keeps one (upstream)
  std::string content_type = {};
  // Other headers the object carries where the tier keeps them, names lower-case:
  // x-amz-meta-*, Cache-Control, Content-Disposition, ... (upstream).
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// An object being written. Nothing of it is visible (to Open, Usage, a listing) before
// Commit succeeds; destroying it uncommitted aborts it and leaves nothing behind.
class TierWrite {
 public:
  virtual ~TierWrite() = default;
  // Appends `data` at the end. A failed append fails the write: later appends and the
  // commit fail too (kInternal).
  virtual TierTask<void> Append(std::string_view data) = 0;
  // Makes the object durable and visible at once, and says where and what it is. On
  // failure nothing is visible. Once only.
  virtual TierTask<TierObject> Commit() = 0;
};

// A reader of a range of one stored object, as it was when opened: a remove or an
// overwrite of the location meanwhile never changes the bytes it returns (it fails the
// read at worst, kNotFound or kPreconditionFailed, on tiers that cannot hold them).
class TierReader {
 public:
  virtual ~TierReader() = default;
  // Bytes in the range (clamped to the object's end).
  virtual std::uint64_t size() const = 0;
  // The object read, as the tier described it when the reader was opened.
  virtual const TierObjectInfo& info() const = 0;
  // Reads from `offset` into the range into `buf`: between 1 and buf.size() bytes, 0 only
  // at or past the end of the range. Bytes that fail the tier's own check are never
  // returned: kCorruption (local: a chunk CRC64NVME mismatch).
  virtual TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) = 0;
};

// What a remove did, on tiers that keep versions.
struct TierRemoved {
  // Removing the object (no version named) in a versioned upstream bucket makes a delete
  // marker: its version id. Empty on every other tier.
  std::string marker_version_id;
};

struct TierUsage {
  std::uint64_t objects = 0;  // committed objects
  std::uint64_t bytes = 0;    // their sizes (object bytes, not what the backend adds)
};

class Tier {
 public:
  virtual ~Tier() = default;
  // The tier's name in the configuration ([[tiers]] name).
  virtual const std::string& name() const = 0;
  // A reader of options.range of the object at `location`. kNotFound when there is none;
  // kInvalidRange when the range starts past its end (an offset equal to the size is an
  // empty reader); kCorruption when the tier sees the object is damaged before reading;
  // kPreconditionFailed when it is not the object options pin.
  virtual TierTask<std::unique_ptr<TierReader>> Open(std::string location,
                                                     TierOpenOptions options) = 0;
  // A new write; kInvalidArgument when the options lack what the tier needs.
  virtual TierTask<std::unique_ptr<TierWrite>> BeginWrite(TierWriteOptions options) = 0;
  // Removes the object at `location`; succeeds when there is none. `version_id`, on a
  // tier that keeps versions (a versioned upstream bucket), removes that version only;
  // empty removes the object (there: makes a delete marker). Tiers without versions
  // ignore it. Readers already open keep their bytes where the tier can (local, MemTier).
  virtual TierTask<TierRemoved> Remove(std::string location, std::string version_id) = 0;
  // What the tier holds. A full scan on local and upstream tiers: for background work and
  // the admin API, never the request path.
  virtual TierTask<TierUsage> Usage() = 0;

  // Copies the whole of `source` (a reader of another tier, kept open for the call) to a
  // new object, as BeginWrite({location, size, headers}), Append and Commit would: the
  // default does exactly that, in 256 KiB reads. `crc64nvme`, when the caller knows it
  // (the index records it), must match the bytes read (kCorruption otherwise, nothing
  // committed). A network tier overrides it to send from the source directly, reading it
  // again where a retry needs to (storage/upstream/upstream_tier.h).
  virtual TierTask<TierObject> PutFrom(std::string location, std::shared_ptr<TierReader> source,
                                       std::vector<std::pair<std::string, std::string>> headers,
                                       std::optional<std::uint64_t> crc64nvme);

  // Drops what the tier keeps for the calling thread (a network tier's idle connections,
  // which belong to the thread's io_context). A worker with a thread of its own calls it
  // on that thread before the thread's io_context goes.
  virtual void ReleaseThread() {}
};

}  // namespace strata::storage
