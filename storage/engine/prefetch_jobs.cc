#include "storage/engine/prefetch_jobs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <functional>
#include <optional>

#include "common/clock_timer.h"
#include "storage/engine/tier_caches.h"
#include "storage/upstream/fetcher.h"
#include "storage/upstream/s3_client.h"

namespace strata::storage {
namespace asio = boost::asio;

namespace {

constexpr int kListPage = 1000;
// A full Fetcher queue (RestoreObject and other jobs share it) is tried again this late.
constexpr auto kQueueFullWait = std::chrono::milliseconds(100);
// A learned job out of room looks again this often for copies its reader is done with.
constexpr auto kRoomPoll = std::chrono::milliseconds(20);

// A key's "directory": what a scan of a dataset shares.
std::string PrefixOf(const std::string& key) {
  const std::size_t slash = key.rfind('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash + 1);
}

// The name of the scan of `prefix` in `bucket` (PrefetchJobs::scans_, Job::scan).
std::string ScanId(const BucketName& bucket, const std::string& prefix) {
  return bucket.str() + '\0' + prefix;
}

std::int64_t WallMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view PrefetchStateName(PrefetchState state) {
  switch (state) {
    case PrefetchState::kRunning:
      return "running";
    case PrefetchState::kDone:
      return "done";
    case PrefetchState::kCancelled:
      return "cancelled";
    case PrefetchState::kFailed:
      return "failed";
  }
  return "unknown";
}

struct PrefetchJobs::Job {
  PrefetchJobInfo info;  // guarded by PrefetchJobs::mu_
  bool cancel = false;   // guarded by PrefetchJobs::mu_
  std::string scan;      // a learned job's: the key of its Scan
  // On the fetcher's thread only: fetches queued and not yet done, and the timer the job
  // sleeps on while the limit is reached (a finished fetch wakes it). The timer lives in
  // the job's coroutine, which normally outlives every fetch it queued; a cancelled one
  // (PrefetchJobs::Stop) sets it back to nullptr as it unwinds.
  int outstanding = 0;
  ClockTimer* wake = nullptr;
};

// One job's run, on the fetcher's thread. A class so the steps read one at a time.
class PrefetchRun {
 public:
  PrefetchRun(const Clock& clock, metadata::Index& index, ObjectStore& store, Fetcher& fetcher,
              TierCaches* tier_caches, std::mutex& mu,
              std::map<std::string, PrefetchJobs::Scan>& scans, int max_outstanding,
              std::chrono::milliseconds idle_after)
      : clock_(clock),
        index_(index),
        store_(store),
        fetcher_(fetcher),
        tier_caches_(tier_caches),
        mu_(mu),
        scans_(scans),
        max_outstanding_(max_outstanding),
        idle_after_(idle_after) {}

  // What a listed key needs: nothing (nullopt), or a fetch of this kind and record.
  struct Wanted {
    metadata::ObjectRecord record;
    FetchKind kind = FetchKind::kRestore;
  };
  Result<std::optional<Wanted>> Want(const PrefetchJobs::Job& job,
                                     const metadata::BucketRecord& bucket,
                                     const upstream::ListedObject& entry, bool& local) const {
    const ObjectKey key(entry.key);
    if (ReadInThisEpoch(job, bucket.name, key)) {
      return std::optional<Wanted>();  // the scan is past it
    }
    auto current = index_.GetObject(bucket.name, key);
    if (current.ok()) {
      if (current->delete_marker) {
        return std::optional<Wanted>();
      }
      if (store_.HasLocalCopy(*current)) {
        local = true;
        return std::optional<Wanted>();
      }
      if (metadata::PlacementOn(*current, bucket.upstream_tier) == nullptr) {
        return std::optional<Wanted>();
      }
      return std::optional<Wanted>(Wanted{std::move(current).value(), FetchKind::kRestore});
    }
    if (current.error().code != ErrorCode::kNotFound &&
        current.error().code != ErrorCode::kNoSuchKey) {
      return std::move(current).error();
    }
    auto waiting = index_.GetWriteback(bucket.name, key);
    if (!waiting.ok()) {
      return std::move(waiting).error();
    }
    if (waiting->has_value()) {
      return std::optional<Wanted>();  // deleted here, the delete not pushed yet
    }
    Wanted wanted;
    wanted.kind = FetchKind::kNewCopy;
    wanted.record.bucket = bucket.name;
    wanted.record.key = key;
    wanted.record.size = entry.size;
    wanted.record.etag = upstream::EtagValue(entry.etag);
    return std::optional<Wanted>(std::move(wanted));
  }

  // Whether the scan a learned job follows has read `key` in this epoch.
  bool ReadInThisEpoch(const PrefetchJobs::Job& job, const BucketName& bucket,
                       const ObjectKey& key) const {
    const std::uint64_t key_hash = TierCaches::KeyHash(bucket, key);
    std::lock_guard lock(mu_);
    const PrefetchJobs::Scan* scan = ScanOf(job);
    return scan != nullptr && scan->read.contains(key_hash);
  }

  // A learned job's scan; under mu_. nullptr for a bulk job, or when the scan was
  // forgotten (PrefetchJobs::kMaxScans).
  PrefetchJobs::Scan* ScanOf(const PrefetchJobs::Job& job) const {
    auto it = job.scan.empty() ? scans_.end() : scans_.find(job.scan);
    return it == scans_.end() ? nullptr : &it->second;
  }

  // Sleeps until one of the job's fetches is done.
  static asio::awaitable<void> WaitForAFetch(PrefetchJobs::Job& job) {
    co_await job.wake->WaitUntil(SteadyTime::max());
  }

  bool Cancelled(const PrefetchJobs::Job& job) const {
    std::lock_guard lock(mu_);
    return job.cancel;
  }

  // Queues `wanted` on the fetcher, waiting while the job has its limit outstanding or the
  // fetcher's queue is full. `stats` counts what every job fetched.
  asio::awaitable<void> Queue(std::shared_ptr<PrefetchJobs::Job> job, Wanted wanted,
                              PrefetchStats& stats) {
    while (job->outstanding >= max_outstanding_) {
      co_await WaitForAFetch(*job);
    }
    const std::uint64_t size = wanted.record.size;
    {
      std::lock_guard lock(mu_);
      ++job->info.queued;
      job->info.queued_bytes += size;
    }
    ++job->outstanding;
    std::mutex& mu = mu_;
    TierCaches* reserved_on = Reserves(*job) ? tier_caches_ : nullptr;
    auto done = [job, size, &mu, &stats, reserved_on](const Result<bool>& fetched) {
      if (reserved_on != nullptr) {
        reserved_on->ReleaseRoom(size);  // landed in the usage counters, or never will
      }
      {
        std::lock_guard lock(mu);
        if (!fetched.ok()) {
          ++job->info.failed;
        } else if (*fetched) {
          ++job->info.fetched;
          job->info.fetched_bytes += size;
          ++stats.fetched;
          stats.fetched_bytes += size;
        } else {
          ++job->info.skipped;
        }
      }
      --job->outstanding;
      if (job->wake != nullptr) {
        job->wake->Wake();
      }
    };
    while (!fetcher_.Enqueue(wanted.record, done, wanted.kind)) {
      co_await job->wake->WaitFor(kQueueFullWait);
    }
  }

  // Whether the job takes room on the hot tier for what it fetches: a learned one does.
  bool Reserves(const PrefetchJobs::Job& job) const {
    std::lock_guard lock(mu_);
    return job.info.learned && tier_caches_ != nullptr;
  }

  // Whether the job may spend `size` more bytes: its budget, and for a learned job room
  // on the hot tier, reserved, made if need be by displacing what its scan has read in
  // this epoch. Without either, a learned job waits for its reader to read on, until the
  // scan has been idle for idle_after (or the job is cancelled): false then.
  asio::awaitable<bool> Afford(PrefetchJobs::Job& job, std::uint64_t size) {
    {
      std::lock_guard lock(mu_);
      const PrefetchJobInfo& info = job.info;
      if (info.budget != 0 && info.queued_bytes + size > info.budget) {
        co_return false;
      }
    }
    if (!Reserves(job)) {
      co_return true;
    }
    for (;;) {
      std::vector<std::uint64_t> displaceable;
      bool idle = true;
      {
        std::lock_guard lock(mu_);
        if (PrefetchJobs::Scan* scan = ScanOf(job)) {
          displaceable.swap(scan->displaceable);
          idle = clock_.SteadyNow() - scan->last_read > idle_after_;
        }
        idle = idle || job.cancel;
      }
      const bool reserved = tier_caches_->ReserveRoom(size, &displaceable);
      {
        std::lock_guard lock(mu_);
        if (PrefetchJobs::Scan* scan = ScanOf(job)) {  // what is left, then what came since
          displaceable.insert(displaceable.end(), scan->displaceable.begin(),
                              scan->displaceable.end());
          scan->displaceable.swap(displaceable);
        }
      }
      if (reserved) {
        co_return true;
      }
      if (idle) {
        co_return false;
      }
      co_await job.wake->WaitFor(kRoomPoll);  // a fetch done wakes it early: look again
    }
  }

  // The whole run: lists and queues, then waits for the last fetch (also after an
  // error). Returns the error that ended it early, if any.
  asio::awaitable<Result<void>> Run(std::shared_ptr<PrefetchJobs::Job> job, PrefetchStats& stats) {
    ClockTimer wake(co_await asio::this_coro::executor, clock_);
    job->wake = &wake;
    struct Unset {  // also when a cancelled run unwinds: its fetches may finish later
      PrefetchJobs::Job& job;
      ~Unset() { job.wake = nullptr; }
    } unset{*job};
    auto listed = co_await ListAndQueue(job, stats);
    while (job->outstanding > 0) {
      co_await WaitForAFetch(*job);
    }
    co_return listed;
  }

 private:
  asio::awaitable<Result<void>> ListAndQueue(std::shared_ptr<PrefetchJobs::Job> job,
                                             PrefetchStats& stats) {
    std::string bucket_name;
    std::string prefix;
    {
      std::lock_guard lock(mu_);
      bucket_name = job->info.bucket;
      prefix = job->info.prefix;
    }
    auto bucket = store_.GetBucket(BucketName(bucket_name));
    if (!bucket.ok()) {
      co_return std::move(bucket).error();
    }
    upstream::ListRequest request;
    request.prefix = prefix;
    request.max_keys = kListPage;
    bool more = true;
    while (more && !Cancelled(*job)) {
      upstream::ListRequest this_page = request;
      auto page =
          co_await fetcher_.client().ListObjectsV2(bucket->upstream_bucket, std::move(this_page));
      if (!page.ok()) {
        co_return std::move(page).error();
      }
      for (const auto& entry : page->objects) {
        if (Cancelled(*job)) {
          break;
        }
        bool local = false;
        auto wanted = Want(*job, *bucket, entry, local);
        if (!wanted.ok()) {
          co_return std::move(wanted).error();
        }
        {
          std::lock_guard lock(mu_);
          ++job->info.listed;
          job->info.already_local += local ? 1 : 0;
        }
        if (!wanted->has_value()) {
          continue;
        }
        const bool affordable = co_await Afford(*job, (*wanted)->record.size);
        if (!affordable) {
          std::lock_guard lock(mu_);
          job->info.budget_reached = !job->cancel;
          more = false;
          break;
        }
        co_await Queue(job, std::move(**wanted), stats);
      }
      more = more && page->truncated && !page->next_continuation_token.empty();
      request.continuation_token = page->next_continuation_token;
    }
    co_return Ok();
  }

  const Clock& clock_;
  metadata::Index& index_;
  ObjectStore& store_;
  Fetcher& fetcher_;
  TierCaches* tier_caches_;
  std::mutex& mu_;
  std::map<std::string, PrefetchJobs::Scan>& scans_;  // guarded by mu_
  const int max_outstanding_;
  const std::chrono::milliseconds idle_after_;
};

PrefetchJobs::PrefetchJobs(const Config& config, const Clock& clock, metadata::Index& index,
                           ObjectStore& store, Fetcher& fetcher, TierCaches* tier_caches)
    : config_(config),
      clock_(clock),
      index_(index),
      store_(store),
      fetcher_(fetcher),
      tier_caches_(tier_caches) {}

PrefetchJobs::~PrefetchJobs() { Stop(); }

void PrefetchJobs::Stop() {
  tasks_.Close();
  {
    std::lock_guard lock(mu_);
    for (auto& [id, job] : jobs_) {
      job->cancel = true;
    }
  }
  tasks_.Cancel();
  tasks_.Join();
}

Result<PrefetchJobInfo> PrefetchJobs::Start(const BucketName& bucket, const std::string& prefix,
                                            std::uint64_t budget) {
  return Launch(bucket, prefix, budget, false);
}

Result<PrefetchJobInfo> PrefetchJobs::Launch(const BucketName& bucket, const std::string& prefix,
                                             std::uint64_t budget, bool learned) {
  auto record = store_.GetBucket(bucket);
  if (!record.ok()) {
    return std::move(record).error();
  }
  if (record->upstream_tier.empty()) {
    return Error(
        ErrorCode::kInvalidRequest,
        "bucket " + bucket.str() + " is not bound to an upstream: it has nothing to fetch");
  }
  auto job = std::make_shared<Job>();
  job->info.bucket = bucket.str();
  job->info.prefix = prefix;
  job->info.learned = learned;
  if (learned) {
    job->scan = ScanId(bucket, prefix);
  }
  job->info.budget = budget;
  job->info.started_ms = WallMs(clock_);
  PrefetchJobInfo started;
  {
    std::lock_guard lock(mu_);
    job->info.id = next_id_++;
    jobs_[job->info.id] = job;
    ++(learned ? stats_.learned_started : stats_.jobs_started);
    Forget();
    started = job->info;
  }
  spdlog::info("prefetch job {}: {} {}/{} (budget {} bytes)", started.id,
               learned ? "learned scan of" : "bulk prefetch of", started.bucket, started.prefix,
               budget);
  if (!tasks_.Spawn(fetcher_.executor(), RunJob(this, job))) {
    std::lock_guard lock(mu_);
    job->info.state = PrefetchState::kCancelled;
    job->info.ended_ms = WallMs(clock_);
    return Error(ErrorCode::kUnavailable, "the server is stopping", true);
  }
  return started;
}

asio::awaitable<void> PrefetchJobs::RunJob(PrefetchJobs* self, std::shared_ptr<Job> job) {
  PrefetchRun runner(self->clock_, self->index_, self->store_, self->fetcher_, self->tier_caches_,
                     self->mu_, self->scans_, 2 * self->config_.prefetch.concurrency,
                     self->config_.prefetch.scan_window);
  auto ran = co_await runner.Run(job, self->stats_);
  std::lock_guard lock(self->mu_);
  PrefetchJobInfo& info = job->info;
  info.ended_ms = WallMs(self->clock_);
  if (!ran.ok()) {
    info.state = PrefetchState::kFailed;
    info.error = ran.error().message;
  } else {
    info.state = job->cancel ? PrefetchState::kCancelled : PrefetchState::kDone;
  }
  spdlog::info(
      "prefetch job {} {}: {} listed, {} fetched ({} bytes), {} local already, {} failed{}{}",
      info.id, PrefetchStateName(info.state), info.listed, info.fetched, info.fetched_bytes,
      info.already_local, info.failed, info.budget_reached ? ", stopped at its budget" : "",
      info.error.empty() ? "" : ": " + info.error);
}

Result<PrefetchJobInfo> PrefetchJobs::Get(std::uint64_t id) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    return Error(ErrorCode::kNotFound, "no prefetch job " + std::to_string(id));
  }
  return it->second->info;
}

Result<PrefetchJobInfo> PrefetchJobs::Cancel(std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    return Error(ErrorCode::kNotFound, "no prefetch job " + std::to_string(id));
  }
  it->second->cancel = it->second->info.state == PrefetchState::kRunning;
  return it->second->info;
}

