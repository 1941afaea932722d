// GET /_strata/admin/usage (admin users only, routed by HandleAdmin): objects, bytes and
// cost per bucket and tier (gateway/usage_report.h). In a cluster the whole cluster's
// (gateway/usage_merge.h): every other member is asked for its own report as a fan-out,
// one after the other, and the answer adds a "cluster" part naming who answered; a member
// that cannot be reached leaves its copies out ("complete": false) rather than failing
// the report. A fan-out from another member is answered with this gateway's own report.
#include <spdlog/spdlog.h>

#include "common/offload.h"
#include "gateway/forward.h"
#include "gateway/handlers/context.h"
#include "gateway/usage_merge.h"
#include "gateway/usage_report.h"
#include "storage/cluster.h"

namespace strata::gateway {
namespace {

boost::asio::awaitable<MemberUsage> AskMember(RequestContext& ctx,
                                              const storage::MemberInfo& info) {
  MemberUsage member{info.node, info.zone};
  auto answer = co_await FanOut(ctx, info.peer, {});
  if (!answer.ok() || answer->status != 200) {
    spdlog::warn("usage: member {} did not answer: {}", info.node,
                 answer.ok() ? "status " + std::to_string(answer->status) : answer.error().message);
    co_return member;
  }
  auto rows = ParseUsageRows(answer->body);
  if (!rows.ok()) {
    spdlog::warn("usage: member {}: {}", info.node, rows.error().message);
    co_return member;
  }
  member.answered = true;
  member.rows = std::move(rows).value();
  co_return member;
}

}  // namespace

HandlerResult HandleUsageAdmin(RequestContext& ctx) {
  Services& services = ctx.services;
  auto local = co_await Offload(services.blocking_pool, [&] { return services.index.Usage(); });
  if (!local.ok()) {
    co_return std::move(local).error();
  }
  storage::Cluster* cluster = services.cluster;
  if (cluster == nullptr || ctx.exchange.fan_out() || ctx.exchange.forwarded()) {
    co_return co_await SendJson(ctx, 200,
                                UsageReportJson(BuildUsageReport(services.config, *local)));
  }
  const auto view = cluster->View();
  std::vector<MemberUsage> members;
  for (const auto& info : view->members) {
    if (info.node == cluster->node()) {
      MemberUsage self{info.node, info.zone, true};
      self.rows = std::move(local).value();
      members.push_back(std::move(self));
    } else {
      MemberUsage asked = co_await AskMember(ctx, info);
      members.push_back(std::move(asked));
    }
    CountStored(services.config, members.back());
  }
  const int copies = std::max<int>(
      1, std::min<int>(services.config.cluster->replicas, static_cast<int>(members.size())));
  const UsageReport report =
      BuildUsageReport(services.config, AddMemberRows(services.config, members, copies));
  std::string json = UsageReportJson(report);
  // The report is one JSON object: the cluster's part goes in before its closing brace.
  json.insert(json.size() - 1, ",\"cluster\":" + MembersJson(members, copies));
  co_return co_await SendJson(ctx, 200, std::move(json));
}

}  // namespace strata::gateway
