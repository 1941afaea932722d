// UpstreamRepairer: the CopyRepairer (storage/integrity.h) of a gateway with an upstream.
// A damaged local copy of a clean version (one the upstream has: a placement on the s3
// tier, recorded when the push finished) is fetched again through the Fetcher
// (FetchKind::kRepair: pinned to the upstream ETag, checked against the recorded
// CRC64NVME) and replaces the damaged copy in one index write. A dirty version (not
// written back yet) has no other copy: that is logged as an error and counted
// (IntegrityUnrepairable), and the read stays an error.
//
// Any thread; outcomes arrive on the fetcher's thread.
#pragma once

#include <string>

#include "storage/integrity.h"
#include "storage/upstream/fetcher.h"

namespace strata::storage {

class UpstreamRepairer final : public CopyRepairer {
 public:
  // `fetcher` outlives this; `upstream_tier`: the s3 tier's name.
  UpstreamRepairer(Fetcher& fetcher, std::string upstream_tier)
      : fetcher_(fetcher), upstream_tier_(std::move(upstream_tier)) {}

  void Repair(const metadata::ObjectRecord& record, Done done) override;

 private:
  Fetcher& fetcher_;
  std::string upstream_tier_;
};

// The CopyRepairer of a gateway without an upstream: every damaged copy is the only one.
class NoRepairer final : public CopyRepairer {
 public:
  void Repair(const metadata::ObjectRecord& record, Done done) override;
};

}  // namespace strata::storage