std::vector<PrefetchJobInfo> PrefetchJobs::List() const {
  std::lock_guard lock(mu_);
  std::vector<PrefetchJobInfo> out;
  out.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) {
    out.push_back(job->info);
  }
  return out;
}

PrefetchStats PrefetchJobs::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void PrefetchJobs::Forget() {
  std::size_t finished = 0;
  for (const auto& [id, job] : jobs_) {
    finished += job->info.state != PrefetchState::kRunning ? 1 : 0;
  }
  for (auto it = jobs_.begin(); it != jobs_.end() && finished > kKeptJobs;) {
    if (it->second->info.state != PrefetchState::kRunning) {
      it = jobs_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
}

bool PrefetchJobs::Running(std::uint64_t id) const {
  auto it = jobs_.find(id);
  return it != jobs_.end() && it->second->info.state == PrefetchState::kRunning;
}

bool PrefetchJobs::Follow(Scan& scan, std::pair<std::uint64_t, std::uint64_t> ids, SteadyTime now) {
  const auto [copy_id, key_hash] = ids;
  const bool next_epoch = scan.read.contains(key_hash);  // read again
  if (next_epoch) {
    followed_keys_ -= scan.read.size();
    scan.read.clear();
    scan.displaceable.clear();
  }
  if (followed_keys_ < kMaxFollowedKeys) {
    scan.read.emplace(key_hash, copy_id);
    ++followed_keys_;
    scan.displaceable.push_back(copy_id);
  }
  scan.last_read = now;
  return next_epoch;
}

bool PrefetchJobs::StartFollowing(Scan& scan, SteadyTime now) {
  if (scan.job != 0 && Running(scan.job)) {
    return false;
  }
  scan.job = 0;
  scan.keys.clear();
  scan.window_start = now;
  return true;
}

void PrefetchJobs::LaunchLearned(const BucketName& bucket, const std::string& prefix) {
  auto launched = Launch(bucket, prefix, config_.prefetch.budget, true);
  if (!launched.ok()) {
    spdlog::warn("prefetch: cannot follow the scan of {}/{}: {}", bucket.str(), prefix,
                 launched.error().message);
    return;
  }
  std::lock_guard lock(mu_);
  auto it = scans_.find(ScanId(bucket, prefix));
  if (it != scans_.end()) {
    it->second.job = launched->id;
  }
}

void PrefetchJobs::ObserveRead(const metadata::ObjectRecord& record) {
  if (!any_followed_.load(std::memory_order_relaxed)) {
    return;
  }
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return;
  }
  const std::string prefix = PrefixOf(record.key.str());
  auto it = scans_.find(ScanId(record.bucket, prefix));
  if (it == scans_.end() || !it->second.followed) {
    return;
  }
  const auto now = clock_.SteadyNow();
  // A followed scan's next epoch gets its job at once, not after threshold misses.
  const bool next_epoch = Follow(it->second, TierCaches::Ids(record), now);
  if (next_epoch && config_.prefetch.learned && StartFollowing(it->second, now)) {
    lock.unlock();
    LaunchLearned(record.bucket, prefix);
  }
}

void PrefetchJobs::ObserveMiss(const metadata::ObjectRecord& record) {
  const PrefetchConfig& config = config_.prefetch;
  if (!config.learned) {
    return;
  }
  const std::string prefix = PrefixOf(record.key.str());
  const std::string id = ScanId(record.bucket, prefix);
  const auto ids = TierCaches::Ids(record);
  const auto now = clock_.SteadyNow();
  bool launch = false;
  {
    std::lock_guard lock(mu_);
    auto it = scans_.find(id);
    if (it == scans_.end()) {
      if (scans_.size() >= kMaxScans) {
        scans_.clear();  // bounded: the scans under way are recognised again in a moment
        followed_keys_ = 0;
      }
      it = scans_.emplace(id, Scan{}).first;
      it->second.window_start = now;
    }
    Scan& scan = it->second;
    const bool next_epoch = scan.followed && Follow(scan, ids, now);
    if (scan.job != 0 && !StartFollowing(scan, now)) {
      return;  // its job runs already
    }
    launch = next_epoch;  // a followed scan's next epoch gets its job at once
    if (now - scan.window_start > config.scan_window) {
      scan.keys.clear();
      scan.window_start = now;
    }
    if (std::find(scan.keys.begin(), scan.keys.end(), ids) == scan.keys.end()) {
      scan.keys.push_back(ids);
    }
    if (!launch && scan.keys.size() < static_cast<std::size_t>(config.scan_threshold)) {
      return;
    }
    if (!scan.followed) {  // from now on every read of the prefix counts, these too
      scan.followed = true;
      any_followed_ = true;
      for (const auto& missed : scan.keys) {
        Follow(scan, missed, now);
      }
    }
    scan.keys.clear();
    scan.window_start = now;
  }
  LaunchLearned(record.bucket, prefix);
}

}  // namespace strata::storage
