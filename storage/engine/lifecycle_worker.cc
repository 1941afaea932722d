#include "storage/engine/lifecycle_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "metadata/lifecycle.h"

namespace strata::storage {
namespace {

using metadata::DueAction;
using metadata::LifecycleAction;
using metadata::LifecycleRow;
using metadata::ObjectRecord;

// Rows handled per read of the queue, and rows written per batch by a reseed.
constexpr std::size_t kRowsPerRead = 1000;
// Versions of a key the worker looks at (S3 keeps NewerNoncurrentVersions at most 100).
constexpr std::size_t kVersionsPerKey = 1000;
// In a cluster, a due key this gateway is not the primary of is looked at again after
// this many intervals: its primary acts on it meanwhile (and its sync queues the key's next
// due time here), so the row only matters once this gateway becomes the primary.
constexpr int kIntervalsForAnotherPrimary = 10;
constexpr std::size_t kMaxUnsynced = 10'000;

bool IsRemoval(LifecycleAction a) {
  return a == LifecycleAction::kExpire || a == LifecycleAction::kNoncurrentExpire ||
         a == LifecycleAction::kRemoveDeleteMarker;
}

}  // namespace

LifecycleWorker::LifecycleWorker(const Config& config, metadata::Index& index, ObjectStore& store,
                                 const Clock& clock)
    : config_(config),
      index_(index),
      store_(store),
      clock_(clock),
      day_ms_(config.lifecycle.day.count()),
      interval_(config.lifecycle.interval) {}

LifecycleWorker::~LifecycleWorker() { Stop(); }

void LifecycleWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void LifecycleWorker::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LifecycleWorker::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    clock_.WaitFor(lock, wake_, interval_, [&] { return stopping_; });
    if (stopping_) {
      break;
    }
    lock.unlock();
    auto pass = RunPass();
    if (!pass.ok()) {
      spdlog::warn("lifecycle: pass failed: {}", pass.error().message);
    }
    lock.lock();
  }
}

bool LifecycleWorker::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

LifecycleStats LifecycleWorker::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::int64_t LifecycleWorker::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
      .count();
}

int LifecycleWorker::Rank(std::string_view storage_class) const {
  const TierConfig* tier = config_.TierOfClass(storage_class);
  if (tier == nullptr) {
    return 0;
  }
  if (tier->kind == TierKind::kS3) {
    return 2;
  }
  return tier == config_.HotTier() ? 0 : 1;
}

Result<void> LifecycleWorker::RunPass() {
  auto reseeds = index_.LifecycleReseeds();
  if (!reseeds.ok()) {
    return std::move(reseeds).error();
  }
  for (const auto& reseed : *reseeds) {
    // One bucket's failure must not hold up the others' due rows; its mark stays, so the
    // next pass tries again.
    auto done = Reseed(reseed);
    if (!done.ok()) {
      spdlog::warn("lifecycle: reseed of bucket {} failed: {}", reseed.bucket.str(),
                   done.error().message);
      std::lock_guard lock(mu_);
      ++stats_.errors;
    }
  }
  // Rows that fall due while the pass runs wait for the next one, so a pass ends.
  const std::int64_t now = NowMs();
  while (!Stopping()) {
    auto due = index_.DueLifecycleRows(now, kRowsPerRead);
    if (!due.ok()) {
      return std::move(due).error();
    }
    if (due->empty()) {
      break;
    }
    for (const auto& row : *due) {
      if (Stopping()) {
        return Ok();
      }
      auto next = row.upload_id.empty() ? HandleKey(row) : HandleUpload(row);
      std::vector<LifecycleRow> add;
      if (!next.ok()) {
        // Looked at again next interval; the row is not lost.
        spdlog::warn("lifecycle: {}/{}: {}", row.bucket, row.key, next.error().message);
        std::lock_guard lock(mu_);
        ++stats_.errors;
        LifecycleRow retry = row;
        retry.due_ms = now + interval_.count();
        add.push_back(std::move(retry));
      } else if (next->has_value()) {
        add.push_back(std::move(**next));
      }
      STRATA_RETURN_IF_ERROR(index_.UpdateLifecycleRows(add, {row}));
      std::lock_guard lock(mu_);
      ++stats_.rows;
    }
  }
  std::lock_guard lock(mu_);
  ++stats_.passes;
  return Ok();
}

