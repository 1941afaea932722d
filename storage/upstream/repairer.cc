#include "storage/upstream/repairer.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace strata::storage {
namespace {

void Unrepairable(const metadata::ObjectRecord& record, const CopyRepairer::Done& done) {
  CountUnrepairable();
  spdlog::error(
      "storage: UNREPAIRABLE: {}/{} (version {}, {} bytes) has a damaged local copy and no "
      "other copy (not written back yet); reads of it fail until it is overwritten or deleted",
      record.bucket.str(), record.key.str(), record.version_id.str(), record.size);
  done(Error(ErrorCode::kNotFound, "the only copy of " + record.key.str() + " is damaged"));
}

}  // namespace

void UpstreamRepairer::Repair(const metadata::ObjectRecord& record, Done done) {
  if (metadata::PlacementOn(record, upstream_tier_) == nullptr) {
    Unrepairable(record, done);
    return;
  }
  spdlog::warn("storage: repairing {}/{} (version {}): fetching the upstream's copy",
               record.bucket.str(), record.key.str(), record.version_id.str());
  auto finished = [record, done](const Result<bool>& result) {
    if (!result.ok()) {
      CountRepairFailure();
      spdlog::error("storage: repair of {}/{} (version {}) failed: {}", record.bucket.str(),
                    record.key.str(), record.version_id.str(), result.error().message);
    } else if (*result) {
      CountRepair();
      spdlog::warn(
          "storage: repaired {}/{} (version {}, {} bytes): the damaged local copy was replaced "
          "by the upstream's, verified against the recorded CRC64NVME",
          record.bucket.str(), record.key.str(), record.version_id.str(), record.size);
    }
    done(result);
  };
  if (!fetcher_.Enqueue(record, finished, FetchKind::kRepair)) {
    CountRepairFailure();
    done(Error(ErrorCode::kUnavailable, "the fetch queue is full", true));
  }
}

void NoRepairer::Repair(const metadata::ObjectRecord& record, Done done) {
  Unrepairable(record, done);
}

}  // namespace strata::storage
