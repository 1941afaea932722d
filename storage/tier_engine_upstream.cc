// TierEngine: the methods for buckets bound to the upstream (the cold reads forward to
// ColdReads; the bucket-level upstream calls are here) and the restore queue.
#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/co_try.h"
#include "common/offload.h"
#include "storage/engine/cold_reads.h"
#include "storage/engine/lifecycle_worker.h"
#include "storage/engine/prefetch_jobs.h"
#include "storage/engine/scrubber.h"
#include "storage/engine/tier_caches.h"
#include "storage/tier_engine.h"
#include "storage/upstream/fetcher.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/writeback.h"

namespace strata::storage {

namespace asio = boost::asio;

namespace {

// How often DeleteBucket's drain looks whether the bucket's changes were pushed.
constexpr auto kDrainPoll = std::chrono::milliseconds(50);

Result<bool> HasWaitingChanges(metadata::Index& index, const BucketName& bucket) {
  bool found = false;
  auto scanned = index.ScanWriteback([&](const metadata::WritebackItem& item) {
    found = item.bucket == bucket;
    return !found;
  });
  if (!scanned.ok()) {
    return std::move(scanned).error();
  }
  return found;
}

Error NoUpstream() { return Error(ErrorCode::kInvalidRequest, "no tier of kind s3 is configured"); }

}  // namespace

const std::string& TierEngine::upstream_tier() const {
  static const std::string kNone;
  return upstream_ ? upstream_->tier_name() : kNone;
}

bool TierEngine::Bound(const metadata::BucketRecord& bucket) const {
  return upstream_ != nullptr && !bucket.upstream_tier.empty();
}

void TierEngine::OnLocalRead(const metadata::ObjectRecord& record) {
  tier_caches_->OnRead(record);  // what eviction keeps learns from hits
  if (prefetch_) {
    prefetch_->ObserveRead(record);  // a followed scan moves on
  }
}

asio::awaitable<Result<std::unique_ptr<ColdRead>>> TierEngine::OpenColdRead(
    const metadata::BucketRecord& bucket, ObjectKey key,
    std::optional<metadata::ObjectRecord> evicted, ColdReadKind kind) {
  if (!cold_reads_ || !Bound(bucket)) {
    co_return NoUpstream();
  }
  co_return co_await cold_reads_->Open(bucket, std::move(key), std::move(evicted), kind);
}

asio::awaitable<Result<bool>> TierEngine::Revalidate(const metadata::BucketRecord& bucket,
                                                     const metadata::ObjectRecord& record) {
  if (!cold_reads_ || !Bound(bucket)) {
    co_return true;  // nothing upstream to compare with
  }
  co_return co_await cold_reads_->Revalidate(bucket, record);
}

bool TierEngine::RestoreRequired(const metadata::BucketRecord& bucket,
                                 const metadata::ObjectRecord& record) const {
  const TierConfig* tier = config_->TierOfClass(record.storage_class);
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

asio::awaitable<Result<metadata::ObjectRecord>> TierEngine::FetchLocalCopy(
    const metadata::BucketRecord& bucket, ObjectKey key,
    std::optional<metadata::ObjectRecord> known) {
  if (!cold_reads_ || !Bound(bucket)) {
    co_return NoUpstream();
  }
  co_return co_await cold_reads_->FetchLocalCopy(bucket, std::move(key), std::move(known));
}

asio::awaitable<Result<metadata::ListObjectsPage>> TierEngine::ListMerged(
    const metadata::BucketRecord& bucket, std::string prefix, std::string start_after,
    std::size_t max_keys) {
  if (!cold_reads_ || !Bound(bucket)) {
    co_return index_->ListObjects(bucket.name, prefix, start_after, max_keys);
  }
  co_return co_await cold_reads_->ListMerged(bucket, std::move(prefix), std::move(start_after),
                                             max_keys);
}

asio::awaitable<Result<std::optional<metadata::BucketRecord>>> TierEngine::AdoptUpstreamBucket(
    BucketName name, std::string owner) {
  if (!cold_reads_) {
    co_return std::optional<metadata::BucketRecord>();
  }
  co_return co_await cold_reads_->Adopt(std::move(name), std::move(owner));
}

asio::awaitable<Result<void>> TierEngine::CreateUpstreamBucket(BucketName name) {
  if (!upstream_) {
    co_return Ok();
  }
  auto& client = upstream_->Client(co_await asio::this_coro::executor);
  co_return co_await client.CreateBucket(name.str());
}

asio::awaitable<Result<void>> TierEngine::SetUpstreamVersioning(
    const metadata::BucketRecord& bucket, std::string status) {
  if (!Bound(bucket)) {
    co_return Ok();
  }
  auto& client = upstream_->Client(co_await asio::this_coro::executor);
  co_return co_await client.PutBucketVersioning(bucket.upstream_bucket, std::move(status));
}

asio::awaitable<Result<void>> TierEngine::PrepareUpstreamDelete(
    const metadata::BucketRecord& bucket, std::chrono::milliseconds drain_for) {
  if (!Bound(bucket)) {
    co_return Ok();
  }
  // Its deletes (and any other change) still waiting are pushed now, or the upstream
  // would keep objects the user deleted.
  const SteadyTime deadline = clock_->SteadyNow() + drain_for;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    STRATA_CO_TRY(auto waiting, co_await Offload(*blocking_pool_, [&] {
                    return HasWaitingChanges(*index_, bucket.name);
                  }));
    if (!waiting) {
      break;
    }
    if (clock_->SteadyNow() >= deadline) {
      co_return Error(ErrorCode::kBucketNotEmpty,
                      "The bucket you tried to delete has changes not yet written back upstream");
    }
    writeback_->FlushUntil(deadline);
    timer.expires_after(kDrainPoll);
    co_await timer.async_wait(asio::use_awaitable);
  }
  // The upstream bucket must be empty too: otherwise the objects only the upstream has
  // would be orphaned behind a bucket strata says is gone.
  auto& client = upstream_->Client(co_await asio::this_coro::executor);
  upstream::ListRequest request;
  request.max_keys = 1;
  auto page = co_await client.ListObjectsV2(bucket.upstream_bucket, request);
  if (!page.ok()) {
    if (page.error().code == ErrorCode::kNoSuchBucket) {
      co_return Ok();
    }
    co_return std::move(page).error();
  }
  if (!page->objects.empty()) {
    co_return Error(ErrorCode::kBucketNotEmpty, "The bucket you tried to delete is not empty");
  }
  co_return Ok();
}

asio::awaitable<Result<void>> TierEngine::DeleteUpstreamBucket(
    const metadata::BucketRecord& bucket) {
  if (!Bound(bucket)) {
    co_return Ok();
  }
  auto& client = upstream_->Client(co_await asio::this_coro::executor);
  auto gone = co_await client.DeleteBucket(bucket.upstream_bucket);
  if (!gone.ok() && gone.error().code != ErrorCode::kNoSuchBucket) {
    co_return std::move(gone).error();
  }
  co_return Ok();
}

asio::awaitable<Result<std::vector<UpstreamBucket>>> TierEngine::ListUpstreamBuckets() {
  std::vector<UpstreamBucket> out;
  if (!upstream_) {
    co_return out;
  }
  auto& client = upstream_->Client(co_await asio::this_coro::executor);
  STRATA_CO_TRY(auto listed, co_await client.ListBuckets());
  out.reserve(listed.size());
  for (auto& bucket : listed) {
    out.push_back({std::move(bucket.name), std::move(bucket.creation_date)});
  }
  co_return out;
}

Result<void> TierEngine::CheckTransitions(const metadata::BucketRecord& bucket,
                                          const std::vector<metadata::LifecycleRule>& rules) const {
  const auto check = [&](const std::string& cls) -> Result<void> {
    const TierConfig* tier = config_->TierOfClass(cls);
    if (tier == nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   "The storage class " + cls + " names no tier of this gateway");
    }
    if (tier->kind == TierKind::kPeer) {
      return Error(ErrorCode::kInvalidArgument, "Transitions to the peer tier " + tier->name +
                                                    " (" + cls + ") are not supported yet");
    }
    if (tier->kind == TierKind::kS3 && bucket.upstream_tier != tier->name) {
      return Error(ErrorCode::kInvalidArgument, "The storage class " + cls + " is the tier " +
                                                    tier->name +
                                                    ", which this bucket is not bound to");
    }
    return Ok();
  };
  for (const auto& rule : rules) {
    for (const auto& t : rule.transitions) {
      STRATA_RETURN_IF_ERROR(check(t.storage_class));
    }
    for (const auto& t : rule.noncurrent_transitions) {
      STRATA_RETURN_IF_ERROR(check(t.storage_class));
    }
  }
  return Ok();
}

