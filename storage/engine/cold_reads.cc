#include "storage/engine/cold_reads.h"

#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/co_try.h"
#include "common/http_time.h"
#include "common/offload.h"
#include "metadata/codec.h"
#include "metadata/read_inline.h"
#include "storage/engine/prefetch_jobs.h"
#include "storage/engine/tier_caches.h"
#include "storage/listing_merge.h"
#include "storage/upstream/upstream_record.h"

namespace strata::storage {

namespace asio = boost::asio;

namespace {

// How often a GET waiting for another read's fill of the same key looks again. The lead
// may be on another core (or the fetcher's thread), so there is no executor to notify.
constexpr auto kFlightPoll = std::chrono::milliseconds(20);

std::string CopyId(const metadata::ObjectRecord& record) {
  return record.bucket.str() + '\0' + record.key.str();
}

// Where the upstream keeps `record` (kUnavailable when nowhere: a dirty version).
Result<metadata::UpstreamLocation> UpstreamLocationOf(const metadata::ObjectRecord& record,
                                                      std::string_view tier) {
  const metadata::Placement* upstream = metadata::PlacementOn(record, tier);
  if (upstream == nullptr) {
    return Error(ErrorCode::kUnavailable, "the object has no copy strata can read", true);
  }
  return metadata::DecodeUpstreamLocation(upstream->extents.front().location);
}

// Streams the upstream's bytes of the object at `location` (pinned to its ETag and
// version) to `to_client` and, when `fill` is given and still good, into the hot tier. A
// failed append stops only the fill while there is a client to serve (`fill_ok` false),
// and the whole read when there is none.
asio::awaitable<Result<void>> StreamFromUpstream(Upstream& upstream,
                                                 const std::string& upstream_bucket,
                                                 const ObjectKey& key,
                                                 const metadata::UpstreamLocation& location,
                                                 std::optional<ColdRange> range, PendingWrite* fill,
                                                 bool& fill_ok, const ByteSink* to_client) {
  auto& client = upstream.Client(co_await asio::this_coro::executor);
  upstream::GetRequest request;
  request.if_match = "\"" + location.etag + "\"";  // the object the header described
  request.version_id = location.version_id;
  if (range) {
    request.range = std::make_pair(range->first, range->last);
  }
  upstream::BodySink sink = [&key, fill, &fill_ok,
                             to_client](std::string_view block) -> asio::awaitable<Result<void>> {
    if (fill != nullptr && fill_ok) {
      auto appended = co_await fill->AppendAsync(block);
      if (!appended.ok()) {
        spdlog::warn("read-through: cannot cache {}: {}", key.str(), appended.error().message);
        fill_ok = false;  // a client still gets its bytes
        if (to_client == nullptr) {
          co_return appended;
        }
      }
    }
    if (to_client == nullptr) {
      co_return Ok();
    }
    co_return co_await (*to_client)(block);
  };
  STRATA_CO_RETURN_IF_ERROR(
      co_await client.GetObject(upstream_bucket, key.str(), std::move(request), std::move(sink)));
  co_return Ok();
}

// The hot tier's room an admitted fill holds until it has landed (or failed): eviction
// passes leave it out, so fills and prefetches in flight never add up past the high mark.
class RoomHeld {
 public:
  RoomHeld(TierCaches* held_on, std::uint64_t size) : caches_(held_on), bytes_(size) {}
  RoomHeld(RoomHeld&& other) noexcept : caches_(other.caches_), bytes_(other.bytes_) {
    other.caches_ = nullptr;
  }
  RoomHeld(const RoomHeld&) = delete;
  RoomHeld& operator=(const RoomHeld&) = delete;
  RoomHeld& operator=(RoomHeld&&) = delete;
  ~RoomHeld() {
    if (caches_ != nullptr) {
      caches_->ReleaseRoom(bytes_);
    }
  }

 private:
  TierCaches* caches_;
  std::uint64_t bytes_;
};

// Waits until the lead of `seat`'s flight is done.
asio::awaitable<void> WaitForLead(const CopyFlights::Seat& seat) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!seat.done()) {
    timer.expires_after(kFlightPoll);
    co_await timer.async_wait(asio::use_awaitable);
  }
}

