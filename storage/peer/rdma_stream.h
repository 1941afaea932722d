// The two ends of one stream of a call over RDMA (private to storage/), without verbs:
// RdmaStreamWriter on the side whose bytes wait in its registered chunks, RdmaStreamReader
// on the side that READs them. RdmaSession (storage/peer/rdma_session.h) holds one of each
// per call and direction.
//
// Credits keep the memory bounded: the writer has at most `credits` chunks announced and
// not yet given back (a kCredit per chunk, in order), so it holds at most that many leased
// slots; the reader refuses a writer that announces more, and gives a credit back only
// once the chunk was consumed (its bytes handed on), so it too holds at most `credits`
// slots, however slow the consumer. Chunks are numbered 1, 2, ... and every step must come
// in that order: a descriptor, a completion, a credit out of order fails the stream.
//
// Neither class is thread-safe; each belongs to one call of one connection.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/peer/rdma_wire.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {

class RdmaStreamWriter {
 public:
  // `credits`: what the reader announced (RdmaRegion::credits).
  explicit RdmaStreamWriter(std::uint32_t credits) : credits_(credits) {}

  bool can_write() const { return !closed_ && outstanding_.size() < credits_; }
  std::uint64_t next_sequence() const { return next_; }
  // Announces chunk `d` (whose bytes are `bytes`). kInvalidArgument (the caller's bug):
  // no credit left, closed, or a sequence other than next_sequence().
  Result<void> Write(const ReadDescriptor& d, std::string_view bytes);
  // The trailer to send; the stream is closed. kInvalidArgument when closed already.
  Result<std::string> Close();
  // The reader consumed chunk `sequence`. kCorruption unless it is the oldest outstanding.
  Result<void> Credit(std::uint64_t sequence);

  bool closed() const { return closed_; }
  // Closed, and every chunk given back.
  bool done() const { return closed_ && outstanding_.empty(); }
  std::size_t outstanding() const { return outstanding_.size(); }

 private:
  std::uint32_t credits_;
  std::uint64_t next_ = 1;
  std::deque<std::uint64_t> outstanding_;  // at most credits_
  StreamCheck check_;
  bool closed_ = false;
};

class RdmaStreamReader {
 public:
  // `credits`: what this side announced; `peer`: the writer's region.
  RdmaStreamReader(std::uint32_t credits, const RdmaRegion& peer)
      : credits_(credits), peer_(peer) {}

  // A descriptor arrived: Ok means post the READ. kCorruption for a sequence out of order,
  // a descriptor outside the peer's region (RdmaRegion::Check), more than `credits`
  // unconsumed chunks, or a descriptor after the trailer.
  Result<void> Offer(const ReadDescriptor& d);
  // The READ of `sequence` completed with `bytes` in this side's slot. kCorruption when it
  // is not the oldest READ in flight, or its length or CRC64NVME is not the descriptor's.
  Result<void> Completed(std::uint64_t sequence, std::string_view bytes);
  // The trailer arrived. kCorruption for a second one.
  Result<void> SetTrailer(std::string trailer);
  // Whether the stream ended: trailer in and every READ completed; then the trailer's
  // length and CRC64NVME are checked (kCorruption when they do not match).
  Result<bool> Ended();
  // The consumer took chunk `sequence`: kInvalidArgument unless it is the oldest completed
  // unconsumed one. Then the credit for it goes to the writer.
  Result<void> Consume(std::uint64_t sequence);

  // Chunks announced and not consumed yet (READs in flight, or read and waiting).
  std::size_t unconsumed() const { return chunks_.size(); }
  // Ended and every chunk consumed.
  bool done() const { return ended_ && chunks_.empty(); }

 private:
  struct Chunk {
    ReadDescriptor descriptor;
    bool read = false;
  };
  std::uint32_t credits_;
  RdmaRegion peer_;
  std::uint64_t next_ = 1;
  std::deque<Chunk> chunks_;  // at most credits_
  StreamCheck check_;
  std::string trailer_;
  bool has_trailer_ = false;
  bool ended_ = false;
};

}  // namespace strata::storage::peer
