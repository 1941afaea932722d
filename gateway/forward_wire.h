// The heads of an S3 request forwarded to the gateway that owns its key, and of that
// gateway's answer, as they travel in a peer call's payload (storage/peer_transport.h;
// gateway/forward.h says who forwards what). The bodies travel as the call's streams.
//
// A forwarded request is the client's request as it arrived: method, target and every
// header (the signature and the Host it covers included), so the owner authenticates and
// serves it exactly as if the client had sent it there. The response head is the owner's
// status, headers and announced body length; the gateway the client talks to adds its
// own Date, Server, request id and Connection.
//
// Encoding (integers little-endian): a format byte, then
//   request:  method, target, remote address, request id (each a u32 length and bytes),
//             [format 2: u8 flags (bit 0: the forwarder keeps a read cache and takes
//             offers; bit 1: the client's connection is TLS), the tag of the version
//             its cache holds of the key (a string)],
//             then a u32 field count and each field's name and value (same form);
//   response: u16 status, u64 content length, u8 flags (bit 0: the owner asks that the
//             client's connection end after this response; format 2, bit 1: the body is
//             the forwarder's cached copy's bytes from `cache_first` on, and none comes),
//             [format 2: u64 cache_first, the offered version's tag (a string; empty: no
//             offer) and u64 CRC64NVME], then the fields as above.
// Format 2 carries the read cache's fields (storage/read_cache.h) and the TLS flag; a head
// without them is encoded as format 1, which gateways of earlier builds read.
// A decoder refuses (kCorruption) a wrong format, a length past the payload, trailing
// bytes, an unknown method, a target that is not an origin-form path, a status outside
// 100-599, a field name that is not an HTTP token, a value with CR, LF or NUL, and more
// than kMaxForwardedFields fields: what the peer sends is outside input, even from a
// peer that proved the cluster's secret.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace strata::gateway {

inline constexpr std::uint8_t kForwardFormat = 1;
inline constexpr std::uint8_t kForwardCacheFormat = 2;
inline constexpr std::size_t kMaxForwardedFields = 1000;

using ForwardedFields = std::vector<std::pair<std::string, std::string>>;

struct ForwardedRequestHead {
  std::string method;  // as on the request line ("GET")
  std::string target;  // origin form, "/bucket/key?query"
  std::string remote;  // the client's address, for the owner's log
  std::string request_id;
  ForwardedFields fields;
  // The forwarder keeps a read cache: the owner may offer it the version it sends.
  bool takes_cache = false;
  // The version of the key the forwarder's cache holds (its tag), or empty.
  std::string cached_tag = {};
  // The client's connection to the forwarder is TLS (a policy's aws:SecureTransport).
  bool secure = false;
};

struct ForwardedResponseHead {
  unsigned status = 200;
  std::uint64_t content_length = 0;
  bool close = false;
  ForwardedFields fields;
  // The forwarder sends the body from its cached copy, from this offset: the version the
  // owner serves is the one it named (cached_tag). No stream follows.
  bool from_cache = false;
  std::uint64_t cache_first = 0;
  // An offer: the body is all of the version of this tag, whose CRC64NVME is cache_crc.
  std::string cache_tag = {};
  std::uint64_t cache_crc = 0;
};

std::string EncodeRequestHead(const ForwardedRequestHead& head);
Result<ForwardedRequestHead> DecodeRequestHead(std::string_view bytes);

std::string EncodeResponseHead(const ForwardedResponseHead& head);
Result<ForwardedResponseHead> DecodeResponseHead(std::string_view bytes);

}  // namespace strata::gateway
