#include "storage/peer/rdma_wire.h"

#include <limits>
#include <utility>

#include "common/little_endian.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

constexpr std::uint8_t kHasStream = 1;
constexpr std::uint8_t kRemotePayload = 2;
constexpr std::uint32_t kMinChunkBytes = 4096;

Error Bad(const std::string& what) { return Error(ErrorCode::kCorruption, "rdma peer " + what); }

// The payload part of a request or response after its `head` bytes: inline bytes or a
// descriptor, as `flags` says.
Result<void> DecodeBody(std::string_view payload, std::size_t head, std::uint64_t flags,
                        std::string& inline_payload, std::optional<ReadDescriptor>& remote) {
  const std::string_view body = payload.substr(head);
  if ((flags & kRemotePayload) == 0) {
    if (body.size() > kRdmaMaxInline) {
      return Bad("message: inline payload too long");
    }
    inline_payload = std::string(body);
    return Ok();
  }
  auto d = DecodeDescriptor(body);
  if (!d.ok()) {
    return std::move(d).error();
  }
  if (d->sequence != 0 || d->length <= kRdmaMaxInline || d->length > kMaxPeerPayload) {
    return Bad("message: a remote payload's descriptor with a bad sequence or length");
  }
  remote = *d;
  return Ok();
}

Result<void> CheckBody(const std::string& payload, const std::optional<ReadDescriptor>& remote) {
  if (remote) {
    if (!payload.empty() || remote->sequence != 0 || remote->length <= kRdmaMaxInline ||
        remote->length > kMaxPeerPayload) {
      return Error(ErrorCode::kInvalidArgument,
                   "rdma peer message: a remote payload needs no inline bytes, sequence 0 and "
                   "a length above the inline limit");
    }
  } else if (payload.size() > kRdmaMaxInline) {
    return Error(ErrorCode::kInvalidArgument,
                 "rdma peer message: inline payload of " + std::to_string(payload.size()) +
                     " bytes, limit " + std::to_string(kRdmaMaxInline));
  }
  return Ok();
}

void AppendBody(std::string& out, const std::string& payload,
                const std::optional<ReadDescriptor>& remote) {
  if (remote) {
    out += EncodeDescriptor(*remote);
  } else {
    out += payload;
  }
}

std::uint8_t Flags(bool has_stream, bool remote) {
  return static_cast<std::uint8_t>((has_stream ? kHasStream : 0) | (remote ? kRemotePayload : 0));
}

}  // namespace

Result<void> RdmaRegion::Check(const ReadDescriptor& d) const {
  if (d.rkey != rkey) {
    return Bad("descriptor: rkey " + std::to_string(d.rkey) + " is not the peer's region");
  }
  if (d.length == 0 || d.length > chunk_bytes) {
    return Bad("descriptor: length " + std::to_string(d.length) + " for slots of " +
               std::to_string(chunk_bytes));
  }
  if (d.addr < addr || (d.addr - addr) % chunk_bytes != 0 ||
      (d.addr - addr) / chunk_bytes >= chunk_count) {
    return Bad("descriptor: address outside the peer's region or not at a slot's start");
  }
  return Ok();
}

std::string EncodeRegion(const RdmaRegion& region) {
  std::string out;
  PutLe(out, kRdmaRegionMagic, 4);
  PutLe(out, 1, 1);
  PutLe(out, 0, 3);
  PutLe(out, region.addr, 8);
  PutLe(out, region.rkey, 4);
  PutLe(out, region.chunk_bytes, 4);
  PutLe(out, region.chunk_count, 4);
  PutLe(out, region.credits, 4);
  return out;
}

Result<RdmaRegion> DecodeRegion(std::string_view bytes) {
  if (bytes.size() != kRdmaRegionBytes || GetLe(bytes, 0, 4) != kRdmaRegionMagic ||
      GetLe(bytes, 4, 1) != 1 || GetLe(bytes, 5, 3) != 0) {
    return Bad("region: not a region announcement");
  }
  RdmaRegion r;
  r.addr = GetLe(bytes, 8, 8);
  r.rkey = static_cast<std::uint32_t>(GetLe(bytes, 16, 4));
  r.chunk_bytes = static_cast<std::uint32_t>(GetLe(bytes, 20, 4));
  r.chunk_count = static_cast<std::uint32_t>(GetLe(bytes, 24, 4));
  r.credits = static_cast<std::uint32_t>(GetLe(bytes, 28, 4));
  if (r.chunk_bytes < kMinChunkBytes || r.chunk_bytes > kMaxPeerChunk || r.chunk_count == 0 ||
      r.credits == 0) {
    return Bad("region: bad chunk size, count or credits");
  }
  const std::uint64_t span = std::uint64_t{r.chunk_bytes} * r.chunk_count;
  if (r.addr > std::numeric_limits<std::uint64_t>::max() - span) {
    return Bad("region: wraps the address space");
  }
  return r;
}

