#include "storage/upstream/fetcher.h"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "common/clock_timer.h"
#include "common/task_group.h"
#include "metadata/codec.h"
#include "storage/integrity.h"
#include "storage/upstream/s3_client.h"
#include "storage/upstream/upstream_record.h"

namespace strata::storage {
namespace asio = boost::asio;

namespace {
// How often a fetch waiting for another copy of its key looks again.
constexpr auto kFlightPoll = std::chrono::milliseconds(20);
// One read of the upstream copy: a ranged GET on the upstream tier, so large enough that
// a request's cost is small beside its bytes; one such buffer per fetch in flight.
constexpr std::size_t kReadBytes = 4 << 20;

// The tier reader's description of an upstream object, as the S3 client gives a HEAD.
upstream::ObjectInfo InfoOf(const TierObjectInfo& info) {
  upstream::ObjectInfo out;
  out.size = info.size;
  out.etag = "\"" + info.etag + "\"";
  out.last_modified = info.last_modified;
  out.content_type = info.content_type;
  out.version_id = info.version_id;
  out.headers = info.headers;
  return out;
}
}  // namespace

struct Fetcher::State {
  ObjectStore& store;
  Upstream& upstream;
  Tier& tier;
  FetchOptions options;
  const Clock& clock;
  CopyFlights* flights;
  // The fetches. Before the io_context: a frame the io_context destroys unfinished still
  // uncounts itself.
  TaskGroup tasks;
  asio::io_context ioc;
  // The prefetch jobs' client (client()); fetches read through `tier`.
  std::unique_ptr<upstream::S3Client> client;

  struct Job {
    metadata::ObjectRecord record;
    FetchDone done;
    FetchKind kind = FetchKind::kRestore;
  };
  std::mutex mu;  // guards waiting and in_flight (Enqueue runs on any thread)
  std::deque<Job> waiting;
  int in_flight = 0;

  std::atomic<std::uint64_t> fetched{0};
  std::atomic<std::uint64_t> fetched_bytes{0};
  std::atomic<std::uint64_t> skipped{0};
  std::atomic<std::uint64_t> failed{0};

  State(ObjectStore& s, Upstream& u, Tier& t, FetchOptions o, const Clock& c, CopyFlights* f)
      : store(s), upstream(u), tier(t), options(o), clock(c), flights(f) {}

  // On ioc's thread: starts waiting jobs while slots are free (none once the fetcher
  // stops). The coroutines hold a plain pointer: the ioc they run on belongs to this
  // State, which outlives them (the destructor joins them first). A fetch starts inline
  // and may run to its end at once (a tier that answers without waiting), taking `mu`
  // itself: it is spawned outside the lock.
  void Pump() {
    for (;;) {
      Job job;
      {
        std::lock_guard lock(mu);
        if (in_flight >= options.concurrency || waiting.empty() || tasks.closed()) {
          return;
        }
        job = std::move(waiting.front());
        waiting.pop_front();
        ++in_flight;
      }
      if (!tasks.Spawn(ioc.get_executor(), Run(this, std::move(job)))) {
        std::lock_guard lock(mu);  // stopping: the job is dropped, as waiting ones are
        --in_flight;
        return;
      }
    }
  }

