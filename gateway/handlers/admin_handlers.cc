// The admin API that strata-admin talks to, under /_strata/admin/ (no bucket name can
// start with '_', so it never shadows S3). JSON in and out; admin users only.
//   /_strata/admin/users[/<name>[/keys[/<key>]|/admin]] -> users and their access keys
//                                               (user_admin.cc)
//   GET    /_strata/admin/writeback          -> the write-back backlog (writeback_admin.cc)
//   POST   /_strata/admin/flush[?timeout=S]  -> pushes the backlog now, waits until empty
//   POST   /_strata/admin/evict?bucket=B&key=K -> frees a clean version's local copy
//   GET    /_strata/admin/usage              -> objects, bytes and cost per bucket and tier
//                                               (usage_admin.cc; a cluster's in a cluster)
//   /_strata/admin/prefetch[/<id>]            -> bulk prefetch jobs (prefetch_admin.cc)
//   GET|POST /_strata/admin/scrub             -> the scrubber's state, start a pass
//                                               (scrub_admin.cc)
//   GET    /_strata/admin/cluster           -> the members, the epoch, a ping of each
//                                               (cluster_admin.cc)
//   GET    /_strata/admin/cluster/owners?bucket=B&key=K -> the key's owners, primary first
//   POST   /_strata/admin/cluster/drain?node=N -> starts draining member N
#include "gateway/handlers/context.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kUsersPath = "/_strata/admin/users";
constexpr std::string_view kUsagePath = "/_strata/admin/usage";

}  // namespace

HandlerResult HandleAdmin(RequestContext& ctx) {
  if (!ctx.auth.principal.admin) {
    co_return Error(ErrorCode::kAccessDenied, "Access Denied: the admin API needs an admin user");
  }
  std::string_view path = ctx.target.raw_path;
  auto verb = ctx.request().method();
  if (path == kWritebackPath || path == kFlushPath || path == kEvictPath) {
    co_return co_await HandleWritebackAdmin(ctx);
  }
  if (path == kPrefetchPath || path.starts_with(std::string(kPrefetchPath) + "/")) {
    co_return co_await HandlePrefetchAdmin(ctx);
  }
  if (path == kScrubPath) {
    co_return co_await HandleScrubAdmin(ctx);
  }
  if (path == kClusterPath || path == std::string(kClusterPath) + "/owners" ||
      path == std::string(kClusterPath) + "/drain") {
    co_return co_await HandleClusterAdmin(ctx);
  }
  if (path == kUsagePath && verb == http::verb::get) {
    co_return co_await HandleUsageAdmin(ctx);
  }
  if (path == kUsersPath || path.starts_with(std::string(kUsersPath) + "/")) {
    co_return co_await HandleUserAdmin(ctx);
  }
  co_return Error(ErrorCode::kNotFound, "no such admin API resource");
}

}  // namespace strata::gateway
