#include "metadata/keys.h"

#include <algorithm>
#include <cstdint>

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

std::string LifecycleRowKey(const LifecycleRow& row) {
  std::string out(kLifecycleRowPrefix);
  // Due times before the epoch never occur; clamping keeps the order of the rest.
  const auto due = static_cast<std::uint64_t>(std::max<std::int64_t>(row.due_ms, 0));
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((due >> shift) & 0xff));
  }
  out.push_back(row.upload_id.empty() ? 'k' : 'u');
  out.append(row.bucket);
  out.push_back('\0');
  out.append(row.key);
  if (!row.upload_id.empty()) {
    out.push_back('\0');
    out.append(row.upload_id);
  }
  return out;
}

std::optional<LifecycleRow> ParseLifecycleRowKey(std::string_view row) {
  if (!row.starts_with(kLifecycleRowPrefix) || row.size() < kLifecycleRowPrefix.size() + 9) {
    return std::nullopt;
  }
  row.remove_prefix(kLifecycleRowPrefix.size());
  std::uint64_t due = 0;
  for (int i = 0; i < 8; ++i) {
    due = (due << 8) | static_cast<std::uint8_t>(row[i]);
  }
  const char kind = row[8];
  row.remove_prefix(9);
  const std::size_t zero = row.find('\0');
  if ((kind != 'k' && kind != 'u') || zero == std::string_view::npos || zero == 0 ||
      due > static_cast<std::uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  LifecycleRow out;
  out.due_ms = static_cast<std::int64_t>(due);
  out.bucket = std::string(row.substr(0, zero));
  std::string_view rest = row.substr(zero + 1);
  if (kind == 'u') {
    // Keys never hold 0x00, so the last one separates the upload id.
    const std::size_t split = rest.rfind('\0');
    if (split == std::string_view::npos || split + 1 == rest.size()) {
      return std::nullopt;
    }
    out.key = std::string(rest.substr(0, split));
    out.upload_id = std::string(rest.substr(split + 1));
  } else {
    out.key = std::string(rest);
  }
  return out;
}

std::string ReseedRowKey(std::string_view bucket) {
  std::string out(kReseedRowPrefix);
  out.append(bucket);
  return out;
}

}  // namespace strata::metadata
