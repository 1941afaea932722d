#include "gateway/usage_merge.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/text.h"

namespace strata::gateway {
namespace {

Error Malformed(const std::string& what) {
  return Error(ErrorCode::kCorruption, "a member's usage report: " + what);
}

bool IsS3Tier(const Config& config, const std::string& name) {
  for (const auto& tier : config.tiers) {
    if (tier.name == name) {
      return tier.kind == TierKind::kS3;
    }
  }
  return false;
}

std::int64_t Shared(std::int64_t sum, int copies) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(sum) / copies));
}

}  // namespace

Result<std::vector<metadata::UsageRow>> ParseUsageRows(std::string_view json) {
  const auto doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Malformed("not a JSON object");
  }
  const auto buckets = doc.find("buckets");
  if (buckets == doc.end() || !buckets->is_array()) {
    return Malformed("no \"buckets\" array");
  }
  if (buckets->size() > kMaxUsageRows) {
    return Malformed("too many rows");
  }
  std::vector<metadata::UsageRow> rows;
  rows.reserve(buckets->size());
  for (const auto& line : *buckets) {
    if (!line.is_object()) {
      return Malformed("a row that is no object");
    }
    const auto bucket = line.find("bucket");
    const auto tier = line.find("tier");
    const auto objects = line.find("objects");
    const auto bytes = line.find("bytes");
    if (bucket == line.end() || !bucket->is_string() || tier == line.end() || !tier->is_string() ||
        objects == line.end() || !objects->is_number_integer() || bytes == line.end() ||
        !bytes->is_number_integer()) {
      return Malformed("a row without bucket, tier, objects and bytes");
    }
    metadata::UsageRow row{BucketName(bucket->get<std::string>()), tier->get<std::string>(),
                           objects->get<std::int64_t>(), bytes->get<std::int64_t>()};
    if (row.objects < 0 || row.bytes < 0) {
      return Malformed("a negative count");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void CountStored(const Config& config, MemberUsage& member) {
  member.objects = 0;
  member.bytes = 0;
  for (const auto& row : member.rows) {
    if (!IsS3Tier(config, row.tier)) {
      member.objects += row.objects;
      member.bytes += row.bytes;
    }
  }
}

std::vector<metadata::UsageRow> AddMemberRows(const Config& config,
                                              const std::vector<MemberUsage>& members, int copies) {
  std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>> sums;
  for (const auto& member : members) {
    for (const auto& row : member.rows) {
      auto& [objects, bytes] = sums[{row.bucket.str(), row.tier}];
      objects += row.objects;
      bytes += row.bytes;
    }
  }
  std::vector<metadata::UsageRow> rows;
  rows.reserve(sums.size());
  for (const auto& [line, counts] : sums) {
    auto [objects, bytes] = counts;
    if (copies > 1 && IsS3Tier(config, line.second)) {
      objects = Shared(objects, copies);
      bytes = Shared(bytes, copies);
    }
    rows.push_back({BucketName(line.first), line.second, objects, bytes});
  }
  return rows;
}

std::string MembersJson(const std::vector<MemberUsage>& members, int copies) {
  std::string json = "{\"members\":[";
  bool complete = true;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberUsage& m = members[i];
    complete = complete && m.answered;
    json +=
        std::string(i == 0 ? "" : ",") + "{\"node\":\"" + JsonEscape(m.node) + "\",\"zone\":\"" +
        JsonEscape(m.zone) + "\",\"answered\":" + (m.answered ? "true" : "false") +
        ",\"objects\":" + std::to_string(m.objects) + ",\"bytes\":" + std::to_string(m.bytes) + "}";
  }
  json += "],\"copies\":" + std::to_string(copies) +
          ",\"complete\":" + (complete ? "true" : "false") + "}";
  return json;
}

}  // namespace strata::gateway
