#include "gateway/handlers/read_through.h"

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "common/http_time.h"
#include "gateway/conditions.h"
#include "gateway/handlers/object_io.h"
#include "gateway/offload.h"
#include "metadata/codec.h"
#include "storage/engine/prefetch_jobs.h"
#include "storage/engine/tier_caches.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/upstream_record.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;
using storage::upstream::RecordFromUpstream;

// How often a GET waiting for another GET's fill of the same key looks again.
constexpr auto kFlightPoll = std::chrono::milliseconds(20);

// When each clean copy was last found current upstream, by bucket and key, with the
// upstream ETag it was checked against. A copy missing here is checked on its next read
// (after a restart, or once the map was cleared on reaching its bound).
// Sharded by key, so GETs on different cores rarely meet on one lock.
class Validations {
 public:
  bool Fresh(const std::string& id, const std::string& etag,
             std::chrono::milliseconds max_age) const {
    const Shard& shard = ShardOf(id);
    std::lock_guard lock(shard.lock);
    auto it = shard.checked.find(id);
    return it != shard.checked.end() && it->second.first == etag &&
           std::chrono::steady_clock::now() - it->second.second < max_age;
  }
  void Mark(const std::string& id, const std::string& etag) {
    Shard& shard = ShardOf(id);
    std::lock_guard lock(shard.lock);
    if (shard.checked.size() >= kMaxEntriesPerShard) {
      shard.checked.clear();  // bounded memory: every copy is simply checked once more
    }
    shard.checked[id] = {etag, std::chrono::steady_clock::now()};
  }

 private:
  static constexpr std::size_t kShards = 64;
  static constexpr std::size_t kMaxEntriesPerShard = 1'000'000 / kShards;
  struct Shard {
    mutable std::mutex lock;
    std::unordered_map<std::string, std::pair<std::string, std::chrono::steady_clock::time_point>>
        checked;
  };
  Shard& ShardOf(const std::string& id) { return shards_[std::hash<std::string>{}(id) % kShards]; }
  const Shard& ShardOf(const std::string& id) const {
    return shards_[std::hash<std::string>{}(id) % kShards];
  }
  std::array<Shard, kShards> shards_;
};
Validations validations;

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

// Whole-object read-throughs in progress, by bucket and key, across all cores.
struct Flight {
  std::atomic<bool> done{false};
};
std::mutex flights_lock;
std::map<std::string, std::shared_ptr<Flight>> flights;

// The first GET of a key leads (fetches and fills); later ones follow (wait for it).
class FlightSeat {
 public:
  explicit FlightSeat(std::string id) : id_(std::move(id)) {
    std::lock_guard lock(flights_lock);
    auto& slot = flights[id_];
    leader_ = slot == nullptr;
    if (leader_) {
      slot = std::make_shared<Flight>();
    }
    flight_ = slot;
  }
  ~FlightSeat() {
    if (leader_) {
      flight_->done = true;
      std::lock_guard lock(flights_lock);
      flights.erase(id_);
    }
  }
  FlightSeat(const FlightSeat&) = delete;
  FlightSeat& operator=(const FlightSeat&) = delete;

  bool leader() const { return leader_; }
  bool done() const { return flight_->done; }

 private:
  std::string id_;
  bool leader_ = false;
  std::shared_ptr<Flight> flight_;
};