std::string EncodeDescriptor(const ReadDescriptor& d) {
  std::string out;
  out.reserve(kRdmaDescriptorBytes);
  PutLe(out, d.addr, 8);
  PutLe(out, d.rkey, 4);
  PutLe(out, d.length, 4);
  PutLe(out, d.crc, 8);
  PutLe(out, d.sequence, 8);
  return out;
}

Result<ReadDescriptor> DecodeDescriptor(std::string_view bytes) {
  if (bytes.size() != kRdmaDescriptorBytes) {
    return Bad("descriptor: wrong length");
  }
  ReadDescriptor d;
  d.addr = GetLe(bytes, 0, 8);
  d.rkey = static_cast<std::uint32_t>(GetLe(bytes, 8, 4));
  d.length = static_cast<std::uint32_t>(GetLe(bytes, 12, 4));
  d.crc = GetLe(bytes, 16, 8);
  d.sequence = GetLe(bytes, 24, 8);
  if (d.length == 0 || d.length > kMaxPeerChunk) {
    return Bad("descriptor: length " + std::to_string(d.length));
  }
  return d;
}

std::string EncodeCredit(std::uint64_t sequence) {
  std::string out;
  PutLe(out, sequence, 8);
  return out;
}

Result<std::uint64_t> DecodeCredit(std::string_view bytes) {
  if (bytes.size() != 8) {
    return Bad("credit: wrong length");
  }
  return GetLe(bytes, 0, 8);
}

Result<std::string> EncodeRdmaRequest(const RdmaRequest& r) {
  STRATA_RETURN_IF_ERROR(CheckBody(r.request.payload, r.remote));
  std::string out;
  PutLe(out, r.request.op, 4);
  PutLe(out, r.epoch, 8);
  PutLe(out, Flags(r.request.has_stream, r.remote.has_value()), 1);
  AppendBody(out, r.request.payload, r.remote);
  return out;
}

Result<RdmaRequest> DecodeRdmaRequest(std::string_view payload) {
  if (payload.size() < kRequestHeadBytes) {
    return Bad("request: too short");
  }
  const auto flags = GetLe(payload, 12, 1);
  if ((flags & ~std::uint64_t{kHasStream | kRemotePayload}) != 0) {
    return Bad("request: unknown flags");
  }
  RdmaRequest r;
  r.request.op = static_cast<std::uint32_t>(GetLe(payload, 0, 4));
  r.epoch = GetLe(payload, 4, 8);
  r.request.has_stream = (flags & kHasStream) != 0;
  STRATA_RETURN_IF_ERROR(
      DecodeBody(payload, kRequestHeadBytes, flags, r.request.payload, r.remote));
  return r;
}

Result<std::string> EncodeRdmaResponse(const RdmaResponse& r) {
  STRATA_RETURN_IF_ERROR(CheckBody(r.response.payload, r.remote));
  std::string out;
  PutLe(out, r.response.status, 4);
  PutLe(out, Flags(r.response.has_stream, r.remote.has_value()), 1);
  AppendBody(out, r.response.payload, r.remote);
  return out;
}

Result<RdmaResponse> DecodeRdmaResponse(std::string_view payload) {
  if (payload.size() < kResponseHeadBytes) {
    return Bad("response: too short");
  }
  const auto flags = GetLe(payload, 4, 1);
  if ((flags & ~std::uint64_t{kHasStream | kRemotePayload}) != 0) {
    return Bad("response: unknown flags");
  }
  RdmaResponse r;
  r.response.status = static_cast<std::uint32_t>(GetLe(payload, 0, 4));
  r.response.has_stream = (flags & kHasStream) != 0;
  STRATA_RETURN_IF_ERROR(
      DecodeBody(payload, kResponseHeadBytes, flags, r.response.payload, r.remote));
  return r;
}

Result<std::string> EncodeMessage(FrameType type, std::uint16_t flags, std::uint64_t request_id,
                                  std::string payload) {
  if (kFrameHeaderBytes + payload.size() > kRdmaMaxMessage) {
    return Error(ErrorCode::kInvalidArgument, "rdma peer message of " +
                                                  std::to_string(payload.size()) +
                                                  " payload bytes: over one RECV buffer");
  }
  return EncodeFrame(type, flags, request_id, std::move(payload));
}

Result<Frame> DecodeMessage(std::string_view message) {
  if (message.size() > kRdmaMaxMessage) {
    return Error(ErrorCode::kEntityTooLarge, "rdma peer message over one RECV buffer");
  }
  FrameDecoder decoder(static_cast<std::uint32_t>(kRdmaMaxMessage - kFrameHeaderBytes));
  auto frame = decoder.Next(message);
  if (!frame.ok()) {
    return std::move(frame).error();
  }
  if (!*frame) {
    return Bad("message: a truncated frame");
  }
  if (!message.empty()) {
    return Bad("message: bytes after its frame");
  }
  return std::move(**frame);
}

}  // namespace strata::storage::peer
