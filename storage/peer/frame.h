// The peer transport's frames (private to storage/): every message between two gateways
// travels as one or more frames over a TCP connection (or, with RDMA, the control
// messages beside the RDMA reads), each checked end to end by a CRC64NVME, so a flipped
// bit between two hosts' memories is refused, never acted on.
//
// On the wire, little-endian, a 32-byte header then the payload:
//   offset 0  u32 magic "STPF" (0x46505453)
//          4  u8  version (1)
//          5  u8  type (FrameType)
//          6  u16 flags (FrameFlags; unknown bits refused)
//          8  u64 request id (pairs a response and its data with the request)
//         16  u32 payload length (at most the decoder's limit, 1 MiB by default)
//         20  u32 reserved, 0
//         24  u64 CRC64NVME of header bytes 0..23 and then the payload
//
// FrameDecoder reads frames from a byte stream in any pieces: it buffers at most one
// header and one payload of the limit, refuses a length over the limit from the header
// alone (before any payload byte arrives), and after a bad frame refuses everything: the
// connection is closed, nothing of the stream is trusted past a bad byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata::storage::peer {

inline constexpr std::uint32_t kFrameMagic = 0x46505453;  // "STPF" read little-endian
inline constexpr std::uint8_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 32;
inline constexpr std::uint32_t kMaxFramePayload = 1u << 20;

enum class FrameType : std::uint8_t {
  kHello = 1,     // the handshake (storage/peer/handshake.h)
  kHelloAck = 2,  // its answer
  kRequest = 3,   // a metadata operation or a read, for the receiver to carry out
  kResponse = 4,  // its outcome
  kData = 5,      // a chunk of object bytes of a request or response
  kError = 6,     // the request failed; the payload says why
  kCredit = 7,    // RDMA only (storage/peer/rdma_wire.h): a chunk was read, its buffer is free
};

enum FrameFlags : std::uint16_t {
  kFlagLast = 1,  // the last kData frame of its request id
};
inline constexpr std::uint16_t kKnownFlags = kFlagLast;

// From this size on, a payload's CRC64NVME is computed once, on its own, and the frame's
// derived from it (Crc64NvmeCombine, a few microseconds): a stream's running check then
// reuses it instead of reading the bytes again. Below it, reading twice costs less.
inline constexpr std::size_t kOwnCrcFrom = 64 * 1024;

struct Frame {
  FrameType type = FrameType::kRequest;
  std::uint16_t flags = 0;
  std::uint64_t request_id = 0;
  std::string payload = {};
  // The payload's own CRC64NVME, set by FrameDecoder for payloads of kOwnCrcFrom bytes
  // or more.
  std::optional<std::uint64_t> payload_crc = {};
};

// Appends `frame`'s bytes (header and payload) to `out`. kInvalidArgument when the
// payload exceeds kMaxFramePayload or the flags are unknown.
Result<void> AppendFrame(std::string& out, const Frame& frame);
// The header alone of a frame whose payload, of `payload_size` bytes and CRC64NVME
// `payload_crc`, is sent right after it as it is (neither copied nor read again).
// kInvalidArgument as AppendFrame.
Result<std::string> FrameHeader(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                std::size_t payload_size, std::uint64_t payload_crc);

class FrameDecoder {
 public:
  explicit FrameDecoder(std::uint32_t max_payload = kMaxFramePayload) : max_payload_(max_payload) {}

  // Takes bytes from the front of `in` (advancing it) until one frame is complete, and
  // returns it; nullopt when `in` ran out first (call again with more). kCorruption for a
  // bad magic, version, type, flag, reserved field or CRC, kEntityTooLarge for a length
  // over the limit; once it failed it fails every call with the same error.
  Result<std::optional<Frame>> Next(std::string_view& in);

  // Bytes buffered for the frame being read (at most a header and the limit).
  std::size_t buffered() const { return header_.size() + payload_.size(); }

 private:
  Result<void> CheckHeader();
  Error Fail(Error error);

  std::uint32_t max_payload_;
  std::string header_;   // up to kFrameHeaderBytes
  std::string payload_;  // once the header is whole: up to its length
  std::uint32_t length_ = 0;
  bool have_header_ = false;
  std::optional<Error> failed_;
};

}  // namespace strata::storage::peer
