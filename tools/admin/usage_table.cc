#include "tools/admin/usage_table.h"

// Boost.JSON header-only: Debian ships no compiled libboost_json for 1.81, and this is
// the one file that uses it.
#include <boost/json/src.hpp>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "tools/admin/table.h"

namespace strata::admin {
namespace {

namespace json = boost::json;

std::string Money(double dollars) {
  if (dollars > 0 && dollars < 0.005) {
    return "<$0.01";  // not $0.00: something is stored
  }
  char text[32];
  std::snprintf(text, sizeof text, "$%.2f", dollars);
  return text;
}

std::int64_t Int(const json::object& o, const char* name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr) {
    throw std::invalid_argument(name);
  }
  return v->to_number<std::int64_t>();
}

double Real(const json::object& o, const char* name) {
  const json::value* v = o.if_contains(name);
  if (v == nullptr) {
    throw std::invalid_argument(name);
  }
  return v->to_number<double>();
}

std::string Text(const json::object& o, const char* name) {
  return std::string(o.at(name).as_string());
}

}  // namespace

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

std::optional<std::string> UsageTable(const std::string& text) {
  try {
    const json::object doc = json::parse(text).as_object();
    TextTable buckets({"BUCKET", "TIER", "OBJECTS", "BYTES", "SIZE", "COST/MONTH"}, 2);
    for (const auto& item : doc.at("buckets").as_array()) {
      const json::object& line = item.as_object();
      buckets.Add({Text(line, "bucket"), Text(line, "tier"), std::to_string(Int(line, "objects")),
                   std::to_string(Int(line, "bytes")),
                   HumanBytes(static_cast<double>(Int(line, "bytes"))),
                   Money(Real(line, "cost_per_month"))});
    }
    TextTable tiers(
        {"TIER", "KIND", "OBJECTS", "BYTES", "SIZE", "CAPACITY", "PRICE/GB-MONTH", "COST/MONTH"},
        2);
    for (const auto& item : doc.at("tiers").as_array()) {
      const json::object& tier = item.as_object();
      const std::int64_t capacity = Int(tier, "capacity");
      char price[32];
      std::snprintf(price, sizeof price, "$%.4f", Real(tier, "price_per_gb_month"));
      tiers.Add({Text(tier, "tier"), Text(tier, "kind"), std::to_string(Int(tier, "objects")),
                 std::to_string(Int(tier, "bytes")),
                 HumanBytes(static_cast<double>(Int(tier, "bytes"))),
                 capacity == 0 ? "-" : HumanBytes(static_cast<double>(capacity)), price,
                 Money(Real(tier, "cost_per_month"))});
    }
    std::string out = buckets.Render() + "\n" + tiers.Render() + "\nTOTAL COST/MONTH  " +
                      Money(Real(doc, "cost_per_month")) + "\n";
    // In a cluster: what each member stores (copies), and whether every one answered.
    if (const json::value* cluster = doc.if_contains("cluster")) {
      const json::object& part = cluster->as_object();
      TextTable members({"MEMBER", "ZONE", "ANSWERED", "OBJECTS", "BYTES", "SIZE"}, 2);
      for (const auto& item : part.at("members").as_array()) {
        const json::object& m = item.as_object();
        const bool answered = m.at("answered").as_bool();
        members.Add({Text(m, "node"), Text(m, "zone"), answered ? "yes" : "NO",
                     std::to_string(Int(m, "objects")), std::to_string(Int(m, "bytes")),
                     HumanBytes(static_cast<double>(Int(m, "bytes")))});
      }
      out += "\n" + members.Render() + "\nCluster-wide: local tiers count every copy (" +
             std::to_string(Int(part, "copies")) + " per object), the upstream one.\n";
      if (!part.at("complete").as_bool()) {
        out += "INCOMPLETE: a member did not answer; its copies are left out.\n";
      }
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace strata::admin
