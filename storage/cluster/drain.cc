// ReplicationNode, the drain of this gateway (storage/replication.h): announced draining,
// every key it holds made to reach its next owners, then announced drained (not ready),
// owning nothing.
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
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

}  // namespace

Result<void> ReplicationNode::Drain() {
  if (!started_ || stopped_) {
    return Error(ErrorCode::kUnavailable, "replication is not running", true);
  }
  if (cluster_.draining() || drain_started_.load()) {
    return Ok();
  }
  if (!cluster_.ready()) {
    return Error(ErrorCode::kInvalidRequest,
                 cluster_.node() + " is catching up: it holds no keys to hand over yet");
  }
  bool another = false;
  for (const auto& member : cluster_.View()->members) {
    another = another || (member.node != cluster_.node() && !member.draining);
  }
  if (!another) {
    return Error(ErrorCode::kInvalidRequest,
                 "no other member that is not draining could take " + cluster_.node() + "'s keys");
  }
  if (drain_started_.exchange(true)) {
    return Ok();
  }
  counters_.draining.store(true, std::memory_order_relaxed);
  tasks_.Spawn(cluster_.executor(), DrainLoop());
  return Ok();
}

asio::awaitable<Result<void>> ReplicationNode::DrainMember(std::string node) {
  if (node == cluster_.node()) {
    co_return Drain();
  }
  // A member coroutine, not a lambda: GCC 12 destroys a lambda's captures twice when the
  // lambda is a temporary handed to co_spawn inside a co_await.
  co_return co_await asio::co_spawn(cluster_.executor(), AskToDrain(std::move(node)),
                                    asio::use_awaitable);
}

asio::awaitable<Result<void>> ReplicationNode::AskToDrain(std::string node) {
  const auto view = cluster_.View();
  const MemberInfo* member = view->Find(node);
  if (member == nullptr) {
    co_return Error(ErrorCode::kNotFound, "no member " + node + " in this gateway's view");
  }
  STRATA_CO_RETURN_IF_ERROR(co_await SmallCall(member->peer, kPeerOpDrain, std::string()));
  co_return Ok();
}

PeerTask<void> ReplicationNode::ServeDrain(PeerIncomingCall& call) {
  STRATA_CO_RETURN_IF_ERROR(Drain());
  PeerResponse response;
  co_return co_await call.Respond(std::move(response));
}

asio::awaitable<void> ReplicationNode::DrainLoop() {
  spdlog::info("replication: draining {}", cluster_.node());
  // Awaited on its own line: GCC 12 miscompiles a co_await inside a condition.
  const bool announced = co_await RoundsThenAnnounce(Move::kDrain);
  if (announced) {
    spdlog::info("replication: {} is drained: it owns no key and may be stopped", cluster_.node());
    counters_.draining.store(false, std::memory_order_relaxed);
  }
}

asio::awaitable<Result<void>> ReplicationNode::DrainRound() {
  if (!cluster_.ready()) {
    // Registered again after a lost lease (a partition): it catches up first (the repair
    // loop runs that), and the drain goes on once it serves its keys again. Announcing
    // ready here would skip the catch-up.
    co_return Error(ErrorCode::kUnavailable, "this gateway is catching up", true);
  }
  if (!cluster_.draining()) {
    STRATA_CO_RETURN_IF_ERROR(co_await cluster_.Announce(/*ready=*/true, /*draining=*/true));
  }
  const auto view = cluster_.View();
  const MemberInfo* me = view->Find(cluster_.node());
  if (me == nullptr || !me->draining || !me->ready) {
    co_return Error(ErrorCode::kUnavailable, "the view does not show the drain yet", true);
  }
  // A primary that has not seen the drain would sync a key to its old owners only.
  STRATA_CO_RETURN_IF_ERROR(co_await AwaitViewEverywhere(view->epoch));
  STRATA_CO_TRY(auto buckets, co_await Offload(blocking_, [this] { return store_.ListBuckets(); }));
  for (const auto& bucket : buckets) {
    const std::string bucket_name = bucket.name.str();
    STRATA_CO_RETURN_IF_ERROR(co_await ForEachHeldKey(
        bucket.name, [&](const std::string& key) -> asio::awaitable<Result<void>> {
          const auto owners = cluster_.OwnersOf(bucket_name, key);
          if (owners.empty()) {
            co_return Ok();
          }
          std::uint64_t moved = 0;
          if (owners.front().self) {
            STRATA_CO_TRY(moved, co_await MoveKey(bucket.name, ObjectKey(key)));
          } else {
            bool owned = false;
            for (const auto& owner : owners) {
              owned = owned || owner.self;
            }
            if (!owned) {
              co_return Ok();  // a leftover copy: not this gateway's to hand over
            }
            STRATA_CO_TRY(auto answer, co_await PullKey(owners.front().peer, bucket_name, key));
            moved = answer.moved;
          }
          counters_.keys_handed_off.fetch_add(1, std::memory_order_relaxed);
          co_await Pace(moved);
          co_return Ok();
        }));
    // And the uploads in progress of the keys it is the primary of (those of the others'
    // keys are their primaries' to move).
    std::uint64_t failed = 0;
    STRATA_CO_TRY(const bool uploads_done, co_await MoveUploads(
                                               bucket.name, view->epoch,
                                               [this, &bucket_name](const std::string& key) {
                                                 const auto owners =
                                                     cluster_.OwnersOf(bucket_name, key);
                                                 return !owners.empty() && owners.front().self;
                                               },
                                               failed));
    if (!uploads_done || failed > 0) {
      co_return Error(ErrorCode::kUnavailable, "uploads in progress not handed over yet", true);
    }
  }
  if (cluster_.View()->epoch != view->epoch) {
    co_return Error(ErrorCode::kUnavailable, "the membership changed while draining", true);
  }
  co_return Ok();
}

}  // namespace strata::storage::cluster
