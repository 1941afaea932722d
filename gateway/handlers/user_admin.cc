// Users and their access keys through the admin API (issue 20): a user is a name its keys
// are recorded under (a user made with `user create NAME` has a first key named NAME), so
// keys can be added and removed (rotation) while the user, the buckets and objects it owns
// and the canonical id derived from its name stay. Each key is a record of its own; in a
// cluster, in etcd (storage/shared_users.h), mirrored on every gateway.
//   GET    /_strata/admin/users                      -> [{"user","access_key","admin",...}]
//   PUT    /_strata/admin/users/<name>[?admin=true]  -> a new user and its first key, <name>
//   DELETE /_strata/admin/users/<name>               -> the user: every key of it
//   PUT    /_strata/admin/users/<name>/keys          -> a new key of the user
//   DELETE /_strata/admin/users/<name>/keys/<key>    -> one key of the user
//   PUT    /_strata/admin/users/<name>/admin?value=true|false -> the user admin or not
// Users of the configuration file are read-only here: each gateway has its own file.
#include <openssl/rand.h>

#include <vector>

#include "common/http_time.h"
#include "common/offload.h"
#include "gateway/handlers/context.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kUsersPrefix = "/_strata/admin/users";

std::string RandomText(std::string_view alphabet, std::size_t length) {
  std::vector<unsigned char> raw(length);
  RAND_bytes(raw.data(), static_cast<int>(raw.size()));
  std::string out;
  for (unsigned char b : raw) {
    out += alphabet[b % alphabet.size()];
  }
  return out;
}

