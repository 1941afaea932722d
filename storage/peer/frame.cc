#include "storage/peer/frame.h"

#include <algorithm>

#include "common/little_endian.h"
#include "storage/crc64nvme.h"

namespace strata::storage::peer {
namespace {

bool KnownType(std::uint8_t type) {
  return type >= static_cast<std::uint8_t>(FrameType::kHello) &&
         type <= static_cast<std::uint8_t>(FrameType::kCredit);
}

constexpr std::size_t kCrcAt = 24;

// The header's fields before its CRC, appended to `out`.
Result<void> AppendHeadFields(std::string& out, FrameType type, std::uint16_t flags,
                              std::uint64_t request_id, std::size_t payload_size) {
  if (payload_size > kMaxFramePayload) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer frame payload of " + std::to_string(payload_size) + " bytes");
  }
  if ((flags & ~kKnownFlags) != 0 || !KnownType(static_cast<std::uint8_t>(type))) {
    return Error(ErrorCode::kInvalidArgument, "peer frame with an unknown type or flag");
  }
  PutLe(out, kFrameMagic, 4);
  PutLe(out, kFrameVersion, 1);
  PutLe(out, static_cast<std::uint8_t>(type), 1);
  PutLe(out, flags, 2);
  PutLe(out, request_id, 8);
  PutLe(out, payload_size, 4);
  PutLe(out, 0, 4);
  return Ok();
}

}  // namespace

Result<void> AppendFrame(std::string& out, const Frame& frame) {
  const std::size_t start = out.size();
  STRATA_RETURN_IF_ERROR(
      AppendHeadFields(out, frame.type, frame.flags, frame.request_id, frame.payload.size()));
  std::uint64_t crc = Crc64Nvme(0, std::string_view(out).substr(start, kCrcAt));
  crc = Crc64Nvme(crc, frame.payload);
  PutLe(out, crc, 8);
  out += frame.payload;
  return Ok();
}

Result<std::string> FrameHeader(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                std::size_t payload_size, std::uint64_t payload_crc) {
  std::string out;
  out.reserve(kFrameHeaderBytes);
  STRATA_RETURN_IF_ERROR(AppendHeadFields(out, type, flags, request_id, payload_size));
  const std::uint64_t crc = Crc64NvmeCombine(Crc64Nvme(0, out), payload_crc, payload_size);
  PutLe(out, crc, 8);
  return out;
}

Error FrameDecoder::Fail(Error error) {
  failed_ = error;
  header_.clear();
  header_.shrink_to_fit();
  payload_.clear();
  payload_.shrink_to_fit();
  return error;
}

Result<void> FrameDecoder::CheckHeader() {
  if (GetLe(header_, 0, 4) != kFrameMagic) {
    return Fail(Error(ErrorCode::kCorruption, "peer frame: bad magic"));
  }
  if (GetLe(header_, 4, 1) != kFrameVersion) {
    return Fail(Error(ErrorCode::kCorruption,
                      "peer frame: version " + std::to_string(GetLe(header_, 4, 1))));
  }
  if (!KnownType(static_cast<std::uint8_t>(GetLe(header_, 5, 1)))) {
    return Fail(
        Error(ErrorCode::kCorruption, "peer frame: type " + std::to_string(GetLe(header_, 5, 1))));
  }
  if ((GetLe(header_, 6, 2) & ~std::uint64_t{kKnownFlags}) != 0) {
    return Fail(Error(ErrorCode::kCorruption, "peer frame: unknown flags"));
  }
  if (GetLe(header_, 20, 4) != 0) {
    return Fail(Error(ErrorCode::kCorruption, "peer frame: reserved field set"));
  }
  length_ = static_cast<std::uint32_t>(GetLe(header_, 16, 4));
  if (length_ > max_payload_) {
    return Fail(Error(ErrorCode::kEntityTooLarge, "peer frame: payload of " +
                                                      std::to_string(length_) + " bytes, limit " +
                                                      std::to_string(max_payload_)));
  }
  return Ok();
}

Result<std::optional<Frame>> FrameDecoder::Next(std::string_view& in) {
  if (failed_) {
    return *failed_;
  }
  if (!have_header_) {
    const std::size_t take = std::min(kFrameHeaderBytes - header_.size(), in.size());
    header_.append(in.substr(0, take));
    in.remove_prefix(take);
    if (header_.size() < kFrameHeaderBytes) {
      return std::optional<Frame>();
    }
    if (auto checked = CheckHeader(); !checked.ok()) {
      return std::move(checked).error();
    }
    have_header_ = true;
    payload_.reserve(length_);
  }
  const std::size_t take = std::min<std::size_t>(length_ - payload_.size(), in.size());
  payload_.append(in.substr(0, take));
  in.remove_prefix(take);
  if (payload_.size() < length_) {
    return std::optional<Frame>();
  }
  std::uint64_t crc = Crc64Nvme(0, std::string_view(header_).substr(0, kCrcAt));
  std::optional<std::uint64_t> payload_crc;
  if (payload_.size() >= kOwnCrcFrom) {
    payload_crc = Crc64Nvme(0, payload_);
    crc = Crc64NvmeCombine(crc, *payload_crc, payload_.size());
  } else {
    crc = Crc64Nvme(crc, payload_);
  }
  if (crc != GetLe(header_, kCrcAt, 8)) {
    return Fail(Error(ErrorCode::kCorruption, "peer frame: CRC64NVME mismatch"));
  }
  Frame frame;
  frame.type = static_cast<FrameType>(GetLe(header_, 5, 1));
  frame.flags = static_cast<std::uint16_t>(GetLe(header_, 6, 2));
  frame.request_id = GetLe(header_, 8, 8);
  frame.payload = std::move(payload_);
  frame.payload_crc = payload_crc;
  payload_ = {};
  header_.clear();
  have_header_ = false;
  length_ = 0;
  return std::optional<Frame>(std::move(frame));
}

}  // namespace strata::storage::peer
