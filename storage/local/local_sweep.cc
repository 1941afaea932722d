// LocalObjectStore: the orphan sweep. A data file is garbage when no index record names
// it; the only way to get one is a crash between promoting a file and committing its
// record, or between committing the record that drops a version and unlinking its file.
//
// Order matters: the cutoff is fixed first, then the index is scanned (one snapshot),
// then data/ is listed. A file committed after the scan was promoted or linked just
// before its commit, which moved its ctime past the cutoff (the grace period is far
// longer than a commit takes), so it is spared; a file dropped after the scan is still
// kept this time and collected by the next sweep.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <unordered_set>
#include <utility>

#include "storage/local/local_object_store.h"

namespace strata::storage {
namespace {

// A data file id (32 hex digits) as 128 bits: the referenced set of a large index stays
// a few tens of bytes per file.
struct FileId {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;
  bool operator==(const FileId&) const = default;
};

struct FileIdHash {
  std::size_t operator()(const FileId& id) const {
    return static_cast<std::size_t>(id.lo ^ (id.hi * 0x9e3779b97f4a7c15ULL));
  }
};

bool ParseFileId(std::string_view text, FileId* out) {
  if (!LocalTier::IsValidId(text)) {
    return false;
  }
  auto half = [](std::string_view digits) {
    std::uint64_t v = 0;
    for (char c : digits) {
      v = (v << 4) | static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return v;
  };
  out->hi = half(text.substr(0, 16));
  out->lo = half(text.substr(16, 16));
  return true;
}

}  // namespace

Result<std::size_t> LocalObjectStore::SweepOrphans(std::chrono::system_clock::time_point cutoff) {
  std::unordered_set<FileId, FileIdHash> referenced;
  STRATA_RETURN_IF_ERROR(
      index_.ForEachLocation([&](std::string_view /*tier*/, std::string_view location) {
        FileId id;
        if (ParseFileId(location, &id)) {
          referenced.insert(id);
        }
      }));
  // Every local tier; file ids are random 128-bit numbers, unique across tiers.
  std::vector<const LocalTier*> tiers = {tier_.get()};
  for (const auto& t : others_) {
    tiers.push_back(t.get());
  }
  std::size_t removed = 0;
  for (const LocalTier* tier : tiers) {
    std::vector<std::string> orphans;
    STRATA_RETURN_IF_ERROR(tier->ForEachDataFile(
        [&](std::string_view name, std::chrono::system_clock::time_point changed) {
          FileId id;
          if (changed < cutoff && ParseFileId(name, &id) && !referenced.contains(id)) {
            orphans.emplace_back(name);
          }
        }));
    for (const auto& id : orphans) {
      auto gone = tier->Remove(id);
      if (!gone.ok()) {
        spdlog::warn("storage: orphan sweep could not remove {}: {}", tier->DataPath(id),
                     gone.error().message);
        continue;
      }
      spdlog::debug("storage: orphan sweep removed {}", tier->DataPath(id));
      ++removed;
    }
  }
  return removed;
}

void LocalObjectStore::SweepAndLog(std::chrono::system_clock::time_point cutoff, bool log_clean) {
  auto swept = SweepOrphans(cutoff);
  if (!swept.ok()) {
    spdlog::warn("storage: orphan sweep failed: {}", swept.error().message);
  } else if (*swept > 0 || log_clean) {
    spdlog::info("storage: orphan sweep removed {} unreferenced data files on {} local tiers",
                 *swept, 1 + others_.size());
  }
}

void LocalObjectStore::StartSweeper() {
  if (sweep_.interval.count() <= 0 || sweeper_.joinable()) {
    return;
  }
  sweeper_ = std::thread([this] {
    std::unique_lock lock(sweeper_mu_);
    while (!clock_.WaitFor(lock, sweeper_cv_, sweep_.interval, [this] { return stopping_; })) {
      lock.unlock();
      SweepAndLog(clock_.Now() - sweep_.grace, false);
      lock.lock();
    }
  });
}

LocalObjectStore::~LocalObjectStore() {
  {
    std::lock_guard lock(sweeper_mu_);
    stopping_ = true;
  }
  sweeper_cv_.notify_all();
  if (sweeper_.joinable()) {
    sweeper_.join();
  }
}

}  // namespace strata::storage