// Streams the upstream's bytes of `record` to the client and, when `fill` is given, into
// the hot tier. The response header is sent already.
asio::awaitable<Result<void>> StreamFromUpstream(
    RequestContext& ctx, const metadata::BucketRecord& bucket, const ObjectKey& key,
    const metadata::UpstreamLocation& upstream, std::optional<ByteRange> range,
    storage::PendingWrite* fill, bool& fill_ok, bool to_client) {
  auto executor = co_await asio::this_coro::executor;
  auto& client = ctx.services.upstream->Client(executor);
  storage::upstream::GetRequest request;
  request.if_match = "\"" + upstream.etag + "\"";  // the object the header described
  request.version_id = upstream.version_id;
  if (range) {
    request.range = std::make_pair(range->first, range->last);
  }
  storage::upstream::BodySink sink =
      [&ctx, fill, &fill_ok, to_client](std::string_view block) -> asio::awaitable<Result<void>> {
    if (fill != nullptr && fill_ok) {
      auto appended = co_await fill->AppendAsync(block);
      if (!appended.ok()) {
        spdlog::warn("read-through: cannot cache {}: {}", ctx.target.key, appended.error().message);
        fill_ok = false;  // a client still gets its bytes
        if (!to_client) {
          co_return appended;
        }
      }
    }
    if (!to_client) {
      co_return Ok();
    }
    co_return co_await ctx.exchange.SendBody(block);
  };
  STRATA_CO_RETURN_IF_ERROR(co_await client.GetObject(bucket.upstream_bucket, key.str(),
                                                      std::move(request), std::move(sink)));
  co_return Ok();
}

