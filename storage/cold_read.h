// ColdRead: a GET or HEAD served from the upstream (the `s3` tier) because no local tier
// has the version: a key only the upstream has (read-through), or a clean version whose
// local copy was evicted. TierEngine::OpenColdRead makes one; the gateway answers the
// request's conditions and range from record() and sends the header, then Stream sends
// the bytes. Which copy serves them and whether they are cached on the hot tier is
// storage's decision (DESIGN.md "Upstream binding").
//
// One ColdRead is used by one coroutine, on the executor it was opened on.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "common/error.h"
#include "common/task_group.h"
#include "metadata/index.h"

namespace strata::storage {

// What the read asks for: it decides whether the bytes are cached and whether the read
// counts as a miss the prefetcher learns from.
enum class ColdReadKind {
  kHead,  // headers only: nothing is fetched, nothing learned
  // A GET of the whole object: concurrent whole reads of one key (and prefetches of it)
  // fetch it once, and the bytes are cached on the hot tier when admission lets them in.
  kWhole,
  kPart,  // a ranged GET: the bytes stream through, nothing is cached
};

// Where the object's bytes go, a block at a time; an error stops the read.
using ByteSink = std::function<boost::asio::awaitable<Result<void>>(std::string_view)>;

// An inclusive byte range of the object.
struct ColdRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

class ColdRead {
 public:
  virtual ~ColdRead() = default;
  // The version the upstream has, as its HEAD (or, evicted, the index) describes it: the
  // response header comes from this.
  virtual const metadata::ObjectRecord& record() const = 0;
  // Sends `range` of the object (all of it when nullopt) to `sink`, pinned to the ETag
  // record() has (kPreconditionFailed when the upstream object changed since). A kWhole
  // read also writes the bytes to the hot tier as they pass; the copy is committed after
  // the last byte, in `background` (so the answer does not wait for an fsync), and only
  // when its size and MD5 ETag are what the upstream said. `background` may be null: the
  // commit then runs before Stream returns. Once only.
  virtual boost::asio::awaitable<Result<void>> Stream(std::optional<ColdRange> range, ByteSink sink,
                                                      TaskGroup* background) = 0;
};

}  // namespace strata::storage
