// ReplicationNode, the replica's side: a key's state from its primary, applied here.
#include <spdlog/spdlog.h>

#include "common/co_try.h"
#include "common/offload.h"
#include "storage/cluster/replication_node.h"

namespace strata::storage::cluster {

Result<void> ReplicationNode::FromPrimary(const std::string& peer, const std::string& bucket,
                                          const std::string& key) {
  const auto owners = cluster_.OwnersOf(bucket, key);
  bool owner_here = false;
  for (const auto& owner : owners) {
    owner_here = owner_here || owner.self;
  }
  if (owners.empty() || owners.front().node != peer || !owner_here) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    return Error(ErrorCode::kUnavailable,
                 peer + " is not the primary of " + key +
                     " with this gateway as an owner in view " +
                     std::to_string(owners.empty() ? 0 : owners.front().epoch),
                 true);
  }
  return Ok();
}

PeerTask<void> ReplicationNode::ServeSync(PeerIncomingCall& call) {
  auto decoded = DecodeKeySync(call.request().payload);
  if (!decoded.ok()) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("replication: a key sync from {} refused: {}", call.peer(),
                 decoded.error().message);
    co_return std::move(decoded).error();
  }
  STRATA_CO_RETURN_IF_ERROR(FromPrimary(call.peer(), decoded->bucket, decoded->key));
  co_return co_await ApplySync(call, std::move(decoded).value());
}

PeerTask<void> ReplicationNode::ApplySync(PeerIncomingCall& call, KeySyncRequest request) {
  const BucketName bucket(request.bucket);
  const ObjectKey key(request.key);
  // A stack too large for the payload: its records head the stream. What follows them in
  // the chunk that ends them is the first of the versions' bytes.
  std::string after_records;
  if (request.streamed > 0) {
    StreamedVersionReader reader(request);
    while (!reader.done()) {
      STRATA_CO_TRY(auto chunk, co_await call.Read());
      if (!chunk) {
        co_return Error(ErrorCode::kCorruption, "key sync: the stream ended inside the records");
      }
      std::string_view data = *chunk;
      STRATA_CO_RETURN_IF_ERROR(reader.Feed(data));
      after_records.assign(data);
    }
  }
  // The newest version, when a completion made it: the copy here of its upload ends with it.
  std::optional<metadata::ObjectRecord> newest;
  if (!request.versions.empty() && !request.versions.front().record.upload_id.empty()) {
    newest = request.versions.front().record;
  }
  std::vector<ReplicaVersion> versions;
  std::vector<std::size_t> flagged;  // indexes whose bytes come in the stream, in order
  for (auto& version : request.versions) {
    if (version.bytes_follow) {
      flagged.push_back(versions.size());
    }
    versions.push_back(ReplicaVersion{std::move(version.record), nullptr});
  }
  for (const std::size_t index : flagged) {
    auto begun = co_await Offload(blocking_, [this, &bucket] {
      return store_.BeginWrite(bucket, std::vector<ChecksumAlgorithm>{});
    });
    if (!begun.ok()) {
      co_return RetryableOnReplica(begun.error());
    }
    versions[index].bytes = std::move(begun).value();
  }
  // The stream: the flagged versions' bytes back to back, each exactly its size.
  std::size_t current = 0;
  std::uint64_t received = 0;
  auto left = [&]() -> std::uint64_t {
    return current < flagged.size()
               ? versions[flagged[current]].record.size - versions[flagged[current]].bytes->size()
               : 0;
  };
  bool records_tail = !after_records.empty();
  while (true) {
    std::optional<std::string> chunk;
    if (records_tail) {
      chunk = std::move(after_records);
      records_tail = false;
    } else {
      STRATA_CO_TRY(chunk, co_await call.Read());
    }
    if (!chunk) {
      break;
    }
    std::string_view data = *chunk;
    while (!data.empty()) {
      while (current < flagged.size() && left() == 0) {
        ++current;
      }
      if (current == flagged.size()) {
        co_return Error(ErrorCode::kCorruption, "key sync: more bytes than the versions' sizes");
      }
      const std::string_view piece = data.substr(0, std::min<std::uint64_t>(left(), data.size()));
      PendingWrite& write = *versions[flagged[current]].bytes;
      STRATA_CO_RETURN_IF_ERROR(
          co_await Offload(blocking_, [&write, piece] { return write.Append(piece); }));
      data.remove_prefix(piece.size());
      received += piece.size();
    }
  }
  while (current < flagged.size() && left() == 0) {
    ++current;
  }
  if (current != flagged.size()) {
    co_return Error(ErrorCode::kCorruption, "key sync: fewer bytes than the versions' sizes");
  }
  counters_.bytes_received.fetch_add(received, std::memory_order_relaxed);
  auto applied = co_await Offload(blocking_, [this, &bucket, &key, &versions, &request, &newest] {
    auto done = store_.ApplyReplica(bucket, key, std::move(versions), request.writeback);
    if (done.ok() && done->empty() && newest) {
      EndCompletedUpload(*newest);
    }
    return done;
  });
  if (!applied.ok()) {
    co_return RetryableOnReplica(applied.error());
  }
  std::vector<std::uint32_t> missing(applied->begin(), applied->end());
  if (missing.empty()) {
    counters_.replica_writes.fetch_add(1, std::memory_order_relaxed);
  }
  PeerResponse response;
  response.payload = EncodeKeySyncAnswer(missing);
  co_return co_await call.Respond(std::move(response));
}

}  // namespace strata::storage::cluster
