// The cluster's part of the admin API (admin users only, routed by HandleAdmin):
//   GET /_strata/admin/cluster[?probe=false] ->
//     {"cluster": true, "name": .., "node": .., "zone": .., "replicas": N, "epoch": N,
//      "may_accept_writes": bool,
//      "members": [{"node", "zone", "peer", "capacity_bytes", "self": bool, "ready": bool,
//                   "draining": bool, "state": "ready"|"joining"|"draining"|"drained",
//                   "reachable": bool, "rtt_ms": x, "epoch": N, "error": ".."}],
//      "membership": {"keepalives", "keepalive_failures", "views", "watch_restarts"},
//      "transport": {"accepted", "refused", "sessions_failed", "calls_served", "connects"},
//      "replication": {"syncs", "sync_failures", "bytes_sent", "replica_writes",
//                      "bytes_received", "refused", "repair_scans", "keys_repaired",
//                      "under_replicated", "keys_pulled", "keys_handed_off",
//                      "keys_dropped", "bytes_moved", "repairing": bool,
//                      "catching_up": bool, "draining": bool}}
//   Each member is pinged over the peer transport (handshake included) unless probe=false;
//   a gateway without [cluster] answers {"cluster": false}.
//   GET /_strata/admin/cluster/owners?bucket=B&key=K ->
//     {"bucket": .., "key": .., "epoch": N, "owners": [{"node", "peer", "self": bool}]}
//   The key's owners by placement over this gateway's view, primary first: what an
//   operator (or a benchmark choosing keys another member owns) asks to explain where a
//   key lives.
//   POST /_strata/admin/cluster/drain?node=N -> 202 {"node": .., "draining": true}
//   Starts draining member N (storage/replication.h): it hands its keys to their next
//   owners in the background, then owns nothing; its state in the status above says
//   "drained" once it may be stopped.
#include <chrono>
#include <cstdio>

#include "gateway/handlers/context.h"
#include "storage/cluster.h"

