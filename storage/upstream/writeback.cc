#include "storage/upstream/writeback.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "auth/signer.h"
#include "common/clock_timer.h"
#include "common/task_group.h"
#include "metadata/codec.h"
#include "storage/checksum.h"
#include "storage/integrity.h"

namespace strata::storage {

namespace asio = boost::asio;
using Header = std::pair<std::string, std::string>;

namespace {

std::int64_t WallClockMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

// What the upstream should answer a GET of the version with: its type and metadata.
std::vector<Header> UpstreamHeaders(const metadata::ObjectRecord& record) {
  std::vector<Header> headers;
  if (!record.content_type.empty()) {
    headers.emplace_back("Content-Type", record.content_type);
  }
  for (const auto& [name, value] : record.system_metadata) {
    headers.emplace_back(name, value);
  }
  for (const auto& [name, value] : record.user_metadata) {
    headers.emplace_back("x-amz-meta-" + name, value);
  }
  // The CRC64NVME computed when the bytes arrived, which every local read checked
  // chunk by chunk: the upstream verifies the body against it (S3 answers BadDigest), so
  // bytes damaged anywhere between the client and the upstream are never stored there.
  // A multipart push drops it (S3Client): it describes the whole object, not a part.
  if (std::string crc = RecordedCrc64(record); !crc.empty()) {
    headers.emplace_back("x-amz-checksum-crc64nvme", std::move(crc));
  }
  if (!record.tags.empty()) {
    std::string tagging;  // as a query string, which is how S3 takes it in a header
    for (const auto& [key, value] : record.tags) {
      if (!tagging.empty()) {
        tagging += '&';
      }
      tagging += auth::UriEncode(key, true);
      tagging += '=';
      tagging += auth::UriEncode(value, true);
    }
    headers.emplace_back("x-amz-tagging", std::move(tagging));
  }
  return headers;
}

// A version's local copy as a storage::TierReader, the source of a push. Reads run
// synchronously on the worker's own thread (the request path's threads never wait on
// them); the upstream's client reads a prefix again when it retries.
class LocalCopyReader final : public TierReader {
 public:
  explicit LocalCopyReader(std::unique_ptr<ObjectReader> reader) : reader_(std::move(reader)) {
    info_.size = reader_->size();
  }
  std::uint64_t size() const override { return reader_->size(); }
  const TierObjectInfo& info() const override { return info_; }
  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    co_return reader_->Read(offset, buf);
  }

 private:
  std::unique_ptr<ObjectReader> reader_;
  TierObjectInfo info_;
};

// Where the upstream tier keeps `key` of the bucket bound to it.
std::string UpstreamLocationOf(const metadata::BucketRecord& bucket, const ObjectKey& key) {
  return bucket.upstream_bucket + "/" + key.str();
}

// A plain single-PUT ETag is the MD5 of the bytes: 32 hex digits.
bool IsMd5Etag(std::string_view etag) {
  return etag.size() == 32 &&
         std::all_of(etag.begin(), etag.end(), [](char c) { return std::isxdigit(c) != 0; });
}

std::string KeyId(const metadata::WritebackItem& item) {
  return item.bucket.str() + '\0' + item.key.str();
}

}  // namespace

