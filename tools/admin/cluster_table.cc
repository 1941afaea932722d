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
    TextTable table({"NODE", "ZONE", "STATE", "PEER", "REACHABLE", "POOL", "RTT"}, 4);
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
      const json::value* state = m.if_contains("state");
      table.Add({node, std::string(m.at("zone").as_string()),
                 state != nullptr ? std::string(state->as_string()) : "ready",
                 std::string(m.at("peer").as_string()), reachable,
                 HumanBytes(m.at("capacity_bytes").to_number<double>()), rtt});
    }
    out += table.Render();
    if (const json::value* r = doc.if_contains("replication")) {
      const json::object& rep = r->as_object();
      auto count = [&rep](const char* name) {
        return std::to_string(rep.at(name).to_number<std::uint64_t>());
      };
      out += "\nthis gateway's moves: " + count("keys_repaired") + " keys repaired, " +
             count("under_replicated") + " under-replicated, " + count("keys_pulled") +
             " pulled, " + count("keys_handed_off") + " handed off, " + count("keys_dropped") +
             " dropped, " + HumanBytes(rep.at("bytes_moved").to_number<double>()) + " moved" +
             (rep.at("catching_up").as_bool() ? "; catching up" : "") +
             (rep.at("draining").as_bool() ? "; draining" : "") +
             (rep.at("repairing").as_bool() ? "; repairing" : "") + "\n";
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> MemberStateOf(const std::string& text, const std::string& node) {
  try {
    const json::object doc = json::parse(text).as_object();
    for (const auto& item : doc.at("members").as_array()) {
      const json::object& m = item.as_object();
      if (m.at("node").as_string() == node) {
        return std::string(m.at("state").as_string());
      }
    }
    return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace strata::admin