  static asio::awaitable<void> Run(State* self, Job job) {
    const SteadyTime started = self->clock.SteadyNow();
    auto delay = self->options.retry_base;
    Result<bool> result = false;
    std::shared_ptr<CopyFlights::Seat> seat;  // held until the copy landed or failed
    try {
      if (self->flights != nullptr && job.kind != FetchKind::kRepair) {
        // A repair goes ahead: it replaces a damaged copy a reader may be waiting for.
        seat = co_await TakeSeat(*self->flights, job.record);
      }
      result = co_await self->Fetch(job.record, job.kind);
      ClockTimer timer(co_await asio::this_coro::executor, self->clock);
      while (job.kind != FetchKind::kRepair && !result.ok() && result.error().retryable &&
             self->clock.SteadyNow() - started + delay < self->options.retry_for) {
        if (delay == self->options.retry_base) {  // once per outage, not per attempt
          spdlog::warn("fetch: {}/{}: {}; trying again with backoff", job.record.bucket.str(),
                       job.record.key.str(), result.error().message);
        }
        co_await timer.WaitFor(delay);
        delay = std::min(delay * 2, self->options.retry_max);
        result = co_await self->Fetch(job.record, job.kind);
      }
    } catch (const boost::system::system_error&) {
      // Cancelled (the fetcher stops): whoever waits for the answer gets one. The
      // temporary file went with the frames that held it.
      result = Error(ErrorCode::kUnavailable, "the fetcher stopped", true);
    }
    if (!result.ok()) {
      ++self->failed;
      spdlog::warn("fetch: {}/{} (version {}) not fetched: {}", job.record.bucket.str(),
                   job.record.key.str(), job.record.version_id.str(), result.error().message);
    } else if (*result) {
      ++self->fetched;
      self->fetched_bytes += job.record.size;
    } else {
      ++self->skipped;
    }
    if (job.done) {
      job.done(result);
    }
    {
      std::lock_guard lock(self->mu);
      --self->in_flight;
    }
    // Posted, not called: a next fetch that ends at once would otherwise start inside this
    // one's frame, and so on down the queue.
    asio::post(self->ioc, [self] { self->Pump(); });
  }

  // The lead of `record`'s key in `flights`, once whoever leads now is done. The lead may
  // be a GET on an I/O thread: there is no executor to be told on, so this looks again
  // every kFlightPoll (a plain timer: it decides nothing by time).
  static asio::awaitable<std::shared_ptr<CopyFlights::Seat>> TakeSeat(
      CopyFlights& flights, const metadata::ObjectRecord& record) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
      auto seat = flights.Join(record.bucket, record.key);
      if (seat->leader()) {
        co_return seat;
      }
      while (!seat->done()) {
        timer.expires_after(kFlightPoll);
        co_await timer.async_wait(asio::use_awaitable);
      }
    }
  }

  asio::awaitable<Result<bool>> Fetch(const metadata::ObjectRecord& record, FetchKind kind) {
    if (kind == FetchKind::kRestore && store.HasLocalCopy(record)) {
      co_return false;
    }
    auto bucket = store.GetBucket(record.bucket);
    if (!bucket.ok()) {
      co_return std::move(bucket).error();
    }
    TierOpenOptions pin;
    if (kind == FetchKind::kNewCopy) {
      pin.if_match = record.etag;  // what the listing showed
    } else {
      const metadata::Placement* placed = metadata::PlacementOn(record, tier.name());
      if (placed == nullptr) {
        co_return Error(ErrorCode::kInvalidArgument, "the version has no copy on the upstream");
      }
      const auto location = metadata::DecodeUpstreamLocation(placed->extents.front().location);
      pin.if_match = location.etag;
      pin.version_id = location.version_id;
    }
    auto opened = co_await tier.Open(bucket->upstream_bucket + "/" + record.key.str(), pin);
    if (!opened.ok()) {
      co_return std::move(opened).error();
    }
    std::unique_ptr<TierReader> reader = std::move(opened).value();
    auto begun = store.BeginWrite(record.bucket, {});
    if (!begun.ok()) {
      co_return std::move(begun).error();
    }
    std::unique_ptr<PendingWrite> write = std::move(begun).value();
    // Background work: the blocking append keeps this thread's other fetches waiting for
    // the disk, never a request. A failed read drops `write`: nothing is committed.
    std::vector<char> block(
        static_cast<std::size_t>(std::min<std::uint64_t>(kReadBytes, reader->size())));
    for (std::uint64_t offset = 0; offset < reader->size();) {
      auto n = co_await reader->ReadAsync(offset, std::span<char>(block.data(), block.size()));
      if (!n.ok()) {
        co_return std::move(n).error();
      }
      if (*n == 0) {
        break;  // the size check below names the shortfall
      }
      auto appended = write->Append(std::string_view(block.data(), *n));
      if (!appended.ok()) {
        co_return std::move(appended).error();
      }
      offset += *n;
    }
    const metadata::ObjectRecord described =
        kind == FetchKind::kNewCopy
            ? upstream::RecordFromUpstream(*bucket, record.key, InfoOf(reader->info()))
            : record;
    if (write->size() != described.size) {
      co_return Error(ErrorCode::kCorruption, "the upstream sent " + std::to_string(write->size()) +
                                                  " bytes, the version has " +
                                                  std::to_string(described.size));
    }
    const bool md5_etag =
        described.etag.size() == 32 && described.etag.find('-') == std::string::npos;
    if (md5_etag && write->Md5Hex() != described.etag) {
      co_return Error(ErrorCode::kCorruption,
                      "the upstream's bytes do not match ETag " + described.etag);
    }
    if (kind == FetchKind::kRepair) {
      // The CRC64NVME recorded when the version arrived (every local write computes it):
      // the repaired copy must be those bytes, whatever the upstream's ETag says.
      const std::string recorded = RecordedCrc64(record);
      const std::string fetched = write->Checksum(ChecksumAlgorithm::kCrc64Nvme).value_or("");
      if (recorded.empty() && !md5_etag) {
        co_return Error(ErrorCode::kCorruption,
                        "no recorded CRC64NVME or MD5 ETag to verify the upstream's copy with");
      }
      if (!recorded.empty() && fetched != recorded) {
        co_return Error(ErrorCode::kCorruption, "the upstream's copy has CRC64NVME " + fetched +
                                                    ", the version recorded " + recorded);
      }
      co_return store.ReplaceLocalCopy(std::move(write), record);
    }
    if (kind == FetchKind::kRestore) {
      co_return store.RestoreLocalCopy(std::move(write), record);
    }
    auto committed = store.CommitCachedCopy(std::move(write), described);
    if (!committed.ok() && committed.error().code == ErrorCode::kPreconditionFailed) {
      co_return false;  // the key got a version here meanwhile: that one counts
    }
    if (!committed.ok()) {
      co_return std::move(committed).error();
    }
    co_return true;
  }
};

