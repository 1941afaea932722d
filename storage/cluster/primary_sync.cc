// ReplicationNode, the primary's side: a key's state sent to its other owners.
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
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

constexpr std::chrono::milliseconds kOwnerRetryWait{100};

asio::awaitable<void> Pause(std::chrono::milliseconds wait) {
  asio::steady_timer timer(co_await asio::this_coro::executor, wait);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

Error NotPrimary(const std::string& key) {
  return Error(ErrorCode::kUnavailable,
               "this gateway is no longer the primary of " + key + "; try again", true);
}

}  // namespace

asio::awaitable<Result<void>> ReplicationNode::SyncKey(const BucketName& bucket,
                                                       const ObjectKey& key, bool newest_is_new) {
  co_return co_await asio::co_spawn(cluster_.executor(), SyncOnCluster(bucket, key, newest_is_new),
                                    asio::use_awaitable);
}

asio::awaitable<Result<void>> ReplicationNode::SyncOnCluster(BucketName bucket, ObjectKey key,
                                                             bool newest_is_new,
                                                             std::uint64_t* sent) {
  if (stopped_) {
    co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
  }
  if (cluster_.OwnersOf(bucket.view(), key.view()).size() <= 1) {
    co_return Ok();  // replicas = 1, or a cluster of one
  }
  STRATA_CO_TRY(auto guard, co_await locks_.Lock(bucket.str() + '\0' + key.str()));
  // Owners as they are now that the lock is held: the view may have changed meanwhile.
  const auto owners = cluster_.OwnersOf(bucket.view(), key.view());
  if (owners.empty() || !owners.front().self) {
    co_return NotPrimary(key.str());
  }
  // One hop to the blocking pool for both reads. The item is read before the versions: a
  // push that finishes between the two reads then leaves the replica an item for a clean
  // key (pushed again, to no harm, if it becomes the primary) rather than a dirty key
  // without one. A write between them, or the push, has a sync of its own next, which
  // carries both as they are then.
  std::optional<metadata::WritebackItem> queued;
  auto versions = co_await Offload(blocking_, [this, &bucket, &key, &queued] {
    auto item = index_.GetWriteback(bucket, key);
    if (!item.ok()) {
      return Result<std::vector<metadata::ObjectRecord>>(std::move(item).error());
    }
    queued = std::move(item).value();
    return index_.KeyVersions(bucket, key, kMaxStreamedVersions + 1);
  });
  if (!versions.ok()) {
    co_return std::move(versions).error();
  }
  if (versions->size() > kMaxStreamedVersions) {
    co_return Error(ErrorCode::kInternal,
                    "key " + key.str() + " has more versions than a sync carries");
  }
  KeySyncRequest base{bucket.str(), key.str(), {}, std::move(queued)};
  std::vector<bool> local_bytes;
  for (auto& version : *versions) {
    local_bytes.push_back(store_.HoldsBytesLocally(version));
    base.versions.push_back(SyncedVersion{std::move(version), false});
  }
  for (const auto& owner : owners) {
    if (owner.self) {
      continue;
    }
    auto synced = co_await SyncOwner(owner, base, local_bytes, newest_is_new, sent);
    if (!synced.ok()) {
      counters_.sync_failures.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("replication: {}/{} not synced to {}: {}", bucket.str(), key.str(), owner.node,
                   synced.error().message);
      co_return Error(ErrorCode::kUnavailable,
                      "a replica of the key could not be written: " + synced.error().message, true);
    }
  }
  counters_.syncs.fetch_add(1, std::memory_order_relaxed);
  co_return Ok();
}

asio::awaitable<Result<void>> ReplicationNode::SyncOwner(const KeyOwner& owner,
                                                         const KeySyncRequest& base,
                                                         const std::vector<bool>& local_bytes,
                                                         bool newest_is_new, std::uint64_t* sent) {
  KeySyncRequest request = base;
  if (newest_is_new && !local_bytes.empty() && local_bytes.front()) {
    request.versions.front().bytes_follow = true;
  }
  bool asked_before = false;  // the replica said what it lacks once already
  for (int attempt = 1;; ++attempt) {
    if (stopped_) {
      co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
    }
    auto missing = co_await SyncCall(owner.peer, request, sent);
    if (missing.ok() && missing->empty()) {
      co_return Ok();
    }
    if (missing.ok()) {
      if (asked_before) {
        co_return Error(ErrorCode::kInternal, "the replica still lacks bytes it was sent");
      }
      asked_before = true;
      // The replica applied nothing: the bytes sent before are needed again, with those it
      // asked for (a version written meanwhile may be both, or the newest may be new).
      for (const std::uint32_t index : *missing) {
        if (!local_bytes[index]) {
          co_return Error(ErrorCode::kInternal,
                          "the replica asks for bytes of version " +
                              request.versions[index].record.version_id.str() +
                              ", which has no local copy here");
        }
        request.versions[index].bytes_follow = true;
      }
      continue;
    }
    if (!missing.error().retryable || attempt >= kOwnerAttempts) {
      co_return std::move(missing).error();
    }
    auto ended = co_await AfterFailedAttempt(base.bucket, base.key, owner.node);
    if (ended) {
      co_return std::move(*ended);
    }
  }
}

