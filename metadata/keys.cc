#include "metadata/keys.h"

#include "metadata/codec.h"

namespace strata::metadata {

std::string ObjectBucketPrefix(std::string_view bucket) {
  std::string out;
  out.reserve(bucket.size() + 1);
  out.append(bucket);
  out.push_back('\0');
  return out;
}

std::string ObjectKeyPrefix(std::string_view bucket, std::string_view key) {
  std::string out;
  out.reserve(bucket.size() + key.size() + 2);
  out.append(bucket);
  out.push_back('\0');
  out.append(key);
  out.push_back('\0');
  return out;
}

std::string ObjectRowKey(std::string_view bucket, std::string_view key, std::uint64_t sequence) {
  Encoder e;
  e.PutBigEndian64(~sequence);
  return ObjectKeyPrefix(bucket, key) + std::move(e).Finish();
}

std::optional<ParsedObjectRow> ParseObjectRowKey(std::string_view row) {
  if (row.size() < 10) {
    return std::nullopt;
  }
  const auto first = row.find('\0');
  const std::size_t key_end = row.size() - 9;
  if (first == std::string_view::npos || first >= key_end || row[key_end] != '\0') {
    return std::nullopt;
  }
  ParsedObjectRow parsed;
  parsed.bucket = row.substr(0, first);
  parsed.key = row.substr(first + 1, key_end - first - 1);
  if (parsed.key.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  Decoder d(row.substr(key_end + 1));
  std::uint64_t inverted = 0;
  if (!d.GetBigEndian64(&inverted)) {
    return std::nullopt;
  }
  parsed.sequence = ~inverted;
  return parsed;
}

std::string UploadRowKey(std::string_view bucket, std::string_view key,
                         std::string_view upload_id) {
  std::string out = ObjectKeyPrefix(bucket, key);
  out.append(upload_id);
  return out;
}

std::string PartPrefix(std::string_view upload_id) {
  std::string out(upload_id);
  out.push_back('\0');
  return out;
}

std::string PartRowKey(std::string_view upload_id, std::uint32_t number) {
  std::string out = PartPrefix(upload_id);
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((number >> shift) & 0xff));
  }
  return out;
}

std::string WritebackRowKey(std::string_view bucket, std::string_view key) {
  std::string out(kWritebackRowPrefix);
  out.append(bucket);
  out.push_back('\0');
  out.append(key);
  return out;
}

std::optional<ParsedWritebackRow> ParseWritebackRowKey(std::string_view row) {
  if (!row.starts_with(kWritebackRowPrefix)) {
    return std::nullopt;
  }
  row.remove_prefix(kWritebackRowPrefix.size());
  const std::size_t zero = row.find('\0');
  if (zero == std::string_view::npos || zero == 0) {
    return std::nullopt;
  }
  return ParsedWritebackRow{row.substr(0, zero), row.substr(zero + 1)};
}

}  // namespace strata::metadata
