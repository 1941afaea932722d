// LocalTierAdapter: a LocalTier (a directory of data files, storage/local/local_tier.h)
// as a storage::Tier (private to storage/). A location is a data file id; a write is a
// LocalTempFile promoted at commit (trailer, fsync, link into data/), so an uncommitted
// write has no name and leaves nothing behind; reads are ExtentReaders, every chunk
// checked against its CRC64NVME before a byte is returned.
//
// The adapter borrows the LocalTier (ObjectStore's tiers stay where they are) and reads
// only files with a chunk trailer (every file since the trailer exists): a file from
// before it has no size of its own, which only its index record knows.
//
// Commit runs the promotion (fsync of the file and its directory when the tier syncs) on
// the calling thread; the store's callers run that on the blocking pool today, and the
// engine will too. Thread-safe as LocalTier is.
#pragma once

#include <string>

#include "storage/local/local_tier.h"
#include "storage/tier.h"

namespace strata::storage {

class LocalTierAdapter final : public Tier {
 public:
  explicit LocalTierAdapter(LocalTier& tier) : tier_(tier) {}

  const std::string& name() const override { return tier_.name(); }
  // kNotFound when the file is gone; kCorruption when the id is malformed or the file's
  // trailer is damaged or missing.
  // Ignores the pin of `options`: a data file id names one object, never rewritten.
  TierTask<std::unique_ptr<TierReader>> Open(std::string location,
                                             TierOpenOptions options) override;
  TierTask<std::unique_ptr<TierWrite>> BeginWrite(TierWriteOptions options) override;
  // Local files keep no versions: `version_id` is ignored.
  TierTask<TierRemoved> Remove(std::string location, std::string version_id) override;
  // Every data file's object bytes (its footer's data length; the file size for a file
  // without trailer): one listing of data/ and one footer read per file.
  TierTask<TierUsage> Usage() override;

  LocalTier& local() { return tier_; }

 private:
  LocalTier& tier_;
};

}  // namespace strata::storage
