// `strata-admin cluster status`: the admin API's cluster view
// (GET /_strata/admin/cluster, gateway/handlers/cluster_admin.cc) as text.
#pragma once

#include <optional>
#include <string>

namespace strata::admin {

// A summary line (cluster, this node, epoch, replicas, whether writes are accepted) and a
// table of the members with their zones, peer addresses, pool shares and pings; "not in a
// cluster" for a gateway without one. nullopt when `json` is not such a document.
std::optional<std::string> ClusterTable(const std::string& json);

// The state ("ready", "joining", "draining", "drained") of member `node` in such a
// document: what `cluster drain --wait` waits for. nullopt when `json` is not such a
// document or has no such member.
std::optional<std::string> MemberStateOf(const std::string& json, const std::string& node);

}  // namespace strata::admin
