#include "storage/peer/rdma_stream.h"

#include <utility>

#include "storage/crc64nvme.h"

namespace strata::storage::peer {
namespace {

Error Bad(const std::string& what) {
  return Error(ErrorCode::kCorruption, "rdma peer stream: " + what);
}
Error Misuse(const std::string& what) {
  return Error(ErrorCode::kInvalidArgument, "rdma peer stream: " + what);
}

}  // namespace

Result<void> RdmaStreamWriter::Write(const ReadDescriptor& d, std::string_view bytes) {
  if (closed_) {
    return Misuse("a chunk after the stream's end");
  }
  if (outstanding_.size() >= credits_) {
    return Misuse("no credit left");
  }
  if (d.sequence != next_ || d.length != bytes.size() || bytes.empty()) {
    return Misuse("a chunk out of sequence, or empty");
  }
  outstanding_.push_back(next_++);
  check_.Add(bytes);
  return Ok();
}

Result<std::string> RdmaStreamWriter::Close() {
  if (closed_) {
    return Misuse("closed twice");
  }
  closed_ = true;
  return check_.Trailer();
}

Result<void> RdmaStreamWriter::Credit(std::uint64_t sequence) {
  if (outstanding_.empty() || outstanding_.front() != sequence) {
    return Bad("a credit for chunk " + std::to_string(sequence) + ", not the oldest outstanding");
  }
  outstanding_.pop_front();
  return Ok();
}

Result<void> RdmaStreamReader::Offer(const ReadDescriptor& d) {
  if (has_trailer_) {
    return Bad("a chunk after the trailer");
  }
  if (d.sequence != next_) {
    return Bad("chunk " + std::to_string(d.sequence) + " where " + std::to_string(next_) +
               " was due");
  }
  if (chunks_.size() >= credits_) {
    return Bad("the writer announced more chunks than its " + std::to_string(credits_) +
               " credits");
  }
  STRATA_RETURN_IF_ERROR(peer_.Check(d));
  chunks_.push_back(Chunk{d});
  ++next_;
  return Ok();
}

Result<void> RdmaStreamReader::Completed(std::uint64_t sequence, std::string_view bytes) {
  for (Chunk& chunk : chunks_) {
    if (chunk.read) {
      continue;
    }
    // The oldest READ in flight.
    if (chunk.descriptor.sequence != sequence) {
      return Bad("READ of chunk " + std::to_string(sequence) + " completed before chunk " +
                 std::to_string(chunk.descriptor.sequence));
    }
    if (bytes.size() != chunk.descriptor.length) {
      return Bad("chunk " + std::to_string(sequence) + ": " + std::to_string(bytes.size()) +
                 " bytes read, " + std::to_string(chunk.descriptor.length) + " announced");
    }
    if (Crc64Nvme(0, bytes) != chunk.descriptor.crc) {
      return Bad("chunk " + std::to_string(sequence) + ": CRC64NVME mismatch");
    }
    chunk.read = true;
    check_.Add(bytes);
    return Ok();
  }
  return Bad("READ of chunk " + std::to_string(sequence) + " completed, none in flight");
}

Result<void> RdmaStreamReader::SetTrailer(std::string trailer) {
  if (has_trailer_) {
    return Bad("a second trailer");
  }
  trailer_ = std::move(trailer);
  has_trailer_ = true;
  return Ok();
}

Result<bool> RdmaStreamReader::Ended() {
  if (ended_) {
    return true;
  }
  if (!has_trailer_) {
    return false;
  }
  for (const Chunk& chunk : chunks_) {
    if (!chunk.read) {
      return false;
    }
  }
  STRATA_RETURN_IF_ERROR(check_.Verify(trailer_));
  ended_ = true;
  return true;
}

Result<void> RdmaStreamReader::Consume(std::uint64_t sequence) {
  if (chunks_.empty() || !chunks_.front().read || chunks_.front().descriptor.sequence != sequence) {
    return Misuse("consumed chunk " + std::to_string(sequence) +
                  " is not the oldest read and unconsumed");
  }
  chunks_.pop_front();
  return Ok();
}

}  // namespace strata::storage::peer