asio::awaitable<std::optional<Result<void>>> ReplicationNode::AfterFailedAttempt(
    const std::string& bucket, const std::string& key, const std::string& owner) {
  co_await Pause(kOwnerRetryWait);
  // Still the primary, and still an owner to sync? The view may have moved on.
  const auto owners = cluster_.OwnersOf(bucket, key);
  if (owners.empty() || !owners.front().self) {
    co_return NotPrimary(key);
  }
  for (const auto& now : owners) {
    if (now.node == owner) {
      co_return std::nullopt;  // try again
    }
  }
  co_return Ok();  // left the owners: the repair scan syncs the new one
}

asio::awaitable<Result<std::vector<std::uint32_t>>> ReplicationNode::SyncCall(
    const std::string& peer, const KeySyncRequest& request, std::uint64_t* sent) {
  PeerRequest call_request;
  call_request.op = kPeerOpKeySync;
  // The records in the payload when they fit, else at the head of the stream.
  bool records_streamed = request.versions.size() > kMaxSyncVersions;
  if (!records_streamed) {
    call_request.payload = EncodeKeySync(request);
    records_streamed = call_request.payload.size() > kMaxPeerPayload;
  }
  if (records_streamed) {
    call_request.payload = EncodeKeySyncHead(request);
  }
  call_request.has_stream = records_streamed;
  for (const auto& version : request.versions) {
    call_request.has_stream = call_request.has_stream || version.bytes_follow;
  }
  STRATA_CO_TRY(auto call, co_await cluster_.Call(peer, call_request));
  if (records_streamed) {
    std::string records;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i <= request.versions.size(); ++i) {
      const bool last = i == request.versions.size();
      if (!last) {
        const std::size_t before = records.size();
        AppendStreamedVersion(records, request.versions[i]);
        total += records.size() - before;
        if (total > kMaxStreamedRecordBytes) {
          co_return Error(ErrorCode::kInternal,
                          "key " + request.key + " has more versions than a sync carries");
        }
      }
      // Whole chunks as they fill, and what is left after the last record.
      while (records.size() >= kMaxPeerChunk || (last && !records.empty())) {
        const std::size_t size = std::min(records.size(), kMaxPeerChunk);
        std::string chunk = records.substr(0, size);
        records.erase(0, size);
        STRATA_CO_RETURN_IF_ERROR(co_await call->Write(std::move(chunk)));
      }
    }
  }
  if (call_request.has_stream) {
    for (const auto& version : request.versions) {
      if (!version.bytes_follow) {
        continue;
      }
      STRATA_CO_RETURN_IF_ERROR(co_await StreamLocalCopy(*call, version.record, sent));
    }
    STRATA_CO_RETURN_IF_ERROR(co_await call->CloseRequest());
  }
  STRATA_CO_TRY(auto response, co_await call->Response());
  co_return DecodeKeySyncAnswer(response.payload, request.versions.size());
}

asio::awaitable<Result<void>> ReplicationNode::StreamLocalCopy(PeerCall& call,
                                                               const metadata::ObjectRecord& record,
                                                               std::uint64_t* sent) {
  auto opened = co_await Offload(blocking_, [this, &record] { return store_.OpenObject(record); });
  if (!opened.ok()) {
    co_return std::move(opened).error();
  }
  std::unique_ptr<ObjectReader> reader = std::move(opened).value();
  for (std::uint64_t offset = 0; offset < record.size;) {
    std::string chunk(std::min<std::uint64_t>(kMaxPeerChunk, record.size - offset), '\0');
    auto read = co_await Offload(blocking_, [&reader, &chunk, offset] {
      return reader->Read(offset, std::span<char>(chunk.data(), chunk.size()));
    });
    if (!read.ok()) {
      co_return std::move(read).error();
    }
    if (*read == 0) {
      co_return Error(ErrorCode::kCorruption, "the local copy ended before its recorded size");
    }
    chunk.resize(*read);
    offset += *read;
    counters_.bytes_sent.fetch_add(*read, std::memory_order_relaxed);
    if (sent != nullptr) {
      *sent += *read;
    }
    STRATA_CO_RETURN_IF_ERROR(co_await call.Write(std::move(chunk)));
  }
  co_return Ok();
}

}  // namespace strata::storage::cluster
