// The RDMA peer transport's control messages (private to storage/): what two gateways
// exchange by SEND/RECV on an RC queue pair, beside the RDMA READs that move the bytes.
// Every message is exactly one frame of storage/peer/frame.h (CRC64NVME and all) of at most
// kRdmaMaxMessage bytes, the size of a posted RECV buffer:
//
//   kHello / kHelloAck  the handshake of storage/peer/handshake.h, unchanged (same proof)
//   kRequest   u32 op, u64 epoch, u8 flags (1: a stream follows, 2: the payload is remote),
//              then the payload inline (at most kRdmaMaxInline bytes), or, when remote, a
//              read descriptor of it (sequence 0)
//   kResponse  u32 status, u8 flags (as kRequest's), then the payload or its descriptor
//   kData      a read descriptor: "chunk `sequence` of the stream is ready at (addr, rkey,
//              length, CRC64NVME)"; flagged kFlagLast: the stream's end, the trailer of
//              storage/peer/wire.h (u64 length, u64 CRC64NVME of all the stream's bytes)
//   kCredit    u64 sequence: the reader read that chunk (or remote payload), the writer may
//              reuse its buffer
//   kError     storage/peer/wire.h's error payload, unchanged
//
// A read descriptor, 32 bytes: u64 address, u32 rkey, u32 length, u64 CRC64NVME of the
// bytes, u64 sequence (0 for a remote payload, 1, 2, ... for a stream's chunks).
//
// Each side announces its registered chunk region in rdma_cm's connection private data
// (RdmaRegion, 32 bytes: u32 magic "STPR", u8 version 1, 3 zero bytes, u64 address,
// u32 rkey, u32 chunk bytes, u32 chunk count, u32 credits); a descriptor must name one
// whole chunk slot of the peer's region (RdmaRegion::Check), so a READ never reaches
// outside what the peer registered for it.
//
// Decoders take outside input: they accept exactly what the encoders make and refuse
// anything else with kCorruption. Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/peer/frame.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

// One SEND / RECV buffer: a frame header and its payload.
inline constexpr std::size_t kRdmaMaxMessage = 4096;
inline constexpr std::size_t kRdmaDescriptorBytes = 32;
inline constexpr std::size_t kRdmaRegionBytes = 32;
inline constexpr std::uint32_t kRdmaRegionMagic = 0x52505453;  // "STPR" read little-endian
// A request's or response's payload up to this size travels inline; a larger one (up to
// kMaxPeerPayload) is read from the sender's buffer like a chunk.
inline constexpr std::size_t kRdmaMaxInline = kRdmaMaxMessage - kFrameHeaderBytes - 64;

// Where a chunk (or a remote payload) waits for the peer's RDMA READ.
struct ReadDescriptor {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;  // 1 to kMaxPeerChunk
  std::uint64_t crc = 0;     // CRC64NVME of the `length` bytes
  std::uint64_t sequence = 0;
  bool operator==(const ReadDescriptor&) const = default;
};

// A side's registered chunk region, as it announces it to its peer.
struct RdmaRegion {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t chunk_bytes = 0;  // 4 KiB to kMaxPeerChunk
  std::uint32_t chunk_count = 0;  // at least 1
  std::uint32_t credits = 0;      // chunks it lets one call have outstanding, >= 1
  bool operator==(const RdmaRegion&) const = default;

  // Ok when `d` names one whole slot of this region: the same rkey, an address at a slot's
  // start inside the region, a length from 1 to the slot's size. kCorruption otherwise.
  Result<void> Check(const ReadDescriptor& d) const;
};

std::string EncodeRegion(const RdmaRegion& region);
// kCorruption unless exactly kRdmaRegionBytes with the magic, version 1, zero padding, a
// chunk size from 4 KiB to kMaxPeerChunk, at least one chunk and one credit, and a region
// that does not wrap the address space.
Result<RdmaRegion> DecodeRegion(std::string_view bytes);

std::string EncodeDescriptor(const ReadDescriptor& d);
// kCorruption unless exactly kRdmaDescriptorBytes with a length from 1 to kMaxPeerChunk.
Result<ReadDescriptor> DecodeDescriptor(std::string_view bytes);

std::string EncodeCredit(std::uint64_t sequence);
Result<std::uint64_t> DecodeCredit(std::string_view bytes);

// A request or a response as the RDMA transport carries it: the payload inline, or a
// descriptor of where the peer reads it.
struct RdmaRequest {
  std::uint64_t epoch = 0;
  PeerRequest request = {};  // payload empty when remote
  std::optional<ReadDescriptor> remote = std::nullopt;
};
struct RdmaResponse {
  PeerResponse response = {};
  std::optional<ReadDescriptor> remote = std::nullopt;
};

// kInvalidArgument for an inline payload over kRdmaMaxInline, or a remote payload (whose
// descriptor must have sequence 0) together with inline bytes.
Result<std::string> EncodeRdmaRequest(const RdmaRequest& request);
Result<RdmaRequest> DecodeRdmaRequest(std::string_view payload);
Result<std::string> EncodeRdmaResponse(const RdmaResponse& response);
Result<RdmaResponse> DecodeRdmaResponse(std::string_view payload);

// One whole frame of at most kRdmaMaxMessage bytes; kInvalidArgument otherwise.
Result<std::string> EncodeMessage(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                  std::string payload);
// A received message: exactly one whole frame (FrameDecoder's checks), nothing after it.
// kCorruption (or kEntityTooLarge) otherwise.
Result<Frame> DecodeMessage(std::string_view message);

}  // namespace strata::storage::peer
