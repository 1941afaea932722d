#include "storage/cluster/upload_sync_wire.h"

#include "common/little_endian.h"
#include "metadata/codec.h"

namespace strata::storage::cluster {
namespace {

constexpr std::uint64_t kFlagGone = 1;
constexpr std::uint64_t kFlagPart = 2;
constexpr std::size_t kMaxKeyBytes = 1024;
constexpr std::size_t kMinBucketBytes = 3;
constexpr std::size_t kMaxBucketBytes = 63;
constexpr std::size_t kMaxUploadIdBytes = 128;
constexpr std::uint32_t kMaxPartNumber = 10000;
constexpr std::uint64_t kMaxPartBytes = 5ull << 30;

Error Malformed(std::string_view what) {
  return Error(ErrorCode::kCorruption, "upload sync: " + std::string(what));
}

}  // namespace

std::string EncodeUploadSync(const UploadSyncRequest& request) {
  std::string out;
  out.push_back(static_cast<char>(kUploadSyncFormat));
  out.push_back(static_cast<char>((request.gone ? kFlagGone : 0) | (request.part ? kFlagPart : 0)));
  PutLeString(out, metadata::EncodeUpload(request.upload));
  if (request.part) {
    PutLeString(out, metadata::EncodePart(*request.part));
  }
  return out;
}

Result<UploadSyncRequest> DecodeUploadSync(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t format = 0;
  std::uint64_t flags = 0;
  if (!in.Int(format, 1) || format != kUploadSyncFormat) {
    return Malformed("unknown format");
  }
  if (!in.Int(flags, 1) || flags > (kFlagGone | kFlagPart) || flags == (kFlagGone | kFlagPart)) {
    return Malformed("bad flags");
  }
  UploadSyncRequest request;
  request.gone = (flags & kFlagGone) != 0;
  std::string_view encoded;
  if (!in.Bytes(encoded, in.left())) {
    return Malformed("upload past the end");
  }
  auto upload = metadata::DecodeUpload(encoded);
  if (!upload.ok()) {
    return Malformed("bad upload: " + upload.error().message);
  }
  request.upload = std::move(upload).value();
  const auto& object = request.upload.object;
  if (object.bucket.view().size() < kMinBucketBytes ||
      object.bucket.view().size() > kMaxBucketBytes) {
    return Malformed("bad bucket");
  }
  if (object.key.empty() || object.key.view().size() > kMaxKeyBytes) {
    return Malformed("bad key");
  }
  if (request.upload.upload_id.empty() ||
      request.upload.upload_id.view().size() > kMaxUploadIdBytes) {
    return Malformed("bad upload id");
  }
  if ((flags & kFlagPart) != 0) {
    if (!in.Bytes(encoded, in.left())) {
      return Malformed("part past the end");
    }
    auto part = metadata::DecodePart(encoded);
    if (!part.ok()) {
      return Malformed("bad part: " + part.error().message);
    }
    if (part->number < 1 || part->number > kMaxPartNumber || part->size > kMaxPartBytes) {
      return Malformed("part number or size out of bounds");
    }
    request.part = std::move(part).value();
  }
  if (in.left() != 0) {
    return Malformed("trailing bytes");
  }
  return request;
}

}  // namespace strata::storage::cluster
