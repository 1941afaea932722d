// ReplicationNode, the background repair: after a membership change, the primary of each
// key whose owners changed syncs it to them, one key at a time, so a member that died
// leaves its keys with fewer copies for seconds, not until their next write.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <set>

#include "common/offload.h"
#include "storage/cluster/replication_node.h"

namespace strata::storage::cluster {
namespace {

namespace asio = boost::asio;

// How often the loop looks at the membership's epoch.
constexpr std::chrono::milliseconds kViewPoll{250};
constexpr std::size_t kScanPage = 1000;

}  // namespace

asio::awaitable<void> ReplicationNode::RepairLoop() {
  // The view whose owners every key here was last brought to: the one at start (a member
  // that joins is brought up to date by the others, whose owners changed).
  auto baseline = cluster_.View();
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped_) {
    timer.expires_after(kViewPoll);
    co_await timer.async_wait(asio::use_awaitable);  // throws when cancelled: the loop ends
    const auto view = cluster_.View();
    if (view->epoch == baseline->epoch || view->members.empty()) {
      continue;
    }
    counters_.repairing.store(true, std::memory_order_relaxed);
    const Placement before(baseline->PlacementMembers());
    auto finished = co_await RepairScan(before, view->epoch);
    counters_.repairing.store(false, std::memory_order_relaxed);
    if (!finished.ok()) {
      spdlog::warn("replication: repair scan after view {}: {} (tried again)", view->epoch,
                   finished.error().message);
    } else if (*finished) {
      counters_.repair_scans.fetch_add(1, std::memory_order_relaxed);
      baseline = view;
    }
  }
}

asio::awaitable<Result<bool>> ReplicationNode::RepairScan(const Placement& before,
                                                          std::int64_t epoch) {
  auto buckets = co_await Offload(blocking_, [this] { return store_.ListBuckets(); });
  if (!buckets.ok()) {
    co_return std::move(buckets).error();
  }
  const auto replicas = static_cast<std::size_t>(cluster_.replicas());
  std::uint64_t failed = 0;
  for (const auto& bucket : *buckets) {
    std::string marker;
    while (true) {
      auto page = co_await Offload(blocking_, [this, &bucket, &marker] {
        return index_.ListVersions(bucket.name, "", marker, "", kScanPage);
      });
      if (!page.ok()) {
        if (page.error().code == ErrorCode::kNoSuchBucket) {
          break;  // deleted meanwhile
        }
        co_return std::move(page).error();
      }
      for (const std::string& key : KeysOfPage(*page, marker)) {
        if (stopped_ || cluster_.View()->epoch != epoch) {
          co_return false;  // the view moved on: scan again against the same baseline
        }
        const auto now = cluster_.OwnersOf(bucket.name.view(), key);
        if (now.empty() || !now.front().self) {
          continue;
        }
        std::set<std::string> was;
        for (const std::size_t index : before.Owners(bucket.name.view(), key, replicas)) {
          was.insert(before.members()[index].node);
        }
        std::set<std::string> is;
        for (const auto& owner : now) {
          is.insert(owner.node);
        }
        if (was == is) {
          continue;
        }
        auto synced = co_await SyncOnCluster(bucket.name, ObjectKey(key), false);
        if (synced.ok()) {
          counters_.keys_repaired.fetch_add(1, std::memory_order_relaxed);
        } else {
          ++failed;
        }
      }
      if (!page->truncated) {
        break;
      }
    }
  }
  counters_.under_replicated.store(failed, std::memory_order_relaxed);
  co_return failed == 0;
}

}  // namespace strata::storage::cluster
