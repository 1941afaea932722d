#include "gateway/copy_source_wire.h"

#include "common/little_endian.h"

namespace strata::gateway {
namespace {

constexpr char kFormat = 1;
constexpr std::uint64_t kMaxKeyBytes = 1024;
constexpr std::uint64_t kMaxNameBytes = 1024;  // bucket names, version ids, ETags: far less

}  // namespace

std::string EncodeReadVersion(const ReadVersionRequest& request) {
  std::string out(1, kFormat);
  PutLeString(out, request.bucket);
  PutLeString(out, request.key);
  PutLeString(out, request.version_id);
  PutLeString(out, request.if_etag);
  PutLe(out, request.first, 8);
  PutLe(out, request.length, 8);
  return out;
}

Result<ReadVersionRequest> DecodeReadVersion(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t format = 0;
  ReadVersionRequest request;
  if (!in.Int(format, 1) || format != kFormat || !in.String(request.bucket, kMaxNameBytes) ||
      !in.String(request.key, kMaxKeyBytes) || !in.String(request.version_id, kMaxNameBytes) ||
      !in.String(request.if_etag, kMaxNameBytes) || !in.Int(request.first, 8) ||
      !in.Int(request.length, 8) || in.left() != 0 || request.bucket.empty() ||
      request.key.empty() || request.first + request.length < request.first) {
    return Error(ErrorCode::kCorruption, "a copy source read is malformed");
  }
  return request;
}

}  // namespace strata::gateway
