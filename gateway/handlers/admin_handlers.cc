// The admin API that strata-admin talks to, under /_strata/admin/ (no bucket name can
// start with '_', so it never shadows S3). JSON in and out; admin users only.
//   GET    /_strata/admin/users              -> [{"access_key":..,"admin":..,"created":..}]
//   PUT    /_strata/admin/users/<key>[?admin=true]  -> {"access_key":..,"secret_key":..}
//   DELETE /_strata/admin/users/<key>
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
#include <openssl/rand.h>

#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/handlers/context.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kUsersPath = "/_strata/admin/users";
constexpr std::string_view kUsagePath = "/_strata/admin/usage";

std::string NewSecret() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char raw[40];
  RAND_bytes(raw, sizeof raw);
  std::string out;
  for (unsigned char b : raw) {
    out += kAlphabet[b % 62];
  }
  return out;
}

bool ValidAccessKey(std::string_view key) {
  if (key.size() < 3 || key.size() > 128) {
    return false;
  }
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace

HandlerResult HandleAdmin(RequestContext& ctx) {
  if (!ctx.auth.principal.admin) {
    co_return Error(ErrorCode::kAccessDenied, "Access Denied: the admin API needs an admin user");
  }
  std::string_view path = ctx.target.raw_path;
  auto verb = ctx.request().method();
  auto& index = ctx.services.index;
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
  if (path == kUsersPath && verb == http::verb::get) {
    STRATA_CO_TRY(auto users, index.ListUsers());
    std::string json = "[";
    for (const auto& u : ctx.services.config.users) {
      if (json.size() > 1) {
        json += ',';
      }
      json += "{\"access_key\":\"" + JsonEscape(u.access_key) +
              "\",\"admin\":" + (u.admin ? "true" : "false") + ",\"source\":\"config\"}";
    }
    for (const auto& u : users) {
      if (json.size() > 1) {
        json += ',';
      }
      json += "{\"access_key\":\"" + JsonEscape(u.access_key) +
              "\",\"admin\":" + (u.admin ? "true" : "false") +
              ",\"source\":\"index\",\"created\":\"" + FormatIso8601(u.created_ms) + "\"}";
    }
    json += "]";
    co_return co_await SendJson(ctx, 200, std::move(json));
  }
  if (path.starts_with(std::string(kUsersPath) + "/")) {
    std::string access_key = ctx.target.key.substr(std::string_view("admin/users/").size());
    if (!ValidAccessKey(access_key)) {
      co_return Error(ErrorCode::kInvalidArgument,
                      "access keys are 3-128 characters of [A-Za-z0-9._-]");
    }
    bool is_bootstrap = false;
    for (const auto& u : ctx.services.config.users) {
      is_bootstrap |= u.access_key == access_key;
    }
    if (verb == http::verb::put) {
      if (is_bootstrap || index.GetUser(access_key).ok()) {
        co_return Error(ErrorCode::kAlreadyExists, "user " + access_key + " already exists");
      }
      metadata::UserRecord user{
          access_key, NewSecret(),
          ctx.target.Param("admin") == std::optional<std::string_view>("true"), ctx.NowMs()};
      if (ctx.services.users != nullptr) {
        // Cluster-wide, once: another gateway may have taken the key a moment ago.
        STRATA_CO_TRY(const bool created, co_await Offload(ctx.services.blocking_pool, [&] {
                        return ctx.services.users->Create(user);
                      }));
        if (!created) {
          co_return Error(ErrorCode::kAlreadyExists, "user " + access_key + " already exists");
        }
      } else {
        STRATA_CO_RETURN_IF_ERROR(
            co_await Offload(ctx.services.blocking_pool, [&] { return index.PutUser(user); }));
      }
      co_return co_await SendJson(ctx, 200,
                                  "{\"access_key\":\"" + JsonEscape(user.access_key) +
                                      "\",\"secret_key\":\"" + user.secret_key +
                                      "\",\"admin\":" + (user.admin ? "true" : "false") + "}");
    }
    if (verb == http::verb::delete_) {
      if (is_bootstrap) {
        co_return Error(ErrorCode::kInvalidRequest,
                        "user " + access_key + " comes from the config file; remove it there");
      }
      STRATA_CO_RETURN_IF_ERROR(co_await Offload(ctx.services.blocking_pool, [&] {
        return ctx.services.users != nullptr ? ctx.services.users->Remove(access_key)
                                             : index.DeleteUser(access_key);
      }));
      co_return co_await SendEmpty(ctx, 204);
    }
  }
  co_return Error(ErrorCode::kNotFound, "no such admin API resource");
}

}  // namespace strata::gateway
