// ReplicationNode, the catch-up of a joining member (storage/replication.h): the joiner's
// side (CatchUpLoop) and the primaries' (ServeCatchUp, ServeKeyPull).
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

constexpr std::size_t kCatchUpPage = 200;  // version rows a primary scans per call
constexpr std::chrono::milliseconds kRoundRetry{500};

bool OwnedBy(const std::vector<KeyOwner>& owners, const std::string& node) {
  for (const auto& owner : owners) {
    if (owner.node == node) {
      return true;
    }
  }
  return false;
}

}  // namespace

asio::awaitable<void> ReplicationNode::CatchUpLoop() {
  counters_.catching_up.store(true, std::memory_order_relaxed);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped_) {
    auto round = co_await CatchUpRound();
    if (round.ok()) {
      auto marked = co_await cluster_.MarkReady();
      if (marked.ok()) {
        spdlog::info("replication: {} caught up and is ready", cluster_.node());
        counters_.catching_up.store(false, std::memory_order_relaxed);
        co_return;
      }
      round = std::move(marked).error();
    }
    spdlog::warn("replication: catching up: {} (tried again)", round.error().message);
    timer.expires_after(kRoundRetry);
    co_await timer.async_wait(asio::use_awaitable);  // throws when cancelled: the loop ends
  }
}

asio::awaitable<Result<void>> ReplicationNode::CatchUpRound() {
  const auto view = cluster_.View();
  std::vector<const MemberInfo*> primaries;
  for (const auto& member : view->members) {
    if (member.ready && member.node != cluster_.node()) {
      primaries.push_back(&member);
    }
  }
  if (primaries.empty()) {
    co_return Ok();  // the first member, or a whole cluster starting: nobody knows more
  }
  STRATA_CO_TRY(auto buckets, co_await Offload(blocking_, [this] { return store_.ListBuckets(); }));
  for (const MemberInfo* primary : primaries) {
    for (const auto& bucket : buckets) {
      STRATA_CO_RETURN_IF_ERROR(co_await CatchUpBucket(primary->peer, bucket.name.str()));
    }
  }
  for (const auto& bucket : buckets) {
    STRATA_CO_RETURN_IF_ERROR(co_await ReconcileHeldKeys(bucket.name.str()));
  }
  if (cluster_.View()->epoch != view->epoch) {
    co_return Error(ErrorCode::kUnavailable, "the membership changed while catching up", true);
  }
  co_return Ok();
}

asio::awaitable<Result<void>> ReplicationNode::CatchUpBucket(const std::string& peer,
                                                             const std::string& bucket) {
  std::string after;
  while (!stopped_) {
    PeerRequest request;
    request.op = kPeerOpCatchUp;
    request.payload = EncodeKeyRange(KeyRange{bucket, after});
    STRATA_CO_TRY(auto call, co_await cluster_.Call(peer, request));
    STRATA_CO_TRY(auto response, co_await call->Response());
    STRATA_CO_TRY(auto answer, DecodeCatchUpAnswer(response.payload));
    if (answer.done) {
      co_return Ok();
    }
    if (answer.next <= after) {
      co_return Error(ErrorCode::kCorruption, "catch-up: a primary's scan did not advance");
    }
    after = std::move(answer.next);
  }
  co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
}

asio::awaitable<Result<void>> ReplicationNode::ReconcileHeldKeys(const std::string& bucket_name) {
  const BucketName bucket(bucket_name);
  std::string marker;
  while (!stopped_) {
    auto page = co_await Offload(blocking_, [this, &bucket, &marker] {
      return index_.ListVersions(bucket, "", marker, "", kCatchUpPage);
    });
    if (!page.ok()) {
      if (page.error().code == ErrorCode::kNoSuchBucket) {
        co_return Ok();
      }
      co_return std::move(page).error();
    }
    for (const std::string& key : KeysOfPage(*page, marker)) {
      const auto owners = cluster_.OwnersOf(bucket_name, key);
      if (owners.empty() || owners.front().self) {
        continue;
      }
      if (!OwnedBy(owners, cluster_.node())) {
        if (cluster_.replicas() > 1) {
          // Not this gateway's key any more: its owners hold it; an old copy here would come
          // back if this gateway owned it again some day.
          STRATA_CO_RETURN_IF_ERROR(co_await Offload(blocking_, [this, &bucket, &key] {
            return store_.ApplyReplica(bucket, ObjectKey(key), {});
          }));
        }
        continue;
      }
      PeerRequest request;
      request.op = kPeerOpKeyPull;
      request.payload = EncodeKeyRange(KeyRange{bucket_name, key});
      STRATA_CO_TRY(auto call, co_await cluster_.Call(owners.front().peer, request));
      STRATA_CO_RETURN_IF_ERROR(co_await call->Response());
      counters_.keys_pulled.fetch_add(1, std::memory_order_relaxed);
    }
    if (!page->truncated) {
      co_return Ok();
    }
  }
  co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
}

PeerTask<void> ReplicationNode::ServeCatchUp(PeerIncomingCall& call) {
  STRATA_CO_TRY(auto range, DecodeKeyRange(call.request().payload));
  const BucketName bucket(range.bucket);
  auto page = co_await Offload(blocking_, [this, &bucket, &range] {
    return index_.ListVersions(bucket, "", range.key, "", kCatchUpPage);
  });
  CatchUpAnswer answer;
  if (!page.ok()) {
    if (page.error().code != ErrorCode::kNoSuchBucket) {
      co_return std::move(page).error();
    }
    answer.done = true;
  } else {
    std::string last;
    for (const std::string& key : KeysOfPage(*page, last)) {
      const auto owners = cluster_.OwnersOf(range.bucket, key);
      if (owners.empty() || !owners.front().self || !OwnedBy(owners, call.peer())) {
        continue;
      }
      STRATA_CO_RETURN_IF_ERROR(co_await SyncOnCluster(bucket, ObjectKey(key), false));
    }
    answer.done = !page->truncated;
    answer.next = last;
  }
  PeerResponse response;
  response.payload = EncodeCatchUpAnswer(answer);
  co_return co_await call.Respond(std::move(response));
}

PeerTask<void> ReplicationNode::ServeKeyPull(PeerIncomingCall& call) {
  STRATA_CO_TRY(auto range, DecodeKeyRange(call.request().payload));
  const auto owners = cluster_.OwnersOf(range.bucket, range.key);
  if (owners.empty() || !owners.front().self || range.key.empty()) {
    co_return Error(ErrorCode::kUnavailable,
                    "this gateway is not the primary of " + range.key + " in its view", true);
  }
  const BucketName bucket(range.bucket);
  const ObjectKey key(range.key);
  PeerResponse response;
  response.payload.push_back(0);
  if (cluster_.replicas() == 1) {
    // The caller may hold the only copy: a key this primary never had stays there.
    STRATA_CO_TRY(auto versions, co_await Offload(blocking_, [this, &bucket, &key] {
                    return index_.KeyVersions(bucket, key, 1);
                  }));
    if (versions.empty()) {
      response.payload[0] = 1;
      co_return co_await call.Respond(std::move(response));
    }
  }
  STRATA_CO_RETURN_IF_ERROR(co_await SyncOnCluster(bucket, key, false));
  co_return co_await call.Respond(std::move(response));
}

}  // namespace strata::storage::cluster