Result<void> LifecycleWorker::Reseed(const metadata::LifecycleReseed& reseed) {
  auto bucket = index_.GetBucket(reseed.bucket);
  if (!bucket.ok() && bucket.error().code != ErrorCode::kNotFound) {
    return std::move(bucket).error();
  }
  if (!bucket.ok() || bucket->lifecycle.empty()) {
    return index_.FinishReseed(reseed);  // gone, or its rules removed since
  }
  const auto& rules = bucket->lifecycle;
  std::vector<LifecycleRow> rows;
  const auto flush = [&]() -> Result<void> {
    auto written = index_.UpdateLifecycleRows(rows, {});
    rows.clear();
    return written;
  };
  // Keys: the versions of one key arrive together, perhaps across pages.
  std::vector<ObjectRecord> group;
  const auto queue_group = [&]() {
    if (group.empty()) {
      return;
    }
    auto due = metadata::NextKeyDue(rules, group, std::numeric_limits<std::int64_t>::min(), day_ms_,
                                    [this](std::string_view c) { return Rank(c); });
    if (due) {
      rows.push_back({*due, reseed.bucket.str(), group.front().key.str(), {}});
    }
    group.clear();
  };
  std::string key_marker;
  std::string version_marker;
  while (true) {
    if (Stopping()) {
      return Ok();  // the mark stays: the next start reseeds the bucket again
    }
    auto page = index_.ListVersions(reseed.bucket, "", key_marker, version_marker, kRowsPerRead);
    if (!page.ok()) {
      return std::move(page).error();
    }
    for (auto& entry : page->versions) {
      if (!group.empty() && group.front().key != entry.record.key) {
        queue_group();
      }
      group.push_back(std::move(entry.record));
    }
    if (rows.size() >= kRowsPerRead) {
      STRATA_RETURN_IF_ERROR(flush());
    }
    if (!page->truncated || group.empty()) {
      break;
    }
    key_marker = group.back().key.str();
    version_marker = group.back().version_id.str();
  }
  queue_group();
  // Uploads in progress.
  std::string upload_key_marker;
  std::string upload_marker;
  while (true) {
    auto page =
        index_.ListUploads(reseed.bucket, "", upload_key_marker, upload_marker, kRowsPerRead);
    if (!page.ok()) {
      return std::move(page).error();
    }
    for (const auto& upload : page->uploads) {
      if (auto due = metadata::UploadAbortDue(rules, upload, day_ms_)) {
        rows.push_back(
            {*due, reseed.bucket.str(), upload.object.key.str(), upload.upload_id.str()});
      }
    }
    if (!page->truncated || page->uploads.empty()) {
      break;
    }
    upload_key_marker = page->uploads.back().object.key.str();
    upload_marker = page->uploads.back().upload_id.str();
  }
  STRATA_RETURN_IF_ERROR(flush());
  spdlog::info("lifecycle: bucket {} queued anew for its rules", reseed.bucket.str());
  return index_.FinishReseed(reseed);
}

Result<std::optional<LifecycleRow>> LifecycleWorker::HandleKey(const LifecycleRow& row) {
  using Next = std::optional<LifecycleRow>;
  auto bucket = index_.GetBucket(BucketName(row.bucket));
  if (!bucket.ok()) {
    if (bucket.error().code == ErrorCode::kNotFound) {
      return Next();
    }
    return std::move(bucket).error();
  }
  if (bucket->lifecycle.empty()) {
    return Next();
  }
  const BucketName bucket_name(row.bucket);
  const ObjectKey key(row.key);
  const std::int64_t now = NowMs();
  if (steward_ != nullptr && !steward_->ActsOn(bucket_name, key)) {
    return Next(LifecycleRow{
        now + kIntervalsForAnotherPrimary * interval_.count(), row.bucket, row.key, {}});
  }
  bool retry = false;
  bool changed_any = false;
  std::vector<ObjectRecord> versions;
  // Each applied action changes the key (a removal changes the others' standing), so the
  // versions are read again; a key has few versions, and each round removes or moves one.
  for (std::size_t round = 0; round <= kVersionsPerKey; ++round) {
    auto read = index_.KeyVersions(bucket_name, key, kVersionsPerKey);
    if (!read.ok()) {
      return std::move(read).error();
    }
    versions = std::move(read).value();
    bool changed = false;
    for (std::size_t i = 0; i < versions.size() && !changed; ++i) {
      auto applied = ApplyDue(*bucket, versions, i, now, retry);
      if (!applied.ok()) {
        return std::move(applied).error();
      }
      changed = *applied;
    }
    if (!changed) {
      break;
    }
    changed_any = true;
  }
  auto next = metadata::NextKeyDue(bucket->lifecycle, versions, now, day_ms_,
                                   [this](std::string_view c) { return Rank(c); });
  if (!SyncChange(bucket_name, key, changed_any)) {
    retry = true;
  }
  if (retry) {
    const std::int64_t soon = now + interval_.count();
    next = next ? std::min(*next, soon) : soon;
  }
  if (!next) {
    return Next();
  }
  return Next(LifecycleRow{*next, row.bucket, row.key, {}});
}