// Commits the filled bytes, when they are what the upstream described: as the key's new
// clean cached copy, or (`restore`) as the evicted version's local copy again. Returns
// whether they were committed.
asio::awaitable<bool> CommitFill(Services& services, std::unique_ptr<storage::PendingWrite> fill,
                                 metadata::ObjectRecord record, std::string upstream_etag,
                                 bool restore) {
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
  auto& store = services.store;
  const std::string id = CopyId(record);
  const std::string key = record.key.str();
  const std::string& etag = upstream_etag;
  if (restore) {
    auto restored = co_await Offload(services.blocking_pool, [&] {
      if (services.tier_caches != nullptr) {
        services.tier_caches->EvictDisplaced();
      }
      return store.RestoreLocalCopy(std::move(fill), record);
    });
    if (restored.ok() && *restored) {
      validations.Mark(id, etag);
      co_return true;
    }
    if (!restored.ok()) {
      spdlog::warn("read-through: cannot restore {}: {}", key, restored.error().message);
    }
    co_return false;
  }
  auto committed = co_await Offload(services.blocking_pool, [&] {
    if (services.tier_caches != nullptr) {
      services.tier_caches->EvictDisplaced();  // what this fill's admission displaced goes first
    }
    return store.CommitCachedCopy(std::move(fill), std::move(record));
  });
  if (committed.ok()) {
    validations.Mark(id, etag);
    co_return true;
  }
  if (committed.error().code != ErrorCode::kPreconditionFailed) {
    spdlog::warn("read-through: cannot cache {}: {}", key, committed.error().message);
  }
  co_return false;
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

// The upstream's entries of one listing page that the index does not override.
Result<std::vector<metadata::ObjectRecord>> UpstreamOnly(
    metadata::Index& index, const metadata::BucketRecord& bucket,
    const std::vector<storage::upstream::ListedObject>& listed) {
  std::vector<metadata::ObjectRecord> out;
  for (const auto& entry : listed) {
    const ObjectKey key(entry.key);
    auto local = index.GetObject(bucket.name, key);
    if (local.ok()) {
      continue;  // a version or a delete marker here: the index's word counts
    }
    if (local.error().code != ErrorCode::kNotFound) {
      return std::move(local).error();
    }
    auto waiting = index.GetWriteback(bucket.name, key);
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
    record.etag = storage::upstream::EtagValue(entry.etag);
    record.last_modified_ms = ParseIso8601(entry.last_modified).value_or(0);
    record.storage_class = entry.storage_class.empty() ? "STANDARD" : entry.storage_class;
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

asio::awaitable<Result<metadata::ListObjectsPage>> ListMergedPage(RequestContext& ctx,
                                                                  const std::string& prefix,
                                                                  const std::string& start_after,
                                                                  std::size_t max_keys) {
  const metadata::BucketRecord& bucket = *ctx.bucket;
  auto& index = ctx.services.index;
  STRATA_CO_TRY(auto local, index.ListObjects(bucket.name, prefix, start_after, max_keys));
  auto executor = co_await asio::this_coro::executor;
  auto& client = ctx.services.upstream->Client(executor);
  storage::upstream::ListRequest request;
  request.prefix = prefix;
  request.start_after = UpstreamStartAfter(start_after);
  request.max_keys = static_cast<int>(std::max<std::size_t>(max_keys, 1));
  STRATA_CO_TRY(auto listed,
                co_await client.ListObjectsV2(bucket.upstream_bucket, std::move(request)));
  STRATA_CO_TRY(auto upstream, UpstreamOnly(index, bucket, listed.objects));
  // Each source is complete only up to its last entry when it has more: the merged page
  // stops at the smaller of those bounds.
  std::optional<std::string> bound;
  auto tighten = [&bound](const std::string& last) {
    if (!bound || last < *bound) {
      bound = last;
    }
  };
  if (local.truncated && !local.objects.empty()) {
    tighten(local.objects.back().key.str());
  }
  if (listed.truncated && !listed.objects.empty()) {
    tighten(listed.objects.back().key);
  }
  metadata::ListObjectsPage page;
  auto& a = local.objects;
  auto& b = upstream;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    const bool take_local = j == b.size() || (i < a.size() && a[i].key.str() <= b[j].key.str());
    metadata::ObjectRecord& next = take_local ? a[i] : b[j];
    if (bound && next.key.str() > *bound) {
      break;
    }
    if (page.objects.size() == max_keys) {
      page.truncated = true;
      break;
    }
    if (take_local && j < b.size() && b[j].key == a[i].key) {
      ++j;  // the same key upstream: the index's version wins
    }
    page.objects.push_back(std::move(next));
    take_local ? ++i : ++j;
  }
  page.truncated = page.truncated || local.truncated || listed.truncated;
  co_return page;
}

asio::awaitable<Result<bool>> Revalidate(RequestContext& ctx,
                                         const metadata::ObjectRecord& record) {
  if (!ctx.bucket || ctx.services.upstream == nullptr || record.delete_marker) {
    co_return true;
  }
  const metadata::BucketRecord& bucket = *ctx.bucket;
  const metadata::Placement* upstream = metadata::PlacementOn(record, bucket.upstream_tier);
  if (upstream == nullptr) {
    co_return true;  // dirty: the local copy is newer than anything upstream
  }
  const std::string id = CopyId(record);
  if (!bucket.versioning.empty()) {
    // A versioned bucket's versions are each one upstream version, which never changes;
    // a newer one written upstream by another tool does not replace strata's history.
    co_return true;
  }
  const auto location = metadata::DecodeUpstreamLocation(upstream->extents.front().location);
  const std::string& etag = location.etag;
  if (validations.Fresh(id, etag, ctx.services.upstream->revalidate_after())) {
    co_return true;
  }
  auto executor = co_await asio::this_coro::executor;
  auto& client = ctx.services.upstream->Client(executor);
  storage::upstream::GetRequest request;
  request.if_none_match = "\"" + etag + "\"";
  auto info = co_await client.HeadObject(bucket.upstream_bucket, record.key.str(), request);
  if (info.ok() && (info->not_modified || storage::upstream::EtagValue(info->etag) == etag)) {
    validations.Mark(id, etag);
    co_return true;
  }
  if (!info.ok() && info.error().code != ErrorCode::kNoSuchKey) {
    spdlog::warn("read-through: cannot revalidate {}/{} upstream, serving the local copy: {}",
                 bucket.name.str(), record.key.str(), info.error().message);
    co_return true;
  }
  // Changed or deleted behind strata's back: the local copy is stale.
  metadata::UpstreamCopy copy{record.version_id, record.etag, record.last_modified_ms, *upstream};
  auto& store = ctx.services.store;
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(ctx.services.blocking_pool, [&] {
    return store.DropCachedCopy(bucket.name, record.key, copy);
  }));
  spdlog::info("read-through: {}/{} changed upstream; the local copy was dropped",
               bucket.name.str(), record.key.str());
  co_return false;
}

asio::awaitable<Result<std::optional<metadata::BucketRecord>>> AdoptUpstreamBucket(
    RequestContext& ctx, const BucketName& name) {
  using Adopted = std::optional<metadata::BucketRecord>;
  if (ctx.services.upstream == nullptr || !storage::IsValidBucketName(name.view())) {
    co_return Adopted();
  }
  auto executor = co_await asio::this_coro::executor;
  auto& client = ctx.services.upstream->Client(executor);
  storage::upstream::ListRequest probe;
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
  auto& store = ctx.services.store;
  const std::string owner = ctx.auth.principal.access_key;
  const std::string tier = ctx.services.upstream->tier_name();
  const std::string region = ctx.services.config.server.region;
  auto created =
      co_await Offload(ctx.services.blocking_pool, [&]() -> Result<metadata::BucketRecord> {
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

namespace {

// Whether a GET takes the whole object (and so fills the hot tier).
bool WholeObjectGet(const RequestContext& ctx) {
  return !ctx.is_head() && ctx.Header("range").empty() && !ctx.target.HasParam("partNumber");
}

// For a whole-object GET: true when another GET of the key is fetching it already; this
// one has then waited for that fetch to end.
asio::awaitable<bool> WaitForLeader(std::shared_ptr<FlightSeat>& seat, std::string id) {
  seat = std::make_shared<FlightSeat>(std::move(id));
  if (seat->leader()) {
    co_return false;
  }
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!seat->done()) {
    timer.expires_after(kFlightPoll);
    co_await timer.async_wait(asio::use_awaitable);
  }
  co_return true;
}

enum class Fill { kNewCopy, kRestore };

// The hot tier's room an admitted fill holds until it has landed (or failed): eviction
// passes leave it out, so fills and prefetches in flight never add up past the high mark.
struct RoomHeld {
  RoomHeld(storage::TierCaches* held_on, std::uint64_t size) : caches(held_on), bytes(size) {}
  storage::TierCaches* caches = nullptr;
  std::uint64_t bytes = 0;
  RoomHeld(RoomHeld&& other) noexcept : caches(other.caches), bytes(other.bytes) {
    other.caches = nullptr;
  }
  RoomHeld(const RoomHeld&) = delete;
  RoomHeld& operator=(const RoomHeld&) = delete;
  RoomHeld& operator=(RoomHeld&&) = delete;
  ~RoomHeld() {
    if (caches != nullptr) {
      caches->ReleaseRoom(bytes);
    }
  }
};

// A GET that reaches the upstream: the prefetcher watches these for scans of a prefix.
void ObserveMiss(RequestContext& ctx, const metadata::ObjectRecord& record) {
  if (!ctx.is_head() && ctx.services.prefetch != nullptr) {
    ctx.services.prefetch->ObserveMiss(record);
  }
}

// Commits a fill after its GET was answered, so the connection's next request does not
// wait for the fsync: the flight (`seat`) stays taken until the copy has landed, so a GET
// of the key meanwhile waits for the copy rather than fetching it again, and the hot
// tier's room stays held. Abandoned (the bytes removed) when the server stops first.
asio::awaitable<void> CommitInBackground(Services& services,
                                         std::unique_ptr<storage::PendingWrite> fill,
                                         metadata::ObjectRecord record, std::string upstream_etag,
                                         bool restore,
                                         [[maybe_unused]] std::shared_ptr<FlightSeat> seat,
                                         [[maybe_unused]] RoomHeld room) {
  co_await CommitFill(services, std::move(fill), std::move(record), std::move(upstream_etag),
                      restore);
}

// Answers a GET or HEAD of `record` from the upstream's copy at `upstream`:
// conditions, range, header, then the body streamed; a whole-object GET also fills the
// hot tier (a new cached copy, or the restored local copy of an evicted version),
// committed once the answer is out. `seat` is the GET's flight, held until then.
HandlerResult ServeFromUpstream(RequestContext& ctx, metadata::ObjectRecord record,
                                metadata::UpstreamLocation upstream, Fill fill_kind,
                                std::shared_ptr<FlightSeat> seat) {
  const metadata::BucketRecord& bucket = *ctx.bucket;
  auto answered = co_await AnswerUnreadable(ctx, record);
  if (answered) {
    co_return std::move(*answered);
  }
  STRATA_CO_TRY(auto range, ParseRange(ctx.Header("range"), record.size));
  if (ctx.target.HasParam("partNumber")) {
    co_return Error(ErrorCode::kNotImplemented,
                    "partNumber of an object not on the local tier is not supported yet");
  }
  ResponseHeader header;
  DescribeToHeaders(ctx, record, !range.has_value(), header);
  SetVersionHeader(ctx, record.version_id, header);
  std::uint64_t length = record.size;
  if (range.has_value()) {
    length = range->last - range->first + 1;
    header.result(http::status::partial_content);
    header.set(http::field::content_range, "bytes " + std::to_string(range->first) + "-" +
                                               std::to_string(range->last) + "/" +
                                               std::to_string(record.size));
  } else {
    header.result(http::status::ok);
  }
  auto sent = co_await ctx.exchange.SendHeader(std::move(header), length, std::string_view());
  if (!sent.ok() || ctx.is_head()) {
    co_return sent;
  }

  std::unique_ptr<storage::PendingWrite> fill;
  // A full hot tier caches a miss only when it is read more often than what it would
  // displace (storage/engine/cache_policy.h); otherwise the bytes just stream through.
  const bool admitted = WholeObjectGet(ctx) && (ctx.services.tier_caches == nullptr ||
                                                ctx.services.tier_caches->AdmitFill(record));
  RoomHeld room(admitted ? ctx.services.tier_caches : nullptr, record.size);
  if (admitted) {
    auto begun = ctx.services.store.BeginWrite(bucket.name, {});
    if (begun.ok()) {
      fill = std::move(begun).value();
    } else {
      spdlog::warn("read-through: cannot cache {}: {}", record.key.str(), begun.error().message);
    }
  }
  bool fill_ok = fill != nullptr;
  if (length > 0) {
    auto streamed = co_await StreamFromUpstream(ctx, bucket, record.key, upstream, range,
                                                fill.get(), fill_ok, true);
    if (!streamed.ok()) {
      ctx.exchange.CloseAfterResponse();  // the body is cut short: the client must see it
      co_return streamed;
    }
  }
  if (fill_ok) {
    auto executor = co_await asio::this_coro::executor;
    auto commit = CommitInBackground(ctx.services, std::move(fill), std::move(record),
                                     std::move(upstream.etag), fill_kind == Fill::kRestore,
                                     std::move(seat), std::move(room));
    if (ctx.services.background != nullptr) {
      // Refused once the server stops: the fill is dropped with its temporary file.
      (void)ctx.services.background->Spawn(executor, std::move(commit));
    } else {
      co_await std::move(commit);  // nobody to wait for it: before the answer ends
    }
  }
  co_return Ok();
}

// A change of the key waiting for the upstream (a delete) hides the upstream's copy:
// kNoSuchKey then.
Result<void> UpstreamCopyVisible(RequestContext& ctx, const metadata::BucketRecord& bucket,
                                 const ObjectKey& key) {
  auto waiting = ctx.services.index.GetWriteback(bucket.name, key);
  if (!waiting.ok()) {
    return waiting.error();
  }
  if (waiting->has_value()) {
    return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
  }
  return Ok();
}

// The record a read-through of the upstream's object at `key` caches it under (a HEAD).
asio::awaitable<Result<metadata::ObjectRecord>> DescribeUpstreamObject(
    RequestContext& ctx, const metadata::BucketRecord& bucket, const ObjectKey& key) {
  auto executor = co_await asio::this_coro::executor;
  auto& client = ctx.services.upstream->Client(executor);
  // No defaulted arguments into a coroutine: GCC 12 frees their temporaries wrongly.
  storage::upstream::GetRequest plain;
  STRATA_CO_TRY(auto info, co_await client.HeadObject(bucket.upstream_bucket, key.str(), plain));
  co_return RecordFromUpstream(bucket, key, info);
}

}  // namespace

HandlerResult ReadThrough(RequestContext& ctx) {
  const metadata::BucketRecord& bucket = *ctx.bucket;
  const ObjectKey key(ctx.target.key);
  STRATA_CO_RETURN_IF_ERROR(UpstreamCopyVisible(ctx, bucket, key));
  std::shared_ptr<FlightSeat> seat;
  if (WholeObjectGet(ctx)) {
    const bool waited = co_await WaitForLeader(seat, bucket.name.str() + '\0' + key.str());
    if (waited) {
      co_return co_await GetObject(ctx);  // the cached copy now, or a read-through again
    }
  }
  STRATA_CO_TRY(metadata::ObjectRecord record, co_await DescribeUpstreamObject(ctx, bucket, key));
  STRATA_CO_TRY(auto location, UpstreamLocationOf(record, bucket.upstream_tier));
  ObserveMiss(ctx, record);
  co_return co_await ServeFromUpstream(ctx, std::move(record), std::move(location), Fill::kNewCopy,
                                       std::move(seat));
}

bool RestoreRequired(const Config& config, const metadata::BucketRecord& bucket,
                     const metadata::ObjectRecord& record) {
  const TierConfig* tier = config.TierOfClass(record.storage_class);
  if (tier == nullptr || tier->kind != TierKind::kS3) {
    return false;
  }
  for (const auto& [key, value] : bucket.tags) {
    if (key == kRequireRestoreTag) {
      return value == "true";
    }
  }
  return false;
}

HandlerResult ReadEvicted(RequestContext& ctx, metadata::ObjectRecord record) {
  STRATA_CO_TRY(auto location, UpstreamLocationOf(record, ctx.bucket->upstream_tier));
  std::shared_ptr<FlightSeat> seat;
  if (WholeObjectGet(ctx)) {
    const bool waited = co_await WaitForLeader(seat, CopyId(record));
    if (waited) {
      co_return co_await GetObject(ctx);  // restored now, or read through again
    }
  }
  ObserveMiss(ctx, record);
  co_return co_await ServeFromUpstream(ctx, std::move(record), std::move(location), Fill::kRestore,
                                       std::move(seat));
}

asio::awaitable<Result<metadata::ObjectRecord>> FetchLocalCopy(
    RequestContext& ctx, const metadata::BucketRecord& bucket, const ObjectKey& key,
    std::optional<metadata::ObjectRecord> known) {
  const bool restore = known.has_value();
  metadata::ObjectRecord record;
  if (restore) {
    record = std::move(*known);
  } else {
    STRATA_CO_RETURN_IF_ERROR(UpstreamCopyVisible(ctx, bucket, key));
    STRATA_CO_TRY(record, co_await DescribeUpstreamObject(ctx, bucket, key));
  }
  const auto location = UpstreamLocationOf(record, bucket.upstream_tier);
  if (!location.ok()) {
    co_return location.error();
  }
  STRATA_CO_TRY(std::unique_ptr<storage::PendingWrite> fill,
                ctx.services.store.BeginWrite(bucket.name, {}));
  bool fill_ok = true;
  if (record.size > 0) {
    const std::optional<ByteRange> whole;
    STRATA_CO_RETURN_IF_ERROR(co_await StreamFromUpstream(ctx, bucket, key, *location, whole,
                                                          fill.get(), fill_ok, false));
  }
  const VersionId version = record.version_id;
  const bool committed = co_await CommitFill(ctx.services, std::move(fill), std::move(record),
                                             location->etag, restore);
  if (!committed) {
    co_return Error(ErrorCode::kUnavailable,
                    "the object changed while strata fetched it from the upstream", true);
  }
  co_return ctx.services.store.HeadVersion(bucket.name, key, version);
}

}  // namespace strata::gateway
