// MemTier: a storage::Tier in memory, for unit tests of whatever sits on tiers (the tier
// engine, LifecycleWorker, WritebackWorker, Fetcher). It keeps the contract of
// storage/tier.h as the real tiers do: a write is invisible until its commit, an aborted
// one leaves nothing, a reader keeps the bytes it opened through removes and overwrites,
// and stored bytes carry a CRC64NVME per 64 KiB chunk that every read checks (so
// CorruptStored damage is refused with kCorruption, as LocalTier refuses a flipped bit).
// Thread-safe: one mutex over the map of objects; objects are immutable once committed.
// The MemTier must outlive its writes (readers hold their object themselves).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "storage/tier.h"

namespace strata::storage::testing {

class MemTier final : public Tier {
 public:
  static constexpr std::size_t kChunk = 64 << 10;

  explicit MemTier(std::string name = "mem") : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  // Ignores the pin of `options`: a MemTier keeps no ETags or versions.
  TierTask<std::unique_ptr<TierReader>> Open(std::string location,
                                             TierOpenOptions options) override;
  // Names the object options.location when set (replacing what is there at commit),
  // else "mem-<n>".
  TierTask<std::unique_ptr<TierWrite>> BeginWrite(TierWriteOptions options) override;
  TierTask<TierRemoved> Remove(std::string location, std::string version_id) override;
  TierTask<TierUsage> Usage() override;

  // Flips bit `bit` of byte `offset` of the stored object, leaving its chunk CRCs as they
  // were (readers opened before keep the old bytes). False when there is no such byte.
  bool CorruptStored(const std::string& location, std::uint64_t offset, int bit = 0);
  // Writes begun and neither committed nor destroyed.
  std::size_t open_writes() const { return open_writes_.load(); }

  struct Object {
    std::string bytes;
    std::vector<std::uint64_t> chunk_crcs;  // of bytes, by kChunk runs
  };

 private:
  class Write;
  void Put(const std::string& location, std::shared_ptr<const Object> object);

  std::string name_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Object>> objects_;  // guarded by mu_
  std::uint64_t next_id_ = 1;                                     // guarded by mu_
  std::atomic<std::size_t> open_writes_{0};
};

}  // namespace strata::storage::testing
