// ReplicationNode, the background repair: after a membership change, the primary of each
// key whose owners changed syncs it to them, one key at a time and paced, so a member that
// died leaves its keys with fewer copies for seconds, not until their next write; once no
// member joins or drains, the copies of keys a member no longer owns are dropped.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "common/co_try.h"
#include "common/offload.h"
#include "storage/cluster/replication_node.h"

namespace strata::storage::cluster {
namespace {

namespace asio = boost::asio;

// How often the loop looks at the membership's epoch.
constexpr std::chrono::milliseconds kViewPoll{250};

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

asio::awaitable<void> ReplicationNode::RepairLoop() {
  // The view whose owners every key here was last brought to: the one at start, or the
  // first one in which this gateway is ready after it caught up (the others brought it up
  // to date then, and moved the keys whose owners changed).
  auto baseline = cluster_.View();
  scanned_epoch_.store(baseline->epoch, std::memory_order_relaxed);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped_) {
    if (!cluster_.ready() && !cluster_.draining()) {
      // Joined, or registered again after its lease expired: the primary of nothing until
      // it caught up.
      co_await CatchUpLoop();
      while (!stopped_ && !cluster_.ready()) {
        timer.expires_after(kViewPoll);
        co_await timer.async_wait(asio::use_awaitable);  // throws when cancelled
      }
      baseline = cluster_.View();
      scanned_epoch_.store(baseline->epoch, std::memory_order_relaxed);
      continue;
    }
    timer.expires_after(kViewPoll);
    co_await timer.async_wait(asio::use_awaitable);  // throws when cancelled: the loop ends
    const auto view = cluster_.View();
    if (view->epoch == baseline->epoch || view->members.empty()) {
      continue;
    }
    counters_.repairing.store(true, std::memory_order_relaxed);
    const Ownership before(baseline, static_cast<std::size_t>(cluster_.replicas()));
    auto finished = co_await RepairScan(before, view->epoch);
    counters_.repairing.store(false, std::memory_order_relaxed);
    if (!finished.ok()) {
      spdlog::warn("replication: repair scan after view {}: {} (tried again)", view->epoch,
                   finished.error().message);
    } else if (*finished) {
      counters_.repair_scans.fetch_add(1, std::memory_order_relaxed);
      baseline = view;
      scanned_epoch_.store(baseline->epoch, std::memory_order_relaxed);
    } else if (cluster_.View()->epoch == view->epoch) {
      // Gone through, with keys left under-replicated (tried again): a joiner waiting for
      // this view's scan need not wait for those.
      scanned_epoch_.store(view->epoch, std::memory_order_relaxed);
    }
  }
}

asio::awaitable<Result<bool>> ReplicationNode::RepairScan(const Ownership& before,
                                                          std::int64_t epoch) {
  STRATA_CO_TRY(auto buckets, co_await Offload(blocking_, [this] { return store_.ListBuckets(); }));
  const Ownership now(cluster_.View(), static_cast<std::size_t>(cluster_.replicas()));
  if (now.view().epoch != epoch) {
    co_return false;
  }
  // Copies of keys this gateway no longer owns are dropped only once the change settled:
  // while a member joins or drains, the keys' old owners go on answering.
  const bool drop_unowned = !now.Moving() && cluster_.ready();
  std::uint64_t failed = 0;        // syncs that failed: keys under-replicated
  std::uint64_t failed_drops = 0;  // copies not dropped yet (the scan runs again)
  bool moved_on = false;
  for (const auto& bucket : buckets) {
    const std::string_view bucket_name = bucket.name.view();
    auto scanned = co_await ForEachHeldKey(
        bucket.name, [&](const std::string& key) -> asio::awaitable<Result<void>> {
          if (stopped_ || cluster_.View()->epoch != epoch) {
            moved_on = true;  // scan again against the same baseline
            co_return Error(ErrorCode::kUnavailable, "the view moved on", true);
          }
          const auto owners = now.OwnerNames(bucket_name, key);
          if (owners.empty()) {
            co_return Ok();
          }
          if (owners.front() != cluster_.node()) {
            if (drop_unowned &&
                std::find(owners.begin(), owners.end(), cluster_.node()) == owners.end()) {
              const MemberInfo* primary = now.view().Find(owners.front());
              auto dropped = co_await DropUnowned(bucket.name, ObjectKey(key), primary->peer);
              if (!dropped.ok()) {
                ++failed_drops;
              }
            }
            co_return Ok();
          }
          if (Sorted(before.OwnerNames(bucket_name, key)) == Sorted(owners)) {
            co_return Ok();
          }
          auto moved = co_await MoveKey(bucket.name, ObjectKey(key));
          if (moved.ok()) {
            counters_.keys_repaired.fetch_add(1, std::memory_order_relaxed);
            co_await Pace(*moved);
          } else {
            ++failed;
          }
          co_return Ok();
        });
    if (moved_on) {
      co_return false;
    }
    STRATA_CO_RETURN_IF_ERROR(scanned);
    STRATA_CO_TRY(const bool uploads_done,
                  co_await RepairUploads(bucket.name, before, now, epoch, failed));
    if (!uploads_done) {
      co_return false;
    }
  }
  counters_.under_replicated.store(failed, std::memory_order_relaxed);
  co_return failed == 0 && failed_drops == 0;
}

asio::awaitable<Result<void>> ReplicationNode::DropUnowned(const BucketName& bucket,
                                                           const ObjectKey& key,
                                                           const std::string& primary) {
  STRATA_CO_TRY(auto answer, co_await PullKey(primary, bucket.str(), key.str()));
  co_await Pace(answer.moved);
  if (answer.keep) {
    co_return Ok();  // replicas = 1 and the primary lacks it: this may be its only copy
  }
  STRATA_CO_RETURN_IF_ERROR(co_await Offload(blocking_, [this, &bucket, &key] {
    return store_.ApplyReplica(bucket, key, {}, std::nullopt);
  }));
  counters_.keys_dropped.fetch_add(1, std::memory_order_relaxed);
  co_return Ok();
}

}  // namespace strata::storage::cluster
