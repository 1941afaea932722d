#include "gateway/listing_wire.h"

#include "common/little_endian.h"
#include "metadata/codec.h"

namespace strata::gateway {
namespace {

constexpr std::size_t kMaxKeyBytes = 1024;

Error Malformed(std::string_view what) {
  return Error(ErrorCode::kCorruption, "listing: " + std::string(what));
}

}  // namespace

std::string EncodeListingRequest(const ListingRequest& request) {
  std::string out;
  out.push_back(static_cast<char>(kListingFormat));
  out.push_back(static_cast<char>(request.kind));
  PutLeString(out, request.bucket);
  PutLeString(out, request.prefix);
  PutLeString(out, request.marker);
  PutLeString(out, request.version_marker);
  PutLe(out, request.limit, 4);
  return out;
}

Result<ListingRequest> DecodeListingRequest(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t format = 0;
  std::uint64_t kind = 0;
  if (!in.Int(format, 1) || format != kListingFormat) {
    return Malformed("unknown format");
  }
  if (!in.Int(kind, 1) || kind < 1 || kind > 3) {
    return Malformed("unknown kind");
  }
  ListingRequest request;
  request.kind = static_cast<ListingKind>(kind);
  std::uint64_t limit = 0;
  // The marker may be a key, or a delimited prefix with 1025 bytes of 0xff after it
  // (gateway's skip past a common prefix): at most two keys' worth.
  if (!in.String(request.bucket, 255) || !in.String(request.prefix, kMaxKeyBytes) ||
      !in.String(request.marker, 2 * kMaxKeyBytes + 2) ||
      !in.String(request.version_marker, kMaxKeyBytes) || !in.Int(limit, 4)) {
    return Malformed("cut short, or a field too long");
  }
  if (limit == 0 || limit > kMaxListingRows) {
    return Malformed("a row limit out of range");
  }
  if (in.left() != 0) {
    return Malformed("trailing bytes");
  }
  request.limit = static_cast<std::uint32_t>(limit);
  return request;
}

std::string EncodeListingAnswer(bool truncated) {
  std::string out;
  out.push_back(static_cast<char>(kListingFormat));
  out.push_back(truncated ? 1 : 0);
  return out;
}

Result<bool> DecodeListingAnswer(std::string_view bytes) {
  if (bytes.size() != 2 || bytes[0] != static_cast<char>(kListingFormat) ||
      (bytes[1] != 0 && bytes[1] != 1)) {
    return Malformed("an answer that is not one");
  }
  return bytes[1] == 1;
}

void AppendListingRow(std::string& out, const metadata::ObjectRecord& record, bool latest) {
  PutLeString(out, record.key.str());
  out.push_back(latest ? 1 : 0);
  PutLeString(out, metadata::EncodeObject(record));
}

void AppendUploadRow(std::string& out, const metadata::UploadRecord& upload) {
  PutLeString(out, upload.object.key.str());
  out.push_back(0);
  PutLeString(out, metadata::EncodeUpload(upload));
}

Result<std::optional<ListingRowReader::Row>> ListingRowReader::NextRow() {
  const std::string_view in(buffer_);
  std::size_t at = offset_;
  const auto need_more = std::optional<Row>();
  // key length, key, flags, record length, record: each length is checked against its
  // limit as soon as it is known, so a bad one fails without waiting for more bytes.
  if (in.size() - at < 4) {
    return need_more;
  }
  const std::uint64_t key_size = GetLe(in, at, 4);
  if (key_size > kMaxKeyBytes) {
    return Malformed("a key too long");
  }
  at += 4;
  if (in.size() - at < key_size + 1 + 4) {
    return need_more;
  }
  const std::string_view key = in.substr(at, key_size);
  at += key_size;
  const std::uint64_t flags = GetLe(in, at, 1);
  at += 1;
  const std::uint64_t record_size = GetLe(in, at, 4);
  if (record_size > kMaxListingRowBytes) {
    return Malformed("a row too long");
  }
  at += 4;
  if (in.size() - at < record_size) {
    return need_more;
  }
  const std::string_view record = in.substr(at, record_size);
  at += record_size;
  if (flags > 1) {
    return Malformed("unknown row flags");
  }
  Row row;
  row.key.assign(key);
  row.latest = flags == 1;
  row.record.assign(record);
  offset_ = at;
  // Keep the buffer small: drop what was read once it is most of it.
  if (offset_ > 64 * 1024 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return std::optional<Row>(std::move(row));
}

Result<std::optional<metadata::VersionEntry>> ListingRowReader::Next() {
  auto row = NextRow();
  if (!row.ok()) {
    return std::move(row).error();
  }
  if (!row->has_value()) {
    return std::optional<metadata::VersionEntry>();
  }
  auto decoded = metadata::DecodeObject((*row)->record);
  if (!decoded.ok()) {
    return Malformed("a record that does not decode: " + decoded.error().message);
  }
  metadata::VersionEntry entry;
  entry.record = std::move(decoded).value();
  entry.record.bucket = BucketName(bucket_);
  entry.record.key = ObjectKey(std::move((*row)->key));
  entry.latest = (*row)->latest;
  return std::optional<metadata::VersionEntry>(std::move(entry));
}

Result<std::optional<metadata::UploadRecord>> ListingRowReader::NextUpload() {
  auto row = NextRow();
  if (!row.ok()) {
    return std::move(row).error();
  }
  if (!row->has_value()) {
    return std::optional<metadata::UploadRecord>();
  }
  auto decoded = metadata::DecodeUpload((*row)->record);
  if (!decoded.ok()) {
    return Malformed("an upload that does not decode: " + decoded.error().message);
  }
  // The row's key and this listing's bucket are the upload's, whatever its record says.
  decoded->object.bucket = BucketName(bucket_);
  decoded->object.key = ObjectKey(std::move((*row)->key));
  return std::optional<metadata::UploadRecord>(std::move(decoded).value());
}

}  // namespace strata::gateway
