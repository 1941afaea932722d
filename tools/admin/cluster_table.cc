#include "tools/admin/cluster_table.h"

#include <boost/json.hpp>  // compiled once, in usage_table.cc
#include <cstdio>
#include <exception>

#include "tools/admin/table.h"
#include "tools/admin/usage_table.h"

namespace strata::admin {

namespace json = boost::json;

std::optional<std::string> ClusterTable(const std::string& text) {
  try {
    const json::object doc = json::parse(text).as_object();
    if (!doc.at("cluster").as_bool()) {
      return std::string("not in a cluster (no [cluster] section in its configuration)\n");
    }
    const json::array& members = doc.at("members").as_array();
    std::string out = "cluster " + std::string(doc.at("name").as_string()) + ": " +
                      std::to_string(members.size()) + " members, epoch " +
                      std::to_string(doc.at("epoch").to_number<std::int64_t>()) + ", replicas " +
                      std::to_string(doc.at("replicas").to_number<std::int64_t>()) +
                      "; this gateway " + std::string(doc.at("node").as_string()) + " (zone " +
                      std::string(doc.at("zone").as_string()) + "), writes " +
                      (doc.at("may_accept_writes").as_bool() ? "accepted" : "FENCED") + "\n\n";
    TextTable table({"NODE", "ZONE", "PEER", "REACHABLE", "POOL", "RTT"}, 4);
    for (const auto& item : members) {
      const json::object& m = item.as_object();
      std::string node(m.at("node").as_string());
      if (m.at("self").as_bool()) {
        node += " *";
      }
      std::string reachable = "-";
      std::string rtt = "-";
      if (const json::value* r = m.if_contains("reachable")) {
        reachable = r->as_bool() ? "yes" : "no: " + std::string(m.at("error").as_string());
        if (r->as_bool()) {
          char ms[32];
          std::snprintf(ms, sizeof ms, "%.2f ms", m.at("rtt_ms").to_number<double>());
          rtt = ms;
        }
      }
      table.Add({node, std::string(m.at("zone").as_string()), std::string(m.at("peer").as_string()),
                 reachable, HumanBytes(m.at("capacity_bytes").to_number<double>()), rtt});
    }
    return out + table.Render();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace strata::admin
