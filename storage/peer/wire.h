// The payloads of the peer transport's call frames (private to storage/), on top of
// storage/peer/frame.h. Little-endian, like the frame header:
//
//   kRequest   u32 op, u64 epoch (the caller's membership epoch), u8 flags (1: a stream
//              follows), then the request's payload
//   kResponse  u32 status, u8 flags (1: a stream follows), then the response's payload
//   kData      a chunk of a stream (1 to kMaxPeerChunk bytes), flags 0; the stream ends
//              with a kData frame flagged kFlagLast whose payload is the stream's trailer:
//              u64 length, u64 CRC64NVME of all the stream's bytes
//   kError     u16 ErrorCode, u8 flags (1: retryable, 2: the sender closes the connection
//              after it, 4: a stale epoch), u64 the sender's epoch, then the message
//              (at most kMaxErrorMessage bytes)
//
// Every frame of a call carries the call's request id (per connection, increasing from 1);
// a kError refusing a handshake carries 0. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/peer/frame.h"
#include "storage/peer_transport.h"

namespace strata::storage::peer {

inline constexpr std::size_t kRequestHeadBytes = 13;
inline constexpr std::size_t kResponseHeadBytes = 5;
inline constexpr std::size_t kTrailerBytes = 16;
inline constexpr std::size_t kMaxErrorMessage = 4096;

// The frame's bytes; kInvalidArgument as AppendFrame refuses.
Result<std::string> EncodeFrame(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                std::string payload);

struct WireRequest {
  std::uint64_t epoch = 0;
  PeerRequest request;
};
// kInvalidArgument for a payload over kMaxPeerPayload.
Result<std::string> EncodeRequest(std::uint64_t epoch, const PeerRequest& request);
// kCorruption for anything EncodeRequest would not have made.
Result<WireRequest> DecodeRequest(std::string_view payload);

Result<std::string> EncodeResponse(const PeerResponse& response);
Result<PeerResponse> DecodeResponse(std::string_view payload);

struct WireError {
  Error error;           // a stale epoch carries the sender's epoch (IsStaleEpoch)
  bool closing = false;  // the sender closes the connection after this frame
};
// The message is cut to kMaxErrorMessage bytes.
std::string EncodeError(const Error& error, bool closing, std::uint64_t epoch,
                        bool stale_epoch = false);
// kCorruption for a short payload, an unknown code or unknown flags.
Result<WireError> DecodeError(std::string_view payload);
// The error a callee sends a caller whose epoch is older than its own `epoch`.
Error StaleEpochError(std::string_view callee, std::uint64_t epoch, std::uint64_t caller_epoch);

// A stream's running length and CRC64NVME, on the side that writes it and the side that
// reads it.
class StreamCheck {
 public:
  void Add(std::string_view chunk);
  // `chunk` whose own CRC64NVME is `chunk_crc` when known (Frame::payload_crc): a chunk of
  // kOwnCrcFrom bytes or more is then not read again.
  void Add(std::string_view chunk, std::optional<std::uint64_t> chunk_crc);
  // The trailer the writer sends.
  std::string Trailer() const;
  // kCorruption when the trailer the reader got is malformed or names another length or
  // CRC than the chunks it read.
  Result<void> Verify(std::string_view trailer) const;
  std::uint64_t length() const { return length_; }

 private:
  std::uint64_t length_ = 0;
  std::uint64_t crc_ = 0;
};

}  // namespace strata::storage::peer