bool TierEngine::Restorable(const metadata::ObjectRecord& record) const {
  const TierConfig* tier = config_->TierOfClass(record.storage_class);
  return tier != nullptr && tier->kind == TierKind::kS3 && fetcher_ != nullptr;
}

bool TierEngine::QueueRestore(metadata::ObjectRecord record, RestoreDone done) {
  if (!fetcher_) {
    return false;
  }
  return fetcher_->Enqueue(std::move(record), std::move(done));
}

Result<PrefetchJobInfo> TierEngine::StartPrefetch(const BucketName& bucket,
                                                  const std::string& prefix, std::uint64_t budget) {
  if (!prefetch_) {
    return NoUpstream();
  }
  return prefetch_->Start(bucket, prefix, budget);
}

Result<PrefetchJobInfo> TierEngine::GetPrefetch(std::uint64_t id) const {
  if (!prefetch_) {
    return NoUpstream();
  }
  return prefetch_->Get(id);
}

Result<PrefetchJobInfo> TierEngine::CancelPrefetch(std::uint64_t id) {
  if (!prefetch_) {
    return NoUpstream();
  }
  return prefetch_->Cancel(id);
}

std::vector<PrefetchJobInfo> TierEngine::ListPrefetches() const {
  return prefetch_ ? prefetch_->List() : std::vector<PrefetchJobInfo>();
}

void TierEngine::FlushWriteback(SteadyTime deadline) {
  if (writeback_) {
    writeback_->FlushUntil(deadline);
  }
}

bool TierEngine::StartScrubPass() { return scrubber_->StartPass(); }

Result<void> TierEngine::RunLifecyclePass() { return lifecycle_->RunPass(); }

}  // namespace strata::storage
