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
constexpr std::chrono::seconds kCatchUpAnswerWithin{5};

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
  // Awaited on its own line: GCC 12 miscompiles a co_await inside a condition.
  const bool announced = co_await RoundsThenAnnounce(Move::kCatchUp);
  if (announced) {
    spdlog::info("replication: {} caught up and is ready", cluster_.node());
    counters_.catching_up.store(false, std::memory_order_relaxed);
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
  // A primary that has not seen this gateway join would find no key of it to sync.
  STRATA_CO_RETURN_IF_ERROR(co_await AwaitViewEverywhere(view->epoch));
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
    // Encoded first: no braced temporary lives across the co_await (GCC 12).
    std::string range = EncodeKeyRange(KeyRange{bucket, after});
    STRATA_CO_TRY(auto payload, co_await SmallCall(peer, kPeerOpCatchUp, std::move(range)));
    STRATA_CO_TRY(auto answer, DecodeCatchUpAnswer(payload));
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
  co_return co_await ForEachHeldKey(
      bucket,
      [this, &bucket, &bucket_name](const std::string& key) -> asio::awaitable<Result<void>> {
        const auto owners = cluster_.OwnersOf(bucket_name, key);
        if (owners.empty() || owners.front().self) {
          co_return Ok();
        }
        if (!OwnedBy(owners, cluster_.node())) {
          co_return co_await DropUnowned(bucket, ObjectKey(key), owners.front().peer);
        }
        STRATA_CO_TRY(auto answer, co_await PullKey(owners.front().peer, bucket_name, key));
        co_await Pace(answer.moved);
        co_return Ok();
      });
}

PeerTask<void> ReplicationNode::ServeCatchUp(PeerIncomingCall& call) {
  STRATA_CO_TRY(auto range, DecodeKeyRange(call.request().payload));
  // The joiner became an extra owner of its keys in a view this gateway's repair scan
  // answers to by moving them, uploads in progress included (upload_repair.cc), which only
  // a primary can: the joiner waits (it tries again) until that scan is done, or it could
  // become the primary of an upload it never received.
  if (scanned_epoch_.load(std::memory_order_relaxed) < cluster_.View()->epoch) {
    co_return Error(ErrorCode::kUnavailable,
                    "this member's repair scan of the current view is not done yet", true);
  }
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
    // The caller waits for the answer: a page stops early once it took a while (large
    // keys, the pacing), well within the transport's I/O timeout.
    const auto deadline = std::chrono::steady_clock::now() + kCatchUpAnswerWithin;
    std::string last;
    answer.done = !page->truncated;
    for (const std::string& key : KeysOfPage(*page, last)) {
      if (!answer.next.empty() && std::chrono::steady_clock::now() >= deadline) {
        answer.done = false;  // at least one key a call, so the caller's scan advances
        break;
      }
      answer.next = key;
      const auto owners = cluster_.OwnersOf(range.bucket, key);
      if (owners.empty() || !owners.front().self || !OwnedBy(owners, call.peer())) {
        continue;
      }
      STRATA_CO_TRY(const std::uint64_t moved, co_await MoveKey(bucket, ObjectKey(key)));
      co_await Pace(moved);
    }
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
  PullAnswer answer;
  if (cluster_.replicas() == 1) {
    // The caller may hold the only copy: a key this primary never had stays there.
    STRATA_CO_TRY(auto versions, co_await Offload(blocking_, [this, &bucket, &key] {
                    return index_.KeyVersions(bucket, key, 1);
                  }));
    answer.keep = versions.empty();
  }
  if (!answer.keep) {
    STRATA_CO_TRY(answer.moved, co_await MoveKey(bucket, key));
  }
  PeerResponse response;
  response.payload = EncodePullAnswer(answer);
  co_return co_await call.Respond(std::move(response));
}

}  // namespace strata::storage::cluster
