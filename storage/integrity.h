// Integrity of the local copies: process-wide counters for /metrics, and the seam through
// which a damaged local copy is repaired from another copy (today the upstream's).
// Any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::storage {

// Chunks (or chunk trailers) of local data files whose stored CRC64NVME did not match
// their bytes when read, since the process started. Each one was refused to the reader
// (kCorruption) and logged with the data file's path.
std::uint64_t ChecksumMismatches();

// Damaged local copies replaced by a verified copy from elsewhere (read repair and the
// scrubber), since the process started.
std::uint64_t IntegrityRepairs();
// Damaged local copies that could not be repaired because no other copy exists (a dirty
// version, not yet written back): each such read stays an error, logged as one.
std::uint64_t IntegrityUnrepairable();
// Repairs tried and failed for another reason (the upstream unreachable, or its bytes did
// not match the recorded CRC64NVME either): the local copy stays as it was.
std::uint64_t IntegrityRepairFailures();
// The CRC64NVME (base64) recorded for `record` when its bytes arrived, which every later
// read, repair and push checks against; "" when it has none.
std::string RecordedCrc64(const metadata::ObjectRecord& record);

void CountRepair();
void CountUnrepairable();
void CountRepairFailure();

// Replaces a damaged local copy with a verified one from another copy. Implemented by
// UpstreamRepairer (storage/upstream/repairer.h); the store's readers (ObjectStore::
// SetRepairer) and the scrubber call it.
class CopyRepairer {
 public:
  virtual ~CopyRepairer() = default;
  // The outcome, on the repairer's own thread: true when `record`'s local copy was
  // replaced by this call, false when there was nothing to replace (the version changed,
  // or another repair replaced it first: read the record again), or the error:
  // kNotFound when no other copy exists (a dirty version: unrepairable), kCorruption when
  // the other copy does not match the recorded CRC64NVME either, kUnavailable when it
  // cannot be reached. Failures are logged and counted by the repairer.
  using Done = std::function<void(const Result<bool>&)>;
  // `record`: the version as read from the index, with the damaged local placement.
  virtual void Repair(const metadata::ObjectRecord& record, Done done) = 0;
};

}  // namespace strata::storage