struct WritebackWorker::State {
  metadata::Index& index;
  ObjectStore& store;
  Tier& upstream;
  WritebackOptions options;
  const Clock& clock;
  // The loop and the pushes. Before the io_context: a frame the io_context destroys
  // unfinished still uncounts itself.
  TaskGroup tasks;
  asio::io_context ioc;
  // Touched only on ioc's thread: the keys being pushed, when the queue is next worth
  // reading (DueItems), when the oldest item is next looked up (RefreshOldest).
  std::set<std::string> in_flight;
  std::int64_t next_scan_ms = 0;
  std::int64_t next_oldest_ms = 0;
  static constexpr std::uint64_t kSmallQueue = 10'000;  // read whole at every tick
  static constexpr std::int64_t kOldestRefreshMs = 10'000;
  std::atomic<std::int64_t> flush_until_ns{0};
  std::atomic<std::uint64_t> pushes{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::int64_t> oldest_enqueued_ms{0};
  std::mt19937_64 jitter{std::random_device{}()};
  KeySteward* steward = nullptr;  // set before the thread starts

  State(metadata::Index& i, ObjectStore& s, Tier& u, WritebackOptions o, const Clock& c)
      : index(i), store(s), upstream(u), options(o), clock(c) {}

  bool Flushing() const {
    return clock.SteadyNow().time_since_epoch().count() <
           flush_until_ns.load(std::memory_order_relaxed);
  }

  // Scan period: a fraction of the delay, so a write goes out soon after it is due.
  std::chrono::milliseconds Period() const {
    return std::clamp<std::chrono::milliseconds>(options.delay / 4, std::chrono::milliseconds(50),
                                                 std::chrono::milliseconds(1'000));
  }

  // Up to the free slots' worth of due items, in queue order, skipping keys in flight.
  // The scan stops once the slots are filled; when it saw the whole queue, it also sets
  // when the next item falls due (a new item falls due no sooner than one delay from
  // now), so that while everything waits (an upstream outage) the queue is not read again
  // before then.
  std::vector<metadata::WritebackItem> DueItems() {
    std::vector<metadata::WritebackItem> due;
    const std::size_t room = static_cast<std::size_t>(options.concurrency) -
                             std::min(in_flight.size(), std::size_t(options.concurrency));
    const std::int64_t now = WallClockMs(clock);
    const bool flushing = Flushing();
    std::int64_t next_due = now + options.delay.count();
    bool whole_queue = true;
    auto scanned = index.ScanWriteback([&](const metadata::WritebackItem& item) {
      if (in_flight.contains(KeyId(item))) {
        return true;
      }
      const std::int64_t due_ms = std::max(item.enqueued_ms + options.delay.count(), item.retry_ms);
      if (!flushing && now < due_ms) {
        next_due = std::min(next_due, due_ms);
        return true;
      }
      if (steward != nullptr && !steward->ActsOn(item.bucket, item.key)) {
        return true;  // another owner's to push; looked at again within a delay
      }
      if (due.size() == room) {
        whole_queue = false;  // more due than slots: look again when one frees
        return false;
      }
      due.push_back(item);
      return true;
    });
    if (!scanned.ok()) {
      spdlog::error("write-back: cannot read the queue: {}", scanned.error().message);
      return {};
    }
    next_scan_ms = whole_queue ? next_due : 0;
    return due;
  }

  // The oldest item's time, for /metrics and the admin API: a whole scan, so with a long
  // queue only every few seconds.
  void RefreshOldest() {
    const std::int64_t now = WallClockMs(clock);
    const auto backlog = index.WritebackBacklog().objects;
    if (backlog == 0) {
      oldest_enqueued_ms.store(0, std::memory_order_relaxed);
      return;
    }
    if (backlog > kSmallQueue && now < next_oldest_ms) {
      return;
    }
    next_oldest_ms = now + kOldestRefreshMs;
    std::int64_t oldest = 0;
    auto scanned = index.ScanWriteback([&](const metadata::WritebackItem& item) {
      if (oldest == 0 || item.enqueued_ms < oldest) {
        oldest = item.enqueued_ms;
      }
      return true;
    });
    if (scanned.ok()) {
      oldest_enqueued_ms.store(oldest, std::memory_order_relaxed);
    }
  }

  // Starts pushes in the free slots.
  void Fill() {
    if (index.WritebackBacklog().objects == 0 ||
        (!Flushing() && WallClockMs(clock) < next_scan_ms)) {
      return;
    }
    for (auto& item : DueItems()) {
      std::string key = KeyId(item);
      in_flight.insert(key);
      if (!tasks.Spawn(ioc.get_executor(), Push(std::move(item)))) {
        in_flight.erase(key);  // stopping: the item stays queued for the next start
      }
    }
  }

  asio::awaitable<void> Loop() {
    ClockTimer timer(co_await asio::this_coro::executor, clock);
    for (;;) {
      if (!co_await timer.WaitFor(Period())) {
        co_return;  // cancelled: the worker stops
      }
      RefreshOldest();
      Fill();
    }
  }

  asio::awaitable<void> Push(metadata::WritebackItem item) {
    auto pushed = co_await PushState(item);
    if (pushed.ok() && steward != nullptr) {
      // The other owners learn the key is clean (and drop their item); when they cannot
      // now, the next sync of the key (a write, a repair) tells them, and until then one
      // that became the primary would only push the same state again.
      auto synced = co_await steward->Changed(item.bucket, item.key);
      if (!synced.ok()) {
        spdlog::warn("write-back: {}/{} pushed, not yet known clean on its other owners: {}",
                     item.bucket.str(), item.key.str(), synced.error().message);
      }
    }
    in_flight.erase(KeyId(item));
    if (pushed.ok()) {
      pushes.fetch_add(1, std::memory_order_relaxed);
      // The upstream takes writes: refill the slot now rather than at the next tick (the
      // key may also have changed during the push and be due again). Posted: a push to a
      // tier that answers at once would otherwise start the next inside this one's frame.
      next_scan_ms = 0;
      asio::post(ioc, [this] { Fill(); });
      co_return;
    }
    failures.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t attempts = item.attempts + 1;
    auto backoff = options.retry_base * (1ll << std::min<std::uint32_t>(attempts - 1, 16));
    backoff = std::min<std::chrono::milliseconds>(backoff, options.retry_max);
    // Full jitter on the second half, so a recovered upstream is not hit all at once.
    const auto half = backoff.count() / 2;
    const std::int64_t wait = half + static_cast<std::int64_t>(jitter() % (half + 1));
    spdlog::warn("write-back: push of {}/{} failed (attempt {}), retry in {} ms: {}",
                 item.bucket.str(), item.key.str(), attempts, wait, pushed.error().message);
    const std::int64_t retry_ms = WallClockMs(clock) + wait;
    next_scan_ms = std::min(next_scan_ms, retry_ms);
    auto deferred = index.DeferWriteback(item, retry_ms, pushed.error().message);
    if (!deferred.ok()) {
      spdlog::error("write-back: cannot record the failure of {}/{}: {}", item.bucket.str(),
                    item.key.str(), deferred.error().message);
    }
  }

  // Pushes the key's current state (its whole history in a versioned bucket) and
  // finishes the item.
  asio::awaitable<Result<void>> PushState(const metadata::WritebackItem& item) {
    auto bucket = index.GetBucket(item.bucket);
    if (!bucket.ok()) {
      if (bucket.error().code != ErrorCode::kNotFound) {
        co_return std::move(bucket).error();
      }
      // The bucket was deleted (it was empty): nothing of it is left to push.
      auto finished = index.FinishWriteback(item, std::nullopt);
      if (!finished.ok()) {
        co_return std::move(finished).error();
      }
      co_return Ok();
    }
    if (!bucket->versioning.empty()) {
      co_return co_await PushHistory(*bucket, item);
    }
    auto current = index.GetObject(item.bucket, item.key);
    if (!current.ok() && current.error().code != ErrorCode::kNotFound) {
      co_return std::move(current).error();
    }
    std::optional<metadata::UpstreamCopy> copy;
    if (!current.ok() || current->delete_marker) {
      // No defaulted arguments into a coroutine: GCC 12 frees their temporaries wrongly.
      const std::string any_version;
      auto deleted = co_await upstream.Remove(UpstreamLocationOf(*bucket, item.key), any_version);
      if (!deleted.ok()) {
        co_return std::move(deleted).error();
      }
    } else if (std::any_of(current->placements.begin(), current->placements.end(),
                           [&](const auto& p) { return p.tier == bucket->upstream_tier; })) {
      // Already upstream (it became current again when a newer version was deleted); its
      // local copy may even be gone. Nothing to send.
    } else {
      auto put = co_await PutVersion(*bucket, *current);
      if (!put.ok()) {
        co_return std::move(put).error();
      }
      copy = std::move(put).value();
    }
    auto finished = index.FinishWriteback(item, copy);
    if (!finished.ok()) {
      co_return std::move(finished).error();
    }
    if (copy) {
      LeaveToUpstream(*current, bucket->upstream_tier);
    }
    co_return Ok();
  }

  // A version whose storage class names the upstream (a PUT with GLACIER) keeps no local
  // copy once the upstream has it; a GET reads it through.
  void LeaveToUpstream(const metadata::ObjectRecord& version, const std::string& tier) {
    if (!options.cold_classes.contains(version.storage_class)) {
      return;
    }
    auto evicted = store.EvictLocalCopy(version, tier);
    if (!evicted.ok()) {
      spdlog::warn("write-back: {}/{} ({}) keeps its local copy: {}", version.bucket.str(),
                   version.key.str(), version.storage_class, evicted.error().message);
    }
  }

  // A versioned key: every version and delete marker the upstream lacks goes up in
  // commit order, each recorded as it lands (so a failure resumes after the last one),
  // then the versions deleted by id since they went up are deleted there too.
  asio::awaitable<Result<void>> PushHistory(const metadata::BucketRecord& bucket,
                                            const metadata::WritebackItem& item) {
    static constexpr std::size_t kVersionsPerRead = 64;
    for (bool more = true; more;) {
      auto versions =
          index.UnpushedVersions(item.bucket, item.key, bucket.upstream_tier, kVersionsPerRead);
      if (!versions.ok()) {
        co_return std::move(versions).error();
      }
      more = versions->size() == kVersionsPerRead;
      for (const auto& version : *versions) {
        auto copy = co_await PushVersion(bucket, version);
        if (!copy.ok()) {
          co_return std::move(copy).error();
        }
        auto recorded = index.RecordUpstreamCopy(item.bucket, item.key, *copy);
        if (!recorded.ok()) {
          co_return std::move(recorded).error();
        }
        if (!*recorded) {
          // Deleted (or replaced) while it went up: the upstream must not keep it. The
          // change that removed it has its own item, which pushes whatever follows.
          auto undone = co_await DeleteUpstreamVersion(bucket, item.key, *copy);
          if (!undone.ok()) {
            co_return std::move(undone).error();
          }
          more = false;
          break;
        }
        if (!version.delete_marker) {
          LeaveToUpstream(version, bucket.upstream_tier);
        }
      }
    }
    for (const auto& upstream_id : item.upstream_deletes) {
      auto deleted = co_await upstream.Remove(UpstreamLocationOf(bucket, item.key), upstream_id);
      if (!deleted.ok()) {
        co_return std::move(deleted).error();
      }
    }
    auto finished = index.FinishWriteback(item, std::nullopt);
    if (!finished.ok()) {
      co_return std::move(finished).error();
    }
    co_return Ok();
  }

  // What the index records of `version` once the upstream holds it at `location`.
  metadata::UpstreamCopy CopyOf(const metadata::ObjectRecord& version,
                                const metadata::UpstreamLocation& location) const {
    metadata::UpstreamCopy copy;
    copy.version_id = version.version_id;
    copy.etag = version.etag;
    copy.last_modified_ms = version.last_modified_ms;
    copy.delete_marker = version.delete_marker;
    copy.placement.tier = upstream.name();
    copy.placement.extents.push_back(
        {metadata::EncodeUpstreamLocation(location), version.delete_marker ? 0 : version.size});
    return copy;
  }

  // One version as its own upstream version: a PUT, or a DELETE making a delete marker.
  asio::awaitable<Result<metadata::UpstreamCopy>> PushVersion(
      const metadata::BucketRecord& bucket, const metadata::ObjectRecord& version) {
    if (!version.delete_marker) {
      co_return co_await PutVersion(bucket, version);
    }
    const std::string latest;
    auto marked = co_await upstream.Remove(UpstreamLocationOf(bucket, version.key), latest);
    if (!marked.ok()) {
      co_return std::move(marked).error();
    }
    co_return CopyOf(version, {"", marked->marker_version_id});
  }

  asio::awaitable<Result<void>> DeleteUpstreamVersion(const metadata::BucketRecord& bucket,
                                                      const ObjectKey& key,
                                                      const metadata::UpstreamCopy& copy) {
    const auto location = metadata::DecodeUpstreamLocation(copy.placement.extents.front().location);
    if (location.version_id.empty()) {
      co_return Ok();  // the upstream keeps no versions: the next push replaces it
    }
    auto deleted = co_await upstream.Remove(UpstreamLocationOf(bucket, key), location.version_id);
    if (!deleted.ok()) {
      co_return std::move(deleted).error();
    }
    co_return Ok();
  }

  asio::awaitable<Result<metadata::UpstreamCopy>> PutVersion(const metadata::BucketRecord& bucket,
                                                             const metadata::ObjectRecord& record) {
    auto opened = store.OpenObject(record);
    if (!opened.ok()) {
      co_return std::move(opened).error();
    }
    auto source = std::make_shared<LocalCopyReader>(std::move(opened).value());
    if (source->size() != record.size) {
      co_return Error(ErrorCode::kCorruption, "the local copy of " + record.key.str() + " has " +
                                                  std::to_string(source->size()) + " bytes, " +
                                                  std::to_string(record.size) + " recorded");
    }
    // The CRC64NVME goes as a header (UpstreamHeaders): the upstream checks it, and the
    // local reads checked every chunk against the same bytes' CRCs on the way.
    const std::optional<std::uint64_t> unchecked;
    auto put = co_await upstream.PutFrom(UpstreamLocationOf(bucket, record.key), std::move(source),
                                         UpstreamHeaders(record), unchecked);
    if (!put.ok()) {
      co_return std::move(put).error();
    }
    if (put->size != record.size) {
      co_return Error(ErrorCode::kCorruption, "the upstream stored " + std::to_string(put->size) +
                                                  " bytes of " + record.key.str() + ", " +
                                                  std::to_string(record.size) + " recorded");
    }
    const std::string etag = put->etag;
    if (IsMd5Etag(record.etag) && IsMd5Etag(etag) && etag != record.etag) {
      co_return Error(ErrorCode::kCorruption, "the upstream stored " + record.key.str() +
                                                  " with ETag " + etag + ", expected " +
                                                  record.etag);
    }
    // A versioned bucket reads its versions back by upstream version id; an unversioned
    // one by key, so that revalidation notices a change made behind strata's back.
    const std::string upstream_version = bucket.versioning.empty() ? "" : put->version_id;
    co_return CopyOf(record, {etag, upstream_version});
  }
};

WritebackWorker::WritebackWorker(metadata::Index& index, ObjectStore& store, Tier& upstream,
                                 WritebackOptions options, const Clock& clock)
    : state_(std::make_shared<State>(index, store, upstream, options, clock)) {}

WritebackWorker::~WritebackWorker() {
  if (thread_.joinable()) {
    // Stop accepting, cancel, wait: the loop ends and every push in flight stops at its
    // next step (its item stays queued, retried at the next start).
    state_->tasks.Close();
    state_->tasks.Cancel();
    state_->tasks.Join();
    // The tier's connections for this thread belong to the io_context: dropped on its
    // thread, then it stops.
    asio::post(state_->ioc, [state = state_] {
      state->upstream.ReleaseThread();
      state->ioc.stop();
    });
    thread_.join();
  }
}

void WritebackWorker::SetSteward(KeySteward* steward) { state_->steward = steward; }

void WritebackWorker::Start() {
  (void)state_->tasks.Spawn(state_->ioc.get_executor(), state_->Loop());
  thread_ = std::thread([state = state_] {
    auto guard = asio::make_work_guard(state->ioc);
    state->ioc.run();
  });
}

void WritebackWorker::FlushUntil(SteadyTime deadline) {
  state_->flush_until_ns.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
}

WritebackStats WritebackWorker::stats() const {
  return {state_->pushes.load(std::memory_order_relaxed),
          state_->failures.load(std::memory_order_relaxed),
          state_->oldest_enqueued_ms.load(std::memory_order_relaxed)};
}

}  // namespace strata::storage