// S3 orders keys by their UTF-8 bytes and takes only valid UTF-8 in start-after. The
// listing skips past a common prefix with a run of 0xff bytes; the largest code point
// (U+10FFFF) does the same upstream.
std::string UpstreamStartAfter(std::string cursor) {
  const std::size_t run = cursor.find_last_not_of('\xff');
  if (run + 1 < cursor.size()) {
    cursor.resize(run + 1);
    cursor += "\xf4\x8f\xbf\xbf";
  }
  return cursor;
}

}  // namespace

// One read of an object from the upstream (storage/cold_read.h).
class ColdReadOfObject final : public ColdRead {
 public:
  ColdReadOfObject(ColdReads& reads, const metadata::BucketRecord& bucket,
                   metadata::ObjectRecord record, metadata::UpstreamLocation location,
                   ColdReadKind kind, bool restore, std::shared_ptr<CopyFlights::Seat> seat)
      : reads_(reads),
        upstream_bucket_(bucket.upstream_bucket),
        record_(std::move(record)),
        location_(std::move(location)),
        kind_(kind),
        restore_(restore),
        seat_(std::move(seat)) {}

  const metadata::ObjectRecord& record() const override { return record_; }

  asio::awaitable<Result<void>> Stream(std::optional<ColdRange> range, ByteSink sink,
                                       TaskGroup* background) override {
    if (streamed_) {
      co_return Error(ErrorCode::kInternal, "a cold read streamed twice");
    }
    streamed_ = true;
    auto& parts = reads_.parts_;
    // A full hot tier caches a miss only when it is read more often than what it would
    // displace (storage/cache_policy.h); otherwise the bytes just stream through.
    const bool admitted = kind_ == ColdReadKind::kWhole && !range &&
                          (parts.tier_caches == nullptr || parts.tier_caches->AdmitFill(record_));
    RoomHeld room(admitted ? parts.tier_caches : nullptr, record_.size);
    std::unique_ptr<PendingWrite> fill;
    if (admitted) {
      auto begun = parts.store.BeginWrite(record_.bucket, {});
      if (begun.ok()) {
        fill = std::move(begun).value();
      } else {
        spdlog::warn("read-through: cannot cache {}: {}", record_.key.str(), begun.error().message);
      }
    }
    bool fill_ok = fill != nullptr;
    const std::uint64_t length = range ? range->last - range->first + 1 : record_.size;
    if (length > 0) {
      STRATA_CO_RETURN_IF_ERROR(co_await StreamFromUpstream(parts.upstream, upstream_bucket_,
                                                            record_.key, location_, range,
                                                            fill.get(), fill_ok, &sink));
    }
    if (!fill_ok) {
      co_return Ok();
    }
    // The seat stays taken until the copy has landed, so a GET of the key meanwhile waits
    // for the copy rather than fetching it again; the room stays held as long.
    auto commit = CommitInBackground(&reads_, std::move(fill), record_, location_.etag, restore_,
                                     std::move(seat_), std::move(room));
    if (background != nullptr) {
      // Refused once the server stops: the fill is dropped with its temporary file.
      (void)background->Spawn(co_await asio::this_coro::executor, std::move(commit));
    } else {
      co_await std::move(commit);
    }
    co_return Ok();
  }

 private:
  static asio::awaitable<void> CommitInBackground(
      ColdReads* reads, std::unique_ptr<PendingWrite> fill, metadata::ObjectRecord record,
      std::string upstream_etag, bool restore,
      [[maybe_unused]] std::shared_ptr<CopyFlights::Seat> seat, [[maybe_unused]] RoomHeld room) {
    co_await reads->CommitFill(std::move(fill), std::move(record), std::move(upstream_etag),
                               restore);
  }

  ColdReads& reads_;
  std::string upstream_bucket_;
  metadata::ObjectRecord record_;
  metadata::UpstreamLocation location_;
  ColdReadKind kind_;
  bool restore_;
  std::shared_ptr<CopyFlights::Seat> seat_;
  bool streamed_ = false;
};

bool ColdReads::Validations::Fresh(const std::string& id, const std::string& etag,
                                   std::chrono::milliseconds max_age) const {
  const Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.lock);
  auto it = shard.checked.find(id);
  return it != shard.checked.end() && it->second.first == etag &&
         clock_.SteadyNow() - it->second.second < max_age;
}

void ColdReads::Validations::Mark(const std::string& id, const std::string& etag) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.lock);
  if (shard.checked.size() >= kMaxValidations / kShards) {
    shard.checked.clear();  // bounded memory: every copy is simply checked once more
  }
  shard.checked[id] = {etag, clock_.SteadyNow()};
}

