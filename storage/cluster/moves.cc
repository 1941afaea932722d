// ReplicationNode, the pieces of every background move of keys (repair, catch-up, drain):
// a paced sync, a pull from a key's primary, the wait for the members' views, and the
// walk over the keys held here.
#include <spdlog/spdlog.h>

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

constexpr std::size_t kHeldKeysPage = 200;  // version rows read per page of held keys
constexpr int kViewAttempts = 20;           // AwaitViewEverywhere: pings, 250 ms apart
constexpr std::chrono::milliseconds kViewRetryWait{250};
constexpr std::chrono::milliseconds kPingTimeout{2'000};
constexpr std::chrono::milliseconds kRoundRetry{500};  // after a failed catch-up or drain round

asio::awaitable<void> Wait(std::chrono::steady_clock::duration wait) {
  asio::steady_timer timer(co_await asio::this_coro::executor, wait);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

asio::awaitable<bool> ReplicationNode::RoundsThenAnnounce(Move move) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped_) {
    Result<void> round = Ok();
    if (move == Move::kDrain) {
      round = co_await DrainRound();
    } else {
      round = co_await CatchUpRound();
    }
    if (round.ok()) {
      // Caught up: ready, not draining. Drained: neither ready nor owning anything.
      round = co_await cluster_.Announce(/*ready=*/move == Move::kCatchUp,
                                         /*draining=*/move == Move::kDrain);
    }
    if (round.ok()) {
      co_return true;
    }
    spdlog::warn("replication: {}: {} (tried again)",
                 move == Move::kDrain ? "draining" : "catching up", round.error().message);
    timer.expires_after(kRoundRetry);
    co_await timer.async_wait(asio::use_awaitable);  // throws when cancelled: the loop ends
  }
  co_return false;
}

asio::awaitable<Result<std::uint64_t>> ReplicationNode::MoveKey(const BucketName& bucket,
                                                                const ObjectKey& key) {
  std::uint64_t sent = 0;
  STRATA_CO_RETURN_IF_ERROR(co_await SyncOnCluster(bucket, key, false, &sent));
  counters_.bytes_moved.fetch_add(sent, std::memory_order_relaxed);
  co_return sent;
}

asio::awaitable<void> ReplicationNode::Pace(std::uint64_t bytes) {
  const auto wait = pacer_.Charge(bytes, MovePacer::Clock::now());
  if (wait > MovePacer::Clock::duration::zero() && !stopped_) {
    co_await Wait(wait);
  }
}

asio::awaitable<Result<std::string>> ReplicationNode::SmallCall(const std::string& peer,
                                                                std::uint32_t op,
                                                                std::string payload) {
  PeerRequest request;
  request.op = op;
  request.payload = std::move(payload);
  STRATA_CO_TRY(auto call, co_await cluster_.Call(peer, request));
  STRATA_CO_TRY(auto response, co_await call->Response());
  co_return std::move(response.payload);
}

asio::awaitable<Result<PullAnswer>> ReplicationNode::PullKey(const std::string& primary,
                                                             const std::string& bucket,
                                                             const std::string& key) {
  // Encoded first: no braced temporary lives across the co_await (GCC 12).
  std::string range = EncodeKeyRange(KeyRange{bucket, key});
  STRATA_CO_TRY(auto payload, co_await SmallCall(primary, kPeerOpKeyPull, std::move(range)));
  STRATA_CO_TRY(auto answer, DecodePullAnswer(payload));
  counters_.keys_pulled.fetch_add(1, std::memory_order_relaxed);
  co_return answer;
}

asio::awaitable<Result<void>> ReplicationNode::AwaitViewEverywhere(std::int64_t epoch) {
  for (int attempt = 1; !stopped_; ++attempt) {
    const auto probes = co_await cluster_.Probe(kPingTimeout);
    std::string behind;
    for (const auto& probe : probes) {
      if (probe.node != cluster_.node() && (!probe.reachable || probe.epoch < epoch)) {
        behind = probe.node + (probe.reachable ? " is at epoch " + std::to_string(probe.epoch)
                                               : " is unreachable: " + probe.error);
      }
    }
    if (behind.empty()) {
      co_return Ok();
    }
    if (attempt >= kViewAttempts || cluster_.View()->epoch != epoch) {
      co_return Error(
          ErrorCode::kUnavailable,
          "waiting for every member to see epoch " + std::to_string(epoch) + ": " + behind, true);
    }
    co_await Wait(kViewRetryWait);
  }
  co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
}

asio::awaitable<Result<void>> ReplicationNode::ForEachHeldKey(
    const BucketName& bucket,
    const std::function<asio::awaitable<Result<void>>(const std::string&)>& visit) {
  std::string marker;
  while (!stopped_) {
    auto page = co_await Offload(blocking_, [this, &bucket, &marker] {
      return index_.ListVersions(bucket, "", marker, "", kHeldKeysPage);
    });
    if (!page.ok()) {
      if (page.error().code == ErrorCode::kNoSuchBucket) {
        co_return Ok();  // deleted meanwhile
      }
      co_return std::move(page).error();
    }
    for (const std::string& key : KeysOfPage(*page, marker)) {
      STRATA_CO_RETURN_IF_ERROR(co_await visit(key));
    }
    if (!page->truncated) {
      co_return Ok();
    }
  }
  co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
}

}  // namespace strata::storage::cluster
