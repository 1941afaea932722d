// ReplicationNode: multipart uploads on every owner of their key. The primary sends each
// change of an upload (created, a part stored, aborted) to the key's other owners before
// the client's answer, so a part acknowledged through any gateway survives its primary;
// the key sync of a completed version ends the replicas' copies (EndCompletedUpload).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/co_try.h"
#include "common/offload.h"
#include "storage/checksum.h"
#include "storage/cluster/replication_node.h"
#include "storage/cluster/upload_sync_wire.h"

namespace strata::storage::cluster {
namespace {

namespace asio = boost::asio;

// The part's bytes as an object of one extent, for OpenObject.
metadata::ObjectRecord PartAsObject(const metadata::UploadRecord& upload,
                                    const metadata::PartRecord& part) {
  metadata::ObjectRecord object;
  object.bucket = upload.object.bucket;
  object.key = upload.object.key;
  object.size = part.size;
  object.etag = part.etag;
  object.checksums = part.checksums;
  object.placements.push_back(
      metadata::Placement{part.tier, {metadata::Extent{part.location, part.size}}});
  return object;
}

// The checksums a replica computes for a part: every one the primary recorded (CRC64NVME
// is always computed).
std::vector<ChecksumAlgorithm> PartAlgorithms(const metadata::PartRecord& part) {
  std::vector<ChecksumAlgorithm> algorithms;
  for (const auto& [name, value] : part.checksums) {
    auto algorithm = ParseChecksumAlgorithm(name);
    if (algorithm && *algorithm != ChecksumAlgorithm::kCrc64Nvme) {
      algorithms.push_back(*algorithm);
    }
  }
  return algorithms;
}

bool SameChecksums(std::vector<std::pair<std::string, std::string>> a,
                   std::vector<std::pair<std::string, std::string>> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

asio::awaitable<Result<void>> ReplicationNode::SyncUpload(UploadChange change) {
  co_return co_await asio::co_spawn(cluster_.executor(), SyncUploadOnCluster(std::move(change)),
                                    asio::use_awaitable);
}

asio::awaitable<Result<void>> ReplicationNode::SyncUploadOnCluster(UploadChange change) {
  if (stopped_) {
    co_return Error(ErrorCode::kUnavailable, "replication is stopping", true);
  }
  const BucketName bucket = change.upload.object.bucket;
  const ObjectKey key = change.upload.object.key;
  if (cluster_.OwnersOf(bucket.view(), key.view()).size() <= 1) {
    co_return Ok();
  }
  // Under the key's lock, in order with its key syncs, and read afresh: an upload completed
  // or aborted since this change was made travels as gone, a part stored again as the part
  // stored now, so a late sync never brings back what a later one ended. The parts of an
  // upload sync side by side (the key's lock shared, each part number's held alone); its
  // creation and its end wait for them, as the key syncs do.
  const std::string name = bucket.str() + '\0' + key.str();
  const auto mode = change.part ? KeyLocks::Mode::kShared : KeyLocks::Mode::kExclusive;
  STRATA_CO_TRY(auto guard, co_await locks_.Lock(name, mode));
  std::optional<KeyLocks::Guard> part_guard;
  if (change.part) {
    auto locked = co_await locks_.Lock(name + '\0' + change.upload.upload_id.str() + '\0' +
                                       std::to_string(change.part->number));
    if (!locked.ok()) {
      co_return std::move(locked).error();
    }
    part_guard.emplace(std::move(locked).value());
  }
  const auto owners = cluster_.OwnersOf(bucket.view(), key.view());
  if (owners.empty() || !owners.front().self) {
    co_return Error(ErrorCode::kUnavailable,
                    "this gateway is no longer the primary of " + key.str() + "; try again", true);
  }
  const std::optional<std::uint32_t> number =
      change.part ? std::optional(change.part->number) : std::nullopt;
  auto now = co_await Offload(blocking_, [this, &change, number]() -> Result<UploadChange> {
    const auto& object = change.upload.object;
    auto upload = index_.GetUpload(object.bucket, object.key, change.upload.upload_id);
    if (!upload.ok() && upload.error().code == ErrorCode::kNotFound) {
      return UploadChange{change.upload, std::nullopt, true};
    }
    if (!upload.ok()) {
      return std::move(upload).error();
    }
    UploadChange current{std::move(upload).value(), std::nullopt, false};
    if (number) {
      auto parts = index_.ListParts(current.upload.upload_id, *number - 1, 1);
      if (!parts.ok()) {
        return std::move(parts).error();
      }
      if (!parts->parts.empty() && parts->parts.front().number == *number) {
        current.part = std::move(parts->parts.front());
      }
    }
    return current;
  });
  if (!now.ok()) {
    co_return std::move(now).error();
  }
  for (const auto& owner : owners) {
    if (owner.self) {
      continue;
    }
    Result<void> synced = Ok();
    for (int attempt = 1;; ++attempt) {
      synced = co_await UploadSyncCall(owner.peer, *now);
      if (synced.ok() || !synced.error().retryable || attempt >= kOwnerAttempts || stopped_) {
        break;
      }
      auto ended = co_await AfterFailedAttempt(bucket.str(), key.str(), owner.node);
      if (ended) {
        synced = std::move(*ended);
        break;
      }
    }
    if (!synced.ok()) {
      counters_.sync_failures.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("replication: upload {} of {}/{} not synced to {}: {}",
                   change.upload.upload_id.str(), bucket.str(), key.str(), owner.node,
                   synced.error().message);
      co_return Error(ErrorCode::kUnavailable,
                      "a replica of the upload could not be written: " + synced.error().message,
                      true);
    }
  }
  counters_.syncs.fetch_add(1, std::memory_order_relaxed);
  co_return Ok();
}

asio::awaitable<Result<void>> ReplicationNode::UploadSyncCall(const std::string& peer,
                                                              const UploadChange& change) {
  PeerRequest request;
  request.op = kPeerOpUploadSync;
  request.payload = EncodeUploadSync(UploadSyncRequest{change.upload, change.gone, change.part});
  if (request.payload.size() > kMaxPeerPayload) {
    co_return Error(ErrorCode::kInternal, "the upload's record is too large to sync");
  }
  request.has_stream = change.part.has_value();
  STRATA_CO_TRY(auto call, co_await cluster_.Call(peer, request));
  if (change.part) {
    const metadata::ObjectRecord bytes = PartAsObject(change.upload, *change.part);
    STRATA_CO_RETURN_IF_ERROR(co_await StreamLocalCopy(*call, bytes, nullptr));
    STRATA_CO_RETURN_IF_ERROR(co_await call->CloseRequest());
  }
  STRATA_CO_TRY(auto response, co_await call->Response());
  if (!response.payload.empty()) {
    co_return Error(ErrorCode::kCorruption, "upload sync: an answer with a payload");
  }
  co_return Ok();
}

PeerTask<void> ReplicationNode::ServeUploadSync(PeerIncomingCall& call) {
  auto decoded = DecodeUploadSync(call.request().payload);
  if (!decoded.ok()) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("replication: an upload sync from {} refused: {}", call.peer(),
                 decoded.error().message);
    co_return std::move(decoded).error();
  }
  UploadSyncRequest request = std::move(decoded).value();
  const BucketName bucket = request.upload.object.bucket;
  const ObjectKey key = request.upload.object.key;
  STRATA_CO_RETURN_IF_ERROR(FromPrimary(call.peer(), bucket.str(), key.str()));
  if (request.gone) {
    auto aborted = co_await Offload(blocking_, [this, &request] {
      const auto& object = request.upload.object;
      return store_.AbortUpload(object.bucket, object.key, request.upload.upload_id);
    });
    if (!aborted.ok() && aborted.error().code != ErrorCode::kNoSuchUpload) {
      co_return RetryableOnReplica(aborted.error());
    }
    counters_.replica_writes.fetch_add(1, std::memory_order_relaxed);
    PeerResponse applied;  // not a braced temporary in the co_await (GCC 12)
    co_return co_await call.Respond(std::move(applied));
  }
  // The upload as the primary holds it, made here with its id if this owner lacks it (it
  // missed the creation, or became an owner since).
  auto held = co_await Offload(blocking_, [this, &request]() -> Result<void> {
    const auto& object = request.upload.object;
    auto upload = index_.GetUpload(object.bucket, object.key, request.upload.upload_id);
    if (upload.ok()) {
      return Ok();
    }
    if (upload.error().code != ErrorCode::kNotFound) {
      return std::move(upload).error();
    }
    return index_.CreateUpload(request.upload);
  });
  if (!held.ok()) {
    co_return RetryableOnReplica(held.error());
  }
  if (request.part) {
    const metadata::PartRecord& sent = *request.part;
    auto begun = co_await Offload(blocking_, [this, &bucket, &sent] {
      return store_.BeginWrite(bucket, PartAlgorithms(sent));
    });
    if (!begun.ok()) {
      co_return RetryableOnReplica(begun.error());
    }
    std::unique_ptr<PendingWrite> write = std::move(begun).value();
    while (true) {
      STRATA_CO_TRY(auto chunk, co_await call.Read());
      if (!chunk) {
        break;
      }
      if (chunk->size() > sent.size - write->size()) {
        co_return Error(ErrorCode::kCorruption, "upload sync: more bytes than the part's size");
      }
      const std::string_view piece = *chunk;
      STRATA_CO_RETURN_IF_ERROR(
          co_await Offload(blocking_, [&write, piece] { return write->Append(piece); }));
    }
    if (write->size() != sent.size) {
      co_return Error(ErrorCode::kCorruption, "upload sync: fewer bytes than the part's size");
    }
    counters_.bytes_received.fetch_add(sent.size, std::memory_order_relaxed);
    auto stored = co_await Offload(blocking_, [this, &write, &request, &sent] {
      return store_.CommitPart(std::move(write), request.upload, sent.number);
    });
    if (!stored.ok()) {
      co_return RetryableOnReplica(stored.error());
    }
    // The transport checked every chunk's CRC; this checks what was made of them.
    if (stored->etag != sent.etag || !SameChecksums(stored->checksums, sent.checksums)) {
      co_return Error(ErrorCode::kCorruption,
                      "upload sync: part " + std::to_string(sent.number) +
                          " does not match the primary's ETag or checksums");
    }
  }
  counters_.replica_writes.fetch_add(1, std::memory_order_relaxed);
  PeerResponse applied;  // not a braced temporary in the co_await (GCC 12)
  co_return co_await call.Respond(std::move(applied));
}

void ReplicationNode::EndCompletedUpload(const metadata::ObjectRecord& newest) {
  if (newest.upload_id.empty() || newest.delete_marker) {
    return;
  }
  auto ended = store_.AbortUpload(newest.bucket, newest.key, newest.upload_id);
  if (!ended.ok() && ended.error().code != ErrorCode::kNoSuchUpload) {
    spdlog::warn("replication: the copy of completed upload {} of {}/{} not removed: {}",
                 newest.upload_id.str(), newest.bucket.str(), newest.key.str(),
                 ended.error().message);
  }
}

}  // namespace strata::storage::cluster