bool LifecycleWorker::SyncChange(const BucketName& bucket, const ObjectKey& key, bool changed) {
  if (steward_ == nullptr) {
    return true;
  }
  const std::string id = bucket.str() + '/' + key.str();
  if (!changed && !unsynced_.contains(id)) {
    return true;
  }
  auto synced = steward_->ChangedBlocking(bucket, key);
  if (synced.ok()) {
    unsynced_.erase(id);
    return true;
  }
  spdlog::warn("lifecycle: {}: the change is not on the other owners yet: {}", id,
               synced.error().message);
  if (unsynced_.size() < kMaxUnsynced) {
    unsynced_.insert(id);
  }
  return false;
}

Result<bool> LifecycleWorker::ApplyDue(const metadata::BucketRecord& bucket,
                                       const std::vector<ObjectRecord>& versions, std::size_t index,
                                       std::int64_t now, bool& retry) {
  const auto rank = [this](std::string_view c) { return Rank(c); };
  auto actions = metadata::VersionActions(bucket.lifecycle, versions, index, day_ms_, rank);
  std::erase_if(actions, [&](const DueAction& a) { return a.due_ms > now; });
  if (actions.empty()) {
    return false;
  }
  const ObjectRecord& version = versions[index];
  // A removal wins over any transition; of transitions, the coldest target.
  auto removal = std::find_if(actions.begin(), actions.end(),
                              [](const DueAction& a) { return IsRemoval(a.action); });
  if (removal != actions.end()) {
    auto expired = store_.ExpireVersion(version, removal->action == LifecycleAction::kExpire);
    if (!expired.ok()) {
      return std::move(expired).error();
    }
    if (*expired) {
      std::lock_guard lock(mu_);
      ++stats_.expirations;
    }
    return *expired;
  }
  const DueAction& target = *std::max_element(
      actions.begin(), actions.end(), [&](const DueAction& a, const DueAction& b) {
        return Rank(a.storage_class) < Rank(b.storage_class);
      });
  const TierConfig* tier = config_.TierOfClass(target.storage_class);
  const bool upstream = tier != nullptr && tier->kind == TierKind::kS3;
  if (tier == nullptr || tier->kind == TierKind::kPeer ||
      (upstream && bucket.upstream_tier != tier->name)) {
    // Refused when the rules were set; the configuration changed since.
    spdlog::warn("lifecycle: {}/{}: cannot move to {} here", bucket.name.str(), version.key.str(),
                 target.storage_class);
    return false;
  }
  auto moved = upstream ? store_.MoveToUpstream(version, tier->name, target.storage_class)
                        : store_.MoveToLocalTier(version, tier->name, target.storage_class);
  if (!moved.ok()) {
    return std::move(moved).error();
  }
  if (!*moved) {
    // Not written back yet (or changed meanwhile): looked at again soon.
    retry = true;
    return false;
  }
  std::lock_guard lock(mu_);
  ++stats_.transitions;
  return true;
}

Result<std::optional<LifecycleRow>> LifecycleWorker::HandleUpload(const LifecycleRow& row) {
  using Next = std::optional<LifecycleRow>;
  const BucketName bucket_name(row.bucket);
  const ObjectKey key(row.key);
  auto bucket = index_.GetBucket(bucket_name);
  if (!bucket.ok()) {
    if (bucket.error().code == ErrorCode::kNotFound) {
      return Next();
    }
    return std::move(bucket).error();
  }
  auto upload = index_.GetUpload(bucket_name, key, UploadId(row.upload_id));
  if (!upload.ok()) {
    if (upload.error().code == ErrorCode::kNotFound ||
        upload.error().code == ErrorCode::kNoSuchUpload) {
      return Next();  // completed or aborted already
    }
    return std::move(upload).error();
  }
  auto due = metadata::UploadAbortDue(bucket->lifecycle, *upload, day_ms_);
  if (!due) {
    return Next();
  }
  if (*due > NowMs()) {
    return Next(LifecycleRow{*due, row.bucket, row.key, row.upload_id});
  }
  auto aborted = store_.AbortUpload(bucket_name, key, UploadId(row.upload_id));
  if (!aborted.ok() && aborted.error().code != ErrorCode::kNoSuchUpload) {
    return std::move(aborted).error();
  }
  if (aborted.ok()) {
    std::lock_guard lock(mu_);
    ++stats_.aborted_uploads;
  }
  return Next();
}

}  // namespace strata::storage
