#include "storage/peer/wire.h"

#include <charconv>
#include <system_error>
#include <utility>

#include "common/little_endian.h"
#include "storage/crc64nvme.h"

namespace strata::storage {

namespace {
// The Error detail a stale-epoch refusal carries: the callee's epoch, in decimal.
constexpr const char* kEpochDetail = "StrataPeerEpoch";
}  // namespace

bool IsStaleEpoch(const Error& error, std::uint64_t* epoch) {
  if (error.code != ErrorCode::kPreconditionFailed) {
    return false;
  }
  for (const auto& [element, text] : error.details) {
    if (element == kEpochDetail) {
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return false;
      }
      if (epoch != nullptr) {
        *epoch = value;
      }
      return true;
    }
  }
  return false;
}

namespace peer {
namespace {

constexpr std::uint8_t kHasStream = 1;
constexpr std::uint8_t kErrorRetryable = 1;
constexpr std::uint8_t kErrorClosing = 2;
constexpr std::uint8_t kErrorStaleEpoch = 4;
constexpr std::size_t kErrorHeadBytes = 11;

Error Bad(const char* what) { return Error(ErrorCode::kCorruption, std::string("peer ") + what); }

}  // namespace

Result<std::string> EncodeFrame(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                std::string payload) {
  std::string out;
  out.reserve(kFrameHeaderBytes + payload.size());
  STRATA_RETURN_IF_ERROR(AppendFrame(out, Frame{type, flags, request_id, std::move(payload)}));
  return out;
}

Result<std::string> EncodeRequest(std::uint64_t epoch, const PeerRequest& request) {
  if (request.payload.size() > kMaxPeerPayload) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer request payload of " + std::to_string(request.payload.size()) +
                     " bytes, limit " + std::to_string(kMaxPeerPayload));
  }
  std::string out;
  out.reserve(kRequestHeadBytes + request.payload.size());
  PutLe(out, request.op, 4);
  PutLe(out, epoch, 8);
  PutLe(out, request.has_stream ? kHasStream : 0, 1);
  out += request.payload;
  return out;
}

Result<WireRequest> DecodeRequest(std::string_view payload) {
  if (payload.size() < kRequestHeadBytes || payload.size() > kRequestHeadBytes + kMaxPeerPayload) {
    return Bad("request: wrong length");
  }
  const auto flags = GetLe(payload, 12, 1);
  if ((flags & ~std::uint64_t{kHasStream}) != 0) {
    return Bad("request: unknown flags");
  }
  WireRequest out;
  out.request.op = static_cast<std::uint32_t>(GetLe(payload, 0, 4));
  out.epoch = GetLe(payload, 4, 8);
  out.request.has_stream = flags == kHasStream;
  out.request.payload = std::string(payload.substr(kRequestHeadBytes));
  return out;
}

Result<std::string> EncodeResponse(const PeerResponse& response) {
  if (response.payload.size() > kMaxPeerPayload) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer response payload of " + std::to_string(response.payload.size()) +
                     " bytes, limit " + std::to_string(kMaxPeerPayload));
  }
  std::string out;
  out.reserve(kResponseHeadBytes + response.payload.size());
  PutLe(out, response.status, 4);
  PutLe(out, response.has_stream ? kHasStream : 0, 1);
  out += response.payload;
  return out;
}

Result<PeerResponse> DecodeResponse(std::string_view payload) {
  if (payload.size() < kResponseHeadBytes ||
      payload.size() > kResponseHeadBytes + kMaxPeerPayload) {
    return Bad("response: wrong length");
  }
  const auto flags = GetLe(payload, 4, 1);
  if ((flags & ~std::uint64_t{kHasStream}) != 0) {
    return Bad("response: unknown flags");
  }
  PeerResponse out;
  out.status = static_cast<std::uint32_t>(GetLe(payload, 0, 4));
  out.has_stream = flags == kHasStream;
  out.payload = std::string(payload.substr(kResponseHeadBytes));
  return out;
}

std::string EncodeError(const Error& error, bool closing, std::uint64_t epoch, bool stale_epoch) {
  std::string out;
  PutLe(out, static_cast<std::uint16_t>(error.code), 2);
  PutLe(out,
        (error.retryable ? kErrorRetryable : 0) | (closing ? kErrorClosing : 0) |
            (stale_epoch ? kErrorStaleEpoch : 0),
        1);
  PutLe(out, epoch, 8);
  out += std::string_view(error.message).substr(0, kMaxErrorMessage);
  return out;
}

Result<WireError> DecodeError(std::string_view payload) {
  if (payload.size() < kErrorHeadBytes || payload.size() > kErrorHeadBytes + kMaxErrorMessage) {
    return Bad("error: wrong length");
  }
  const auto code = GetLe(payload, 0, 2);
  if (code > static_cast<std::uint64_t>(kLastErrorCode)) {
    return Bad("error: unknown code");
  }
  const auto flags = GetLe(payload, 2, 1);
  if ((flags & ~std::uint64_t{kErrorRetryable | kErrorClosing | kErrorStaleEpoch}) != 0) {
    return Bad("error: unknown flags");
  }
  WireError out;
  out.error = Error(static_cast<ErrorCode>(code), std::string(payload.substr(kErrorHeadBytes)),
                    (flags & kErrorRetryable) != 0);
  out.closing = (flags & kErrorClosing) != 0;
  if ((flags & kErrorStaleEpoch) != 0) {
    if (out.error.code != ErrorCode::kPreconditionFailed) {
      return Bad("error: a stale epoch of another code");
    }
    out.error.details.emplace_back(kEpochDetail, std::to_string(GetLe(payload, 3, 8)));
  }
  return out;
}

Error StaleEpochError(std::string_view callee, std::uint64_t epoch, std::uint64_t caller_epoch) {
  return Error(ErrorCode::kPreconditionFailed,
               "peer " + std::string(callee) + " is at membership epoch " + std::to_string(epoch) +
                   ", the call was made at epoch " + std::to_string(caller_epoch) +
                   ": refresh the membership and call again",
               true)
      .WithDetail(kEpochDetail, std::to_string(epoch));
}

void StreamCheck::Add(std::string_view chunk) {
  length_ += chunk.size();
  crc_ = Crc64Nvme(crc_, chunk);
}

void StreamCheck::Add(std::string_view chunk, std::optional<std::uint64_t> chunk_crc) {
  if (!chunk_crc || chunk.size() < kOwnCrcFrom) {
    Add(chunk);
    return;
  }
  length_ += chunk.size();
  crc_ = Crc64NvmeCombine(crc_, *chunk_crc, chunk.size());
}

std::string StreamCheck::Trailer() const {
  std::string out;
  PutLe(out, length_, 8);
  PutLe(out, crc_, 8);
  return out;
}

Result<void> StreamCheck::Verify(std::string_view trailer) const {
  if (trailer.size() != kTrailerBytes) {
    return Bad("stream: malformed trailer");
  }
  if (GetLe(trailer, 0, 8) != length_) {
    return Bad(("stream: " + std::to_string(length_) + " bytes received, " +
                std::to_string(GetLe(trailer, 0, 8)) + " sent")
                   .c_str());
  }
  if (GetLe(trailer, 8, 8) != crc_) {
    return Bad("stream: CRC64NVME of the whole stream mismatch");
  }
  return Ok();
}

}  // namespace peer
}  // namespace strata::storage
