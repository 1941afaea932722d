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

}  // namespace strata::admin
