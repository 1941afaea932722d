// A copy whose source another member owns (CopyObject, UploadPartCopy across owners;
// gateway/remote_copy_source.h): what the destination's gateway asks the source key's
// primary for, in a kPeerOpReadVersion call's payload.
//
// Encoding (integers little-endian): a format byte, the bucket, the key, the version id
// (empty: the current version) and the ETag the version must still have (empty: any), each
// a u32 length and bytes, then u64 first and u64 length: the byte range to stream (length
// 0: none, the record only). The answer's payload is the version's record
// (metadata/codec.h's EncodeObject), its stream the bytes asked for.
// The decoder refuses (kCorruption) a wrong format, lengths past the payload, trailing
// bytes, an empty bucket or key, a key over 1024 bytes and a range that overflows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata::gateway {

struct ReadVersionRequest {
  std::string bucket;
  std::string key;
  std::string version_id;  // empty: the current version
  std::string if_etag;     // empty: any
  std::uint64_t first = 0;
  std::uint64_t length = 0;  // 0: the record only
};

std::string EncodeReadVersion(const ReadVersionRequest& request);
Result<ReadVersionRequest> DecodeReadVersion(std::string_view bytes);

}  // namespace strata::gateway
