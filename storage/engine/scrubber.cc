#include "storage/engine/scrubber.h"

#include <spdlog/spdlog.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "storage/crc64nvme.h"
#include "storage/integrity.h"
#include "storage/local/chunk_trailer.h"
#include "storage/local/local_io.h"

namespace strata::storage {
namespace {

constexpr std::size_t kReadBlock = 256 * 1024;  // four chunks per read

std::int64_t UnixMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

}  // namespace

struct Scrubber::Ref {
  BucketName bucket;
  ObjectKey key;
  VersionId version_id;
};

Scrubber::Scrubber(const ScrubConfig& config, metadata::Index& index, ObjectStore& store,
                   CopyRepairer& repairer, const Clock& clock)
    : config_(config), index_(index), store_(store), repairer_(repairer), clock_(clock) {}

Scrubber::~Scrubber() { Stop(); }

void Scrubber::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void Scrubber::Start() {
  thread_ = std::thread([this] { Loop(); });
}

bool Scrubber::StartPass() {
  std::lock_guard lock(mu_);
  if (stats_.running || requested_) {
    return false;
  }
  requested_ = true;
  cv_.notify_all();
  return true;
}

ScrubStats Scrubber::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Scrubber::Loop() {
  std::unique_lock lock(mu_);
  auto next = clock_.SteadyNow() + config_.interval;
  while (!stopping_) {
    const bool background = config_.bytes_per_second > 0;
    if (!requested_ && !(background && clock_.SteadyNow() >= next)) {
      if (background) {
        clock_.WaitUntil(lock, cv_, next, [this] { return stopping_ || requested_; });
      } else {
        cv_.wait(lock);
      }
      continue;
    }
    lock.unlock();
    RunPass();
    lock.lock();
    next = clock_.SteadyNow() + config_.interval;
  }
}

void Scrubber::RunPass() {
  {
    std::lock_guard lock(mu_);
    requested_ = false;
    stats_.running = true;
    stats_.pass_objects_total = 0;
    stats_.pass_objects_done = 0;
    stats_.last_started_ms = UnixMs(clock_);
  }
  // Names only, from one snapshot, released before the first byte is read: a pass that
  // takes hours must not pin the index's old files.
  std::vector<Ref> refs;
  auto scanned = index_.ForEachVersion([&](const metadata::ObjectRecord& record) {
    if (!record.delete_marker && store_.HasLocalCopy(record)) {
      refs.push_back({record.bucket, record.key, record.version_id});
    }
    return true;
  });
  if (!scanned.ok()) {
    spdlog::error("scrub: the index scan failed: {}", scanned.error().message);
  }
  {
    std::lock_guard lock(mu_);
    stats_.pass_objects_total = refs.size();
  }
  spdlog::info("scrub: pass started over {} local copies", refs.size());
  pass_began_ = clock_.SteadyNow();
  pass_bytes_ = 0;
  bool stopped = false;
  for (const Ref& ref : refs) {
    {
      std::lock_guard lock(mu_);
      stopped = stopping_;
    }
    if (stopped) {
      break;
    }
    ScrubOne(ref);
    std::lock_guard lock(mu_);
    ++stats_.pass_objects_done;
  }
  std::lock_guard lock(mu_);
  stats_.running = false;
  if (!stopped && scanned.ok()) {
    ++stats_.passes_completed;
    stats_.last_finished_ms = UnixMs(clock_);
    spdlog::info("scrub: pass {} done: {} copies, {} damaged in all so far, {} repaired",
                 stats_.passes_completed, refs.size(), stats_.errors, stats_.repaired);
  }
}

bool Scrubber::Throttle() {
  if (config_.bytes_per_second == 0) {
    return true;  // a pass asked for by hand with no rate configured: as fast as the disk
  }
  const auto due =
      pass_began_ +
      std::chrono::nanoseconds(static_cast<std::int64_t>(
          static_cast<double>(pass_bytes_) * 1e9 / static_cast<double>(config_.bytes_per_second)));
  std::unique_lock lock(mu_);
  clock_.WaitUntil(lock, cv_, due, [this] { return stopping_; });
  return !stopping_;
}

void Scrubber::ScrubOne(const Ref& ref) {
  // The version as it is now: overwritten, deleted or evicted since the scan is skipped.
  auto record = store_.HeadVersion(ref.bucket, ref.key, ref.version_id);
  if (!record.ok() || record->delete_marker || !store_.HasLocalCopy(*record)) {
    return;
  }
  std::string damage;
  std::uint64_t crc = 0;
  std::uint64_t offset = 0;
  // The trailers first, from the disk: a reader trusts the footer the open-file cache
  // read when the file was first opened, so a flip there since shows only here.
  auto trailers = store_.VerifyLocalTrailers(*record);
  if (!trailers.ok() && trailers.error().code != ErrorCode::kCorruption) {
    return;  // gone meanwhile, or an I/O error: not this pass's business
  }
  auto opened = trailers.ok() ? store_.OpenObject(*record)
                              : Result<std::unique_ptr<ObjectReader>>(trailers.error());
  if (!opened.ok()) {
    if (opened.error().code != ErrorCode::kCorruption) {
      return;  // gone meanwhile
    }
    damage = opened.error().message;
  } else {
    std::vector<char> block(kReadBlock);
    while (offset < record->size) {
      auto n = (*opened)->Read(offset, std::span<char>(block.data(), block.size()));
      if (!n.ok()) {
        if (n.error().code != ErrorCode::kCorruption) {
          return;  // an I/O error or the copy gone: not this pass's business
        }
        damage = n.error().message;
        break;
      }
      if (*n == 0) {
        damage = "the copy ends at " + std::to_string(offset) + " of " +
                 std::to_string(record->size) + " bytes";
        break;
      }
      crc = Crc64Nvme(crc, block.data(), *n);
      offset += *n;
      pass_bytes_ += *n;
      if (!Throttle()) {
        return;
      }
    }
    if (damage.empty()) {
      // Every chunk matched its trailer; the whole must match what the index recorded
      // when the bytes arrived (a flipped bit in the record, or a trailer rewritten to
      // agree with damaged bytes, shows only here).
      const std::string recorded = RecordedCrc64(*record);
      if (!recorded.empty() && Crc64Base64(crc) != recorded) {
        damage =
            "its bytes have CRC64NVME " + Crc64Base64(crc) + ", the index recorded " + recorded;
        spdlog::error("scrub: {}/{} (version {}): {}", record->bucket.str(), record->key.str(),
                      record->version_id.str(), damage);
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.objects;
    stats_.bytes += offset;
    stats_.chunks += (offset + kChunkSize - 1) / kChunkSize;  // verified before use
    stats_.errors += damage.empty() ? 0 : 1;
  }
  if (!damage.empty()) {
    Repair(*record);
  }
}

void Scrubber::Repair(const metadata::ObjectRecord& record) {
  auto promise = std::make_shared<std::promise<Result<bool>>>();
  auto future = promise->get_future();
  repairer_.Repair(record, [promise](const Result<bool>& result) { promise->set_value(result); });
  // The repairer answers on its own thread; a stop abandons the wait, not the repair.
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    std::lock_guard lock(mu_);
    if (stopping_) {
      return;
    }
  }
  const Result<bool> result = future.get();
  std::lock_guard lock(mu_);
  if (result.ok()) {
    stats_.repaired += *result ? 1 : 0;
  } else if (result.error().code == ErrorCode::kNotFound) {
    ++stats_.unrepairable;
  } else {
    ++stats_.repair_failed;
  }
}

}  // namespace strata::storage