namespace strata::gateway {
namespace {

// How long a status request waits for the members' pings.
constexpr std::chrono::milliseconds kProbeTimeout{3'000};

std::string Field(std::string_view name, std::uint64_t value) {
  return "\"" + std::string(name) + "\":" + std::to_string(value);
}

const char* MemberState(const storage::MemberInfo& member) {
  if (member.draining) {
    return member.ready ? "draining" : "drained";
  }
  return member.ready ? "ready" : "joining";
}

std::string MemberJson(const storage::MemberInfo& member, const std::string& self,
                       const storage::PeerProbe* probe) {
  std::string json = "{\"node\":\"" + JsonEscape(member.node) + "\",\"zone\":\"" +
                     JsonEscape(member.zone) + "\",\"peer\":\"" + JsonEscape(member.peer) + "\"," +
                     Field("capacity_bytes", member.capacity_bytes) +
                     ",\"self\":" + (member.node == self ? "true" : "false") +
                     ",\"ready\":" + (member.ready ? "true" : "false") +
                     ",\"draining\":" + (member.draining ? "true" : "false") + ",\"state\":\"" +
                     MemberState(member) + "\"";
  if (probe != nullptr) {
    char rtt[32];
    std::snprintf(rtt, sizeof rtt, "%.3f", probe->rtt_ms);
    json += std::string(",\"reachable\":") + (probe->reachable ? "true" : "false") +
            ",\"rtt_ms\":" + rtt + ",\"epoch\":" + std::to_string(probe->epoch) + ",\"error\":\"" +
            JsonEscape(probe->error) + "\"";
  }
  return json + "}";
}

HandlerResult StartDrain(RequestContext& ctx) {
  const auto node = ctx.target.Param("node");
  if (!node || node->empty()) {
    co_return Error(ErrorCode::kInvalidArgument, "drain: give node=");
  }
  if (ctx.services.replication == nullptr) {
    co_return Error(ErrorCode::kInvalidRequest, "drain: this gateway does not replicate");
  }
  STRATA_CO_RETURN_IF_ERROR(co_await ctx.services.replication->DrainMember(std::string(*node)));
  std::string json = "{\"node\":\"" + JsonEscape(*node) + "\",\"draining\":true}";
  co_return co_await SendJson(ctx, 202, std::move(json));
}

HandlerResult SendOwners(RequestContext& ctx, storage::Cluster& cluster) {
  const auto bucket = ctx.target.Param("bucket");
  const auto key = ctx.target.Param("key");
  if (!bucket || !key || bucket->empty() || key->empty()) {
    co_return Error(ErrorCode::kInvalidArgument, "owners: give bucket= and key=");
  }
  const auto owners = cluster.OwnersOf(*bucket, *key);
  std::string json = "{\"bucket\":\"" + JsonEscape(*bucket) + "\",\"key\":\"" + JsonEscape(*key) +
                     "\",\"epoch\":" + std::to_string(owners.empty() ? 0 : owners.front().epoch) +
                     ",\"owners\":[";
  for (std::size_t i = 0; i < owners.size(); ++i) {
    json += std::string(i > 0 ? "," : "") + "{\"node\":\"" + JsonEscape(owners[i].node) +
            "\",\"peer\":\"" + JsonEscape(owners[i].peer) +
            "\",\"self\":" + (owners[i].self ? "true" : "false") + "}";
  }
  json += "]}";
  co_return co_await SendJson(ctx, 200, std::move(json));
}

}  // namespace

HandlerResult HandleClusterAdmin(RequestContext& ctx) {
  storage::Cluster* cluster = ctx.services.cluster;
  if (ctx.request().method() == http::verb::post && ctx.target.raw_path.ends_with("/drain") &&
      cluster != nullptr) {
    co_return co_await StartDrain(ctx);
  }
  if (ctx.request().method() != http::verb::get) {
    co_return Error(ErrorCode::kNotFound, "no such admin API resource");
  }
  if (cluster == nullptr) {
    std::string single = "{\"cluster\":false}";
    co_return co_await SendJson(ctx, 200, std::move(single));
  }
  if (ctx.target.raw_path.ends_with("/owners")) {
    co_return co_await SendOwners(ctx, *cluster);
  }
  const bool probe = ctx.target.Param("probe").value_or("true") != "false";
  std::vector<storage::PeerProbe> probes;
  if (probe) {
    probes = co_await cluster->Probe(kProbeTimeout);
  }
  const storage::ClusterStatus status = cluster->Status();
  std::string json = "{\"cluster\":true,\"name\":\"" + JsonEscape(status.name) + "\",\"node\":\"" +
                     JsonEscape(status.node) + "\",\"zone\":\"" + JsonEscape(status.zone) +
                     "\",\"replicas\":" + std::to_string(status.replicas) +
                     ",\"epoch\":" + std::to_string(status.view->epoch) +
                     ",\"may_accept_writes\":" + (status.may_accept_writes ? "true" : "false") +
                     ",\"members\":[";
  for (std::size_t i = 0; i < status.view->members.size(); ++i) {
    const auto& member = status.view->members[i];
    const storage::PeerProbe* found = nullptr;
    for (const auto& p : probes) {
      if (p.node == member.node) {
        found = &p;
      }
    }
    json += (i > 0 ? "," : "") + MemberJson(member, status.node, found);
  }
  const auto& m = status.membership;
  const auto& t = status.transport;
  json += "],\"membership\":{" + Field("keepalives", m.keepalives) + "," +
          Field("keepalive_failures", m.keepalive_failures) + "," + Field("views", m.views) + "," +
          Field("watch_restarts", m.watch_restarts) + "},\"transport\":{" +
          Field("accepted", t.accepted) + "," + Field("refused", t.refused) + "," +
          Field("sessions_failed", t.sessions_failed) + "," +
          Field("calls_served", t.calls_served) + "," + Field("connects", t.connects) + "}";
  if (ctx.services.replication != nullptr) {
    const auto r = ctx.services.replication->Stats();
    json += ",\"replication\":{" + Field("syncs", r.syncs) + "," +
            Field("sync_failures", r.sync_failures) + "," + Field("bytes_sent", r.bytes_sent) +
            "," + Field("replica_writes", r.replica_writes) + "," +
            Field("bytes_received", r.bytes_received) + "," + Field("refused", r.refused) + "," +
            Field("repair_scans", r.repair_scans) + "," + Field("keys_repaired", r.keys_repaired) +
            "," + Field("under_replicated", r.under_replicated) + "," +
            Field("keys_pulled", r.keys_pulled) + "," +
            Field("keys_handed_off", r.keys_handed_off) + "," +
            Field("keys_dropped", r.keys_dropped) + "," + Field("bytes_moved", r.bytes_moved) +
            ",\"repairing\":" + (r.repairing ? "true" : "false") +
            ",\"catching_up\":" + (r.catching_up ? "true" : "false") +
            ",\"draining\":" + (r.draining ? "true" : "false") + "}";
  }
  json += "}";
  co_return co_await SendJson(ctx, 200, std::move(json));
}

}  // namespace strata::gateway