Fetcher::Fetcher(ObjectStore& store, Upstream& upstream, Tier& upstream_tier, FetchOptions options,
                 const Clock& clock, CopyFlights* flights)
    : state_(std::make_unique<State>(store, upstream, upstream_tier, options, clock, flights)) {
  state_->client = upstream.NewClient(state_->ioc.get_executor());
}

Fetcher::~Fetcher() {
  if (thread_.joinable()) {
    // Stop accepting, cancel, wait: every fetch in flight answers kUnavailable; the
    // waiting ones are dropped unanswered with the queue.
    state_->tasks.Close();
    state_->tasks.Cancel();
    state_->tasks.Join();
    // The client's sockets belong to the io_context: drop it on its thread, then stop.
    asio::post(state_->ioc, [state = state_.get()] {
      state->client.reset();
      state->tier.ReleaseThread();
      state->ioc.stop();
    });
    thread_.join();
  } else {
    state_->client.reset();
  }
  state_.reset();
}

void Fetcher::Start() {
  thread_ = std::thread([state = state_.get()] {
    auto guard = asio::make_work_guard(state->ioc);
    state->ioc.run();
  });
}

bool Fetcher::Enqueue(metadata::ObjectRecord record, FetchDone done, FetchKind kind) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->waiting.size() >= state_->options.max_waiting) {
      return false;
    }
    state_->waiting.push_back({std::move(record), std::move(done), kind});
  }
  asio::post(state_->ioc, [state = state_.get()] { state->Pump(); });
  return true;
}

FetchStats Fetcher::stats() const {
  FetchStats s;
  s.fetched = state_->fetched.load();
  s.fetched_bytes = state_->fetched_bytes.load();
  s.skipped = state_->skipped.load();
  s.failed = state_->failed.load();
  std::lock_guard lock(state_->mu);
  s.in_flight = static_cast<std::uint64_t>(state_->in_flight);
  s.waiting = state_->waiting.size();
  return s;
}

asio::any_io_executor Fetcher::executor() const { return state_->ioc.get_executor(); }

upstream::S3Client& Fetcher::client() const { return *state_->client; }

}  // namespace strata::storage
