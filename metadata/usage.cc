#include "metadata/usage.h"

#include <cstring>

namespace strata::metadata {

void UsageDelta::AddVersion(const BucketName& bucket, const ObjectRecord& version, int sign) {
  if (version.delete_marker) {
    return;
  }
  for (const auto& placement : version.placements) {
    std::int64_t bytes = 0;
    for (const auto& extent : placement.extents) {
      bytes += static_cast<std::int64_t>(extent.size);
    }
    UsageCounts& counts = changes_[{bucket.str(), placement.tier}];
    counts.objects += sign;
    counts.bytes += sign * bytes;
  }
}

void UsageDelta::AddPart(const BucketName& bucket, const PartRecord& part, int sign) {
  changes_[{bucket.str(), part.tier}].bytes += sign * static_cast<std::int64_t>(part.size);
}

std::map<std::pair<std::string, std::string>, UsageCounts> UsageDelta::Changes() const {
  std::map<std::pair<std::string, std::string>, UsageCounts> out;
  for (const auto& [row, counts] : changes_) {
    if (counts != UsageCounts{}) {
      out.emplace(row, counts);
    }
  }
  return out;
}

std::string UsageRowKey(std::string_view bucket, std::string_view tier) {
  std::string row;
  row.reserve(bucket.size() + 1 + tier.size());
  row.append(bucket);
  row.push_back('\0');
  row.append(tier);
  return row;
}

std::optional<ParsedUsageRow> ParseUsageRowKey(std::string_view row) {
  const auto zero = row.find('\0');
  if (zero == std::string_view::npos || zero == 0 || zero + 1 == row.size()) {
    return std::nullopt;
  }
  return ParsedUsageRow{row.substr(0, zero), row.substr(zero + 1)};
}

namespace {

void PutInt64(std::string& out, std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>(u >> (8 * i)));
  }
}

std::int64_t GetInt64(const char* p) {
  std::uint64_t u = 0;
  for (int i = 7; i >= 0; --i) {
    u = (u << 8) | static_cast<unsigned char>(p[i]);
  }
  return static_cast<std::int64_t>(u);
}

}  // namespace

std::string EncodeUsage(const UsageCounts& counts) {
  std::string out;
  out.reserve(16);
  PutInt64(out, counts.objects);
  PutInt64(out, counts.bytes);
  return out;
}

std::optional<UsageCounts> DecodeUsage(std::string_view bytes) {
  if (bytes.size() != 16) {
    return std::nullopt;
  }
  return UsageCounts{GetInt64(bytes.data()), GetInt64(bytes.data() + 8)};
}

}  // namespace strata::metadata