asio::awaitable<Result<std::optional<metadata::WritebackItem>>> ColdReads::WaitingChange(
    const BucketName& bucket, const ObjectKey& key) {
  auto& index = parts_.index;
  co_return co_await metadata::ReadInline(parts_.blocking_pool,
                                          [&] { return index.GetWriteback(bucket, key); });
}

asio::awaitable<Result<metadata::ObjectRecord>> ColdReads::DescribeUpstreamObject(
    const metadata::BucketRecord& bucket, const ObjectKey& key) {
  // A change of the key waiting for the upstream (a delete) hides the upstream's copy.
  STRATA_CO_TRY(auto waiting, co_await WaitingChange(bucket.name, key));
  if (waiting.has_value()) {
    co_return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
  }
  auto& client = parts_.upstream.Client(co_await asio::this_coro::executor);
  // No defaulted arguments into a coroutine: GCC 12 frees their temporaries wrongly.
  const upstream::GetRequest plain;
  STRATA_CO_TRY(auto info, co_await client.HeadObject(bucket.upstream_bucket, key.str(), plain));
  co_return upstream::RecordFromUpstream(bucket, key, info);
}

asio::awaitable<Result<metadata::ObjectRecord>> ColdReads::RecordToRead(
    const metadata::BucketRecord& bucket, const ObjectKey& key,
    std::optional<metadata::ObjectRecord> known) {
  if (known.has_value()) {
    co_return std::move(*known);
  }
  co_return co_await DescribeUpstreamObject(bucket, key);
}

asio::awaitable<Result<std::unique_ptr<ColdRead>>> ColdReads::Open(
    const metadata::BucketRecord& bucket, ObjectKey key,
    std::optional<metadata::ObjectRecord> evicted, ColdReadKind kind) {
  const bool restore = evicted.has_value();
  if (restore) {
    // A dirty version has nothing upstream to read.
    STRATA_CO_RETURN_IF_ERROR(UpstreamLocationOf(*evicted, bucket.upstream_tier));
  }
  // Without it, a delete of the key waiting to be pushed answers kNoSuchKey in
  // RecordToRead (DescribeUpstreamObject), once, after the flight's seat.
  std::shared_ptr<CopyFlights::Seat> seat;
  if (kind == ColdReadKind::kWhole) {
    seat = parts_.flights.Join(bucket.name, key);
    if (!seat->leader()) {
      co_await WaitForLead(*seat);
      co_return std::unique_ptr<ColdRead>();  // the cached copy now, or a read-through again
    }
  }
  STRATA_CO_TRY(auto record, co_await RecordToRead(bucket, key, std::move(evicted)));
  STRATA_CO_TRY(auto location, UpstreamLocationOf(record, bucket.upstream_tier));
  if (kind != ColdReadKind::kHead && parts_.prefetch != nullptr) {
    parts_.prefetch->ObserveMiss(record);  // the prefetcher watches misses for scans
  }
  co_return std::unique_ptr<ColdRead>(std::make_unique<ColdReadOfObject>(
      *this, bucket, std::move(record), std::move(location), kind, restore, std::move(seat)));
}

asio::awaitable<bool> ColdReads::CommitFill(std::unique_ptr<PendingWrite> fill,
                                            metadata::ObjectRecord record,
                                            std::string upstream_etag, bool restore) {
  if (fill->size() != record.size) {
    spdlog::warn("read-through: {} arrived with {} bytes, upstream said {}: not cached",
                 record.key.str(), fill->size(), record.size);
    co_return false;
  }
  const bool md5_etag = record.etag.size() == 32 && record.etag.find('-') == std::string::npos;
  if (md5_etag && fill->Md5Hex() != record.etag) {
    spdlog::error("read-through: {} does not match the upstream's ETag {}: not cached",
                  record.key.str(), record.etag);
    co_return false;
  }
  const std::string id = CopyId(record);
  const std::string key = record.key.str();
  auto& store = parts_.store;
  TierCaches* caches = parts_.tier_caches;
  // What this fill's admission displaced goes first, so the tier never holds both.
  auto committed = co_await Offload(parts_.blocking_pool, [&]() -> Result<bool> {
    if (caches != nullptr) {
      caches->EvictDisplaced();
    }
    if (restore) {
      return store.RestoreLocalCopy(std::move(fill), record);
    }
    auto cached = store.CommitCachedCopy(std::move(fill), std::move(record));
    if (!cached.ok()) {
      return std::move(cached).error();
    }
    return true;
  });
  if (committed.ok() && *committed) {
    validations_.Mark(id, upstream_etag);
    co_return true;
  }
  // kPreconditionFailed: the key changed meanwhile (a write won); nothing to report.
  if (!committed.ok() && committed.error().code != ErrorCode::kPreconditionFailed) {
    spdlog::warn("read-through: cannot {} {}: {}", restore ? "restore" : "cache", key,
                 committed.error().message);
  }
  co_return false;
}

