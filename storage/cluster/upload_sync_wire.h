// An upload sync (storage/replication.h's SyncUpload) as it travels over the peer
// transport.
//
// Request payload (integers little-endian): a format byte, a flags byte (bit 0: the upload
// is gone; bit 1: a part follows), the upload's record (a u32 length and metadata/codec.h's
// EncodeUpload, which carries the bucket, the key and the upload id) and, with bit 1, the
// part's record (a u32 length and EncodePart). The call's stream holds exactly the part's
// bytes. The answer's payload is empty: the change is applied.
//
// The decoder refuses (kCorruption) a wrong format, unknown flags, a part on a gone
// upload, records that do not decode, buckets, keys and upload ids out of S3's bounds, a
// part number outside 1..10000 or a part over 5 GiB, and trailing bytes: the peer's bytes
// are outside input.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::storage::cluster {

inline constexpr std::uint8_t kUploadSyncFormat = 1;

struct UploadSyncRequest {
  metadata::UploadRecord upload;
  bool gone = false;
  std::optional<metadata::PartRecord> part;  // its bytes follow in the stream
};

std::string EncodeUploadSync(const UploadSyncRequest& request);
Result<UploadSyncRequest> DecodeUploadSync(std::string_view bytes);

}  // namespace strata::storage::cluster