std::string NewSecret() {
  return RandomText("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 40);
}

// A new key's name, as AWS's look: 20 upper-case letters and digits.
std::string NewAccessKey() { return "SK" + RandomText("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 18); }

bool ValidName(std::string_view key) {
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

Error BadName() {
  return Error(ErrorCode::kInvalidArgument,
               "user names and access keys are 3-128 characters of [A-Za-z0-9._-]");
}

bool InConfig(const RequestContext& ctx, std::string_view name) {
  for (const auto& u : ctx.services.config.users) {
    if (u.access_key == name) {
      return true;
    }
  }
  return false;
}

std::string KeyJson(const metadata::UserRecord& key, bool with_secret) {
  std::string json = "{\"user\":\"" + JsonEscape(key.user) + "\",\"access_key\":\"" +
                     JsonEscape(key.access_key) + "\"";
  if (with_secret) {
    json += ",\"secret_key\":\"" + key.secret_key + "\"";
  }
  json += std::string(",\"admin\":") + (key.admin ? "true" : "false");
  return json + "}";
}

// The keys recorded under `name` (the index holds them all, in a cluster too).
boost::asio::awaitable<Result<std::vector<metadata::UserRecord>>> KeysOf(RequestContext& ctx,
                                                                         std::string_view name) {
  auto& index = ctx.services.index;
  STRATA_CO_TRY(auto users, co_await Offload(ctx.services.blocking_pool,
                                             [&index] { return index.ListUsers(); }));
  std::vector<metadata::UserRecord> keys;
  for (auto& user : users) {
    if (user.user == name) {
      keys.push_back(std::move(user));
    }
  }
  co_return keys;
}

boost::asio::awaitable<Result<bool>> CreateKey(RequestContext& ctx,
                                               const metadata::UserRecord& key) {
  auto& index = ctx.services.index;
  if (ctx.services.users != nullptr) {
    // Cluster-wide, once: another gateway may have taken the key a moment ago.
    co_return co_await Offload(ctx.services.blocking_pool,
                               [&] { return ctx.services.users->Create(key); });
  }
  if (index.GetUser(key.access_key).ok()) {
    co_return false;
  }
  STRATA_CO_RETURN_IF_ERROR(
      co_await Offload(ctx.services.blocking_pool, [&] { return index.PutUser(key); }));
  co_return true;
}

boost::asio::awaitable<Result<void>> RemoveKey(RequestContext& ctx, const std::string& key) {
  auto& index = ctx.services.index;
  co_return co_await Offload(ctx.services.blocking_pool, [&] {
    return ctx.services.users != nullptr ? ctx.services.users->Remove(key) : index.DeleteUser(key);
  });
}

HandlerResult ListUsers(RequestContext& ctx) {
  auto& index = ctx.services.index;
  STRATA_CO_TRY(auto users, index.ListUsers());
  std::string json = "[";
  for (const auto& u : ctx.services.config.users) {
    if (json.size() > 1) {
      json += ',';
    }
    json += "{\"user\":\"" + JsonEscape(u.access_key) + "\",\"access_key\":\"" +
            JsonEscape(u.access_key) + "\",\"admin\":" + (u.admin ? "true" : "false") +
            ",\"source\":\"config\"}";
  }
  for (const auto& u : users) {
    if (json.size() > 1) {
      json += ',';
    }
    json += "{\"user\":\"" + JsonEscape(u.user) + "\",\"access_key\":\"" +
            JsonEscape(u.access_key) + "\",\"admin\":" + (u.admin ? "true" : "false") +
            ",\"source\":\"index\",\"created\":\"" + FormatIso8601(u.created_ms) + "\"}";
  }
  json += "]";
  co_return co_await SendJson(ctx, 200, std::move(json));
}

HandlerResult CreateUser(RequestContext& ctx, const std::string& name) {
  STRATA_CO_TRY(auto existing, co_await KeysOf(ctx, name));
  if (InConfig(ctx, name) || !existing.empty()) {
    co_return Error(ErrorCode::kAlreadyExists, "user " + name + " already exists");
  }
  const metadata::UserRecord key{
      name, NewSecret(), ctx.target.Param("admin") == std::optional<std::string_view>("true"),
      ctx.NowMs(), name};
  STRATA_CO_TRY(const bool created, co_await CreateKey(ctx, key));
  if (!created) {  // the name is another user's key
    co_return Error(ErrorCode::kAlreadyExists, "access key " + name + " already exists");
  }
  std::string json = KeyJson(key, true);
  co_return co_await SendJson(ctx, 200, std::move(json));
}

HandlerResult DeleteUser(RequestContext& ctx, const std::string& name) {
  STRATA_CO_TRY(auto keys, co_await KeysOf(ctx, name));
  if (keys.empty()) {
    co_return Error(ErrorCode::kNotFound, "no user " + name);
  }
  for (const auto& key : keys) {
    STRATA_CO_RETURN_IF_ERROR(co_await RemoveKey(ctx, key.access_key));
  }
  co_return co_await SendEmpty(ctx, 204);
}

HandlerResult AddKey(RequestContext& ctx, const std::string& name) {
  STRATA_CO_TRY(auto keys, co_await KeysOf(ctx, name));
  if (keys.empty()) {
    co_return Error(ErrorCode::kNotFound, "no user " + name);
  }
  const metadata::UserRecord key{NewAccessKey(), NewSecret(), keys.front().admin, ctx.NowMs(),
                                 name};
  STRATA_CO_TRY(const bool created, co_await CreateKey(ctx, key));
  if (!created) {
    co_return Error(ErrorCode::kUnavailable, "a new access key collided; try again", true);
  }
  std::string json = KeyJson(key, true);
  co_return co_await SendJson(ctx, 200, std::move(json));
}

HandlerResult RemoveUserKey(RequestContext& ctx, const std::string& name, const std::string& key) {
  STRATA_CO_TRY(auto keys, co_await KeysOf(ctx, name));
  for (const auto& known : keys) {
    if (known.access_key == key) {
      STRATA_CO_RETURN_IF_ERROR(co_await RemoveKey(ctx, key));
      co_return co_await SendEmpty(ctx, 204);
    }
  }
  co_return Error(ErrorCode::kNotFound, "user " + name + " has no access key " + key);
}

HandlerResult SetAdmin(RequestContext& ctx, const std::string& name) {
  const auto value = ctx.target.Param("value");
  if (value != std::optional<std::string_view>("true") &&
      value != std::optional<std::string_view>("false")) {
    co_return Error(ErrorCode::kInvalidArgument, "?value=true or ?value=false");
  }
  STRATA_CO_TRY(auto keys, co_await KeysOf(ctx, name));
  if (keys.empty()) {
    co_return Error(ErrorCode::kNotFound, "no user " + name);
  }
  auto& index = ctx.services.index;
  for (auto& key : keys) {
    key.admin = *value == "true";
    STRATA_CO_RETURN_IF_ERROR(co_await Offload(ctx.services.blocking_pool, [&]() -> Result<void> {
      if (ctx.services.users == nullptr) {
        return index.PutUser(key);
      }
      auto replaced = ctx.services.users->Replace(key);
      if (!replaced.ok()) {
        return std::move(replaced).error();
      }
      return Ok();  // a key removed meanwhile stays removed
    }));
  }
  std::string json =
      "{\"user\":\"" + JsonEscape(name) + "\",\"admin\":" + std::string(*value) + "}";
  co_return co_await SendJson(ctx, 200, std::move(json));
}

}  // namespace

HandlerResult HandleUserAdmin(RequestContext& ctx) {
  const std::string_view path = ctx.target.raw_path;
  const auto verb = ctx.request().method();
  if (path == kUsersPrefix) {
    if (verb != http::verb::get) {
      co_return Error(ErrorCode::kMethodNotAllowed, "GET the user list");
    }
    co_return co_await ListUsers(ctx);
  }
  // <name>[/keys[/<key>] | /admin]
  std::string_view rest = path.substr(kUsersPrefix.size() + 1);
  const auto slash = rest.find('/');
  const std::string name(rest.substr(0, slash));
  const std::string_view tail = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (!ValidName(name)) {
    co_return BadName();
  }
  if (InConfig(ctx, name) && !(tail.empty() && verb == http::verb::put)) {
    co_return Error(ErrorCode::kInvalidRequest,
                    "user " + name + " comes from the config file; change it there");
  }
  if (tail.empty() && verb == http::verb::put) {
    co_return co_await CreateUser(ctx, name);
  }
  if (tail.empty() && verb == http::verb::delete_) {
    co_return co_await DeleteUser(ctx, name);
  }
  if (tail == "/keys" && verb == http::verb::put) {
    co_return co_await AddKey(ctx, name);
  }
  if (tail.starts_with("/keys/") && verb == http::verb::delete_) {
    const std::string key(tail.substr(6));
    if (!ValidName(key)) {
      co_return BadName();
    }
    co_return co_await RemoveUserKey(ctx, name, key);
  }
  if (tail == "/admin" && verb == http::verb::put) {
    co_return co_await SetAdmin(ctx, name);
  }
  co_return Error(ErrorCode::kNotFound, "no such admin API resource");
}

}  // namespace strata::gateway