asio::awaitable<Result<bool>> ColdReads::Revalidate(const metadata::BucketRecord& bucket,
                                                    const metadata::ObjectRecord& record) {
  if (record.delete_marker) {
    co_return true;
  }
  const metadata::Placement* upstream = metadata::PlacementOn(record, bucket.upstream_tier);
  if (upstream == nullptr) {
    co_return true;  // dirty: the local copy is newer than anything upstream
  }
  if (!bucket.versioning.empty()) {
    // A versioned bucket's versions are each one upstream version, which never changes;
    // a newer one written upstream by another tool does not replace strata's history.
    co_return true;
  }
  const std::string id = CopyId(record);
  const auto location = metadata::DecodeUpstreamLocation(upstream->extents.front().location);
  const std::string& etag = location.etag;
  if (validations_.Fresh(id, etag, parts_.upstream.revalidate_after())) {
    co_return true;
  }
  auto& client = parts_.upstream.Client(co_await asio::this_coro::executor);
  upstream::GetRequest request;
  request.if_none_match = "\"" + etag + "\"";
  auto info = co_await client.HeadObject(bucket.upstream_bucket, record.key.str(), request);
  if (info.ok() && (info->not_modified || upstream::EtagValue(info->etag) == etag)) {
    validations_.Mark(id, etag);
    co_return true;
  }
  if (!info.ok() && info.error().code != ErrorCode::kNoSuchKey) {
    spdlog::warn("read-through: cannot revalidate {}/{} upstream, serving the local copy: {}",
                 bucket.name.str(), record.key.str(), info.error().message);
    co_return true;
  }
  // Changed or deleted behind strata's back: the local copy is stale.
  metadata::UpstreamCopy copy{record.version_id, record.etag, record.last_modified_ms, *upstream};
  auto& store = parts_.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(
      parts_.blocking_pool, [&] { return store.DropCachedCopy(bucket.name, record.key, copy); }));
  spdlog::info("read-through: {}/{} changed upstream; the local copy was dropped",
               bucket.name.str(), record.key.str());
  co_return false;
}

Result<std::vector<metadata::ObjectRecord>> ColdReads::UpstreamOnly(
    const metadata::BucketRecord& bucket, const std::vector<upstream::ListedObject>& listed) {
  std::vector<metadata::ObjectRecord> out;
  for (const auto& entry : listed) {
    const ObjectKey key(entry.key);
    auto local = parts_.index.GetObject(bucket.name, key);
    if (local.ok()) {
      continue;  // a version or a delete marker here: the index's word counts
    }
    if (local.error().code != ErrorCode::kNotFound) {
      return std::move(local).error();
    }
    auto waiting = parts_.index.GetWriteback(bucket.name, key);
    if (!waiting.ok()) {
      return std::move(waiting).error();
    }
    if (waiting->has_value()) {
      continue;  // deleted here, the delete not pushed yet
    }
    metadata::ObjectRecord record;
    record.bucket = bucket.name;
    record.key = key;
    record.size = entry.size;
    record.etag = upstream::EtagValue(entry.etag);
    record.last_modified_ms = ParseIso8601(entry.last_modified).value_or(0);
    record.storage_class = entry.storage_class.empty() ? "STANDARD" : entry.storage_class;
    out.push_back(std::move(record));
  }
  return out;
}

asio::awaitable<Result<metadata::ListObjectsPage>> ColdReads::ListMerged(
    const metadata::BucketRecord& bucket, std::string prefix, std::string start_after,
    std::size_t max_keys) {
  auto& index = parts_.index;
  STRATA_CO_TRY(auto local, co_await metadata::ReadInline(parts_.blocking_pool, [&] {
                  return index.ListObjects(bucket.name, prefix, start_after, max_keys);
                }));
  auto& client = parts_.upstream.Client(co_await asio::this_coro::executor);
  upstream::ListRequest request;
  request.prefix = prefix;
  request.start_after = UpstreamStartAfter(start_after);
  request.max_keys = static_cast<int>(std::max<std::size_t>(max_keys, 1));
  STRATA_CO_TRY(auto listed,
                co_await client.ListObjectsV2(bucket.upstream_bucket, std::move(request)));
  std::vector<ListingSourcePage> sources(2);
  sources[0].truncated = local.truncated && !local.objects.empty();
  if (sources[0].truncated) {
    sources[0].last_listed = local.objects.back().key.str();
  }
  sources[0].entries = std::move(local.objects);
  sources[1].truncated = listed.truncated && !listed.objects.empty();
  if (sources[1].truncated) {
    sources[1].last_listed = listed.objects.back().key;
  }
  STRATA_CO_TRY(sources[1].entries, co_await metadata::ReadInline(parts_.blocking_pool, [&] {
                  return UpstreamOnly(bucket, listed.objects);
                }));
  auto page = MergeListingPages(std::move(sources), max_keys);
  // A source that says it has more with an empty page bounds nothing, yet has more.
  page.truncated = page.truncated || local.truncated || listed.truncated;
  co_return page;
}

asio::awaitable<Result<std::optional<metadata::BucketRecord>>> ColdReads::Adopt(BucketName name,
                                                                                std::string owner) {
  using Adopted = std::optional<metadata::BucketRecord>;
  if (!IsValidBucketName(name.view())) {
    co_return Adopted();
  }
  auto& client = parts_.upstream.Client(co_await asio::this_coro::executor);
  upstream::ListRequest probe;
  probe.max_keys = 1;
  auto listed = co_await client.ListObjectsV2(name.str(), probe);
  if (!listed.ok()) {
    if (listed.error().code == ErrorCode::kNoSuchBucket) {
      co_return Adopted();
    }
    co_return std::move(listed).error();
  }
  // A bucket that keeps versions upstream keeps them through strata too, so pushes add
  // versions there rather than only the newest state.
  STRATA_CO_TRY(auto versioning, co_await client.GetBucketVersioning(name.str()));
  auto& store = parts_.store;
  const std::string tier = parts_.upstream.tier_name();
  const std::string region = parts_.config.server.region;
  auto created = co_await Offload(parts_.blocking_pool, [&]() -> Result<metadata::BucketRecord> {
    auto bucket = store.CreateBucket(name, owner, region, tier);
    if (bucket.ok() && !versioning.empty()) {
      STRATA_RETURN_IF_ERROR(store.SetBucketVersioning(name, versioning));
      bucket->versioning = versioning;
    }
    return bucket;
  });
  if (created.ok()) {
    spdlog::info("upstream bucket {} adopted (bound to tier {}, versioning \"{}\")", name.str(),
                 tier, versioning);
    co_return Adopted(std::move(created).value());
  }
  // Adopted concurrently by another request: use that record.
  STRATA_CO_TRY(auto existing, store.GetBucket(name));
  co_return Adopted(std::move(existing));
}

asio::awaitable<Result<metadata::ObjectRecord>> ColdReads::FetchLocalCopy(
    const metadata::BucketRecord& bucket, ObjectKey key,
    std::optional<metadata::ObjectRecord> known) {
  const bool restore = known.has_value();
  STRATA_CO_TRY(auto record, co_await RecordToRead(bucket, key, std::move(known)));
  STRATA_CO_TRY(auto location, UpstreamLocationOf(record, bucket.upstream_tier));
  STRATA_CO_TRY(std::unique_ptr<PendingWrite> fill, parts_.store.BeginWrite(bucket.name, {}));
  bool fill_ok = true;
  if (record.size > 0) {
    STRATA_CO_RETURN_IF_ERROR(co_await StreamFromUpstream(parts_.upstream, bucket.upstream_bucket,
                                                          key, location, std::nullopt, fill.get(),
                                                          fill_ok, nullptr));
  }
  const VersionId version = record.version_id;
  const bool committed =
      co_await CommitFill(std::move(fill), std::move(record), location.etag, restore);
  if (!committed) {
    co_return Error(ErrorCode::kUnavailable,
                    "the object changed while strata fetched it from the upstream", true);
  }
  co_return parts_.store.HeadVersion(bucket.name, key, version);
}

}  // namespace strata::storage
