// ParseConfig: TOML text -> validated Config.
//
// toml++ is built with exceptions; this file is the edge where toml::parse_error becomes
// an Error. Everything after parsing is a walk over the tree that checks each key against
// the contract in DESIGN.md and conf/strata.toml: unknown keys, wrong types and bad values
// are errors whose message names the full key ("server.listen[1]", "tiers[2].kind") and
// where it is ("conf.toml:12:1: ...").
//
// Defaults that are not plain field defaults of config.h:
// - No [[tiers]] at all: one local tier "hot" at <data_dir>/hot, unlimited.
// - [storage_classes] without STANDARD: the tier named "hot" if declared, else the first
//   local tier (an error when there is none). STANDARD_IA defaults to a tier named
//   "warm", GLACIER_IR and GLACIER to a tier named "cold", when such tiers exist, else to
//   the first tier of kind s3 (the upstream), if any.
// - HOT, WARM and COLD always map to the tiers named hot, warm and cold (when declared;
//   COLD else to the upstream); they cannot be remapped.
#include "common/config.h"

#include <arpa/inet.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/text.h"

namespace strata {

std::string_view TierKindName(TierKind kind) {
  switch (kind) {
    case TierKind::kLocal:
      return "local";
    case TierKind::kPeer:
      return "peer";
    case TierKind::kS3:
      return "s3";
  }
  return "unknown";
}
namespace {

// The S3 storage class names a [storage_classes] table may map.
constexpr std::string_view kS3StorageClasses[] = {
    "STANDARD",        "REDUCED_REDUNDANCY", "STANDARD_IA",  "ONEZONE_IA", "INTELLIGENT_TIERING",
    "GLACIER",         "GLACIER_IR",         "DEEP_ARCHIVE", "OUTPOSTS",   "SNOW",
    "EXPRESS_ONEZONE",
};

// Level names spdlog::level::from_str accepts.
constexpr std::string_view kLogLevels[] = {"trace", "debug", "info",     "warn", "warning",
                                           "err",   "error", "critical", "off"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) {
      return false;
    }
  }
  return true;
}

// Parses a run of decimal digits at the start of `s` (consumed). False on no digits or
// overflow of uint64.
bool ConsumeUnsigned(std::string_view& s, std::uint64_t& out, bool& overflow) {
  overflow = false;
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < s.size() && IsDigit(s[i])) {
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      overflow = true;
      return false;
    }
    v = v * 10 + digit;
    ++i;
  }
  if (i == 0) {
    return false;
  }
  s.remove_prefix(i);
  out = v;
  return true;
}

Error Invalid(std::string msg) { return Error(ErrorCode::kInvalidArgument, std::move(msg)); }

// Validates one listen address: "host:port" or "[v6]:port", port 1..65535.
Result<void> CheckListenAddress(std::string_view addr) {
  if (addr.empty()) {
    return Invalid("empty address; expected \"host:port\" or \"[v6]:port\"");
  }
  std::string_view host;
  std::string_view port;
  if (addr.front() == '[') {
    const auto close = addr.find(']');
    if (close == std::string_view::npos || close + 1 >= addr.size() || addr[close + 1] != ':') {
      return Invalid("\"" + std::string(addr) + "\": expected \"[v6]:port\"");
    }
    host = addr.substr(1, close - 1);
    port = addr.substr(close + 2);
    in6_addr a6{};
    if (host.empty() || inet_pton(AF_INET6, std::string(host).c_str(), &a6) != 1) {
      return Invalid("\"" + std::string(addr) + "\": not an IPv6 address in brackets");
    }
  } else {
    const auto colon = addr.rfind(':');
    if (colon == std::string_view::npos) {
      return Invalid("\"" + std::string(addr) + "\": missing port; expected \"host:port\"");
    }
    host = addr.substr(0, colon);
    port = addr.substr(colon + 1);
    if (host.empty()) {
      return Invalid("\"" + std::string(addr) + "\": missing host; use \"0.0.0.0:port\" for all");
    }
    if (host.find(':') != std::string_view::npos) {
      return Invalid("\"" + std::string(addr) + "\": IPv6 addresses need brackets: \"[::1]:port\"");
    }
    for (char c : host) {
      const bool ok = IsDigit(c) || (ToLower(c) >= 'a' && ToLower(c) <= 'z') || c == '.' ||
                      c == '-' || c == '_';
      if (!ok) {
        return Invalid("\"" + std::string(addr) + "\": bad character in host");
      }
    }
  }
  std::uint64_t p = 0;
  bool overflow = false;
  std::string_view rest = port;
  if (!ConsumeUnsigned(rest, p, overflow) || !rest.empty() || p < 1 || p > 65535) {
    return Invalid("\"" + std::string(addr) + "\": port must be a number in 1..65535");
  }
  return Ok();
}

// Walks the parsed TOML tree. Each method reads one table, checking every key.
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view origin) : origin_(origin) {}

  Result<Config> Read(const toml::table& root) {
    Config cfg;
    STRATA_RETURN_IF_ERROR(CheckKeys(root, "",
                                     {"server", "users", "tiers", "storage_classes", "writeback",
                                      "lifecycle", "prefetch", "scrub", "cluster"}));
    if (const toml::node* n = root.get("server")) {
      STRATA_RETURN_IF_ERROR(ReadServer(*n, cfg.server));
    }
    if (const toml::node* n = root.get("users")) {
      STRATA_RETURN_IF_ERROR(ReadUsers(*n, cfg.users));
    }
    if (const toml::node* n = root.get("tiers")) {
      STRATA_RETURN_IF_ERROR(ReadTiers(*n, cfg.tiers));
    } else {
      TierConfig hot;
      hot.name = "hot";
      hot.kind = TierKind::kLocal;
      hot.path = cfg.server.data_dir + "/hot";
      cfg.tiers.push_back(std::move(hot));
    }
    const toml::node* classes = root.get("storage_classes");
    STRATA_RETURN_IF_ERROR(ReadStorageClasses(classes, cfg.tiers, cfg.storage_classes));
    if (const toml::node* n = root.get("writeback")) {
      STRATA_RETURN_IF_ERROR(ReadWriteback(*n, cfg.writeback));
    }
    if (const toml::node* n = root.get("lifecycle")) {
      STRATA_RETURN_IF_ERROR(ReadLifecycle(*n, cfg.lifecycle));
    }
    if (const toml::node* n = root.get("prefetch")) {
      STRATA_RETURN_IF_ERROR(ReadPrefetch(*n, cfg.prefetch));
    }
    if (const toml::node* n = root.get("scrub")) {
      STRATA_RETURN_IF_ERROR(ReadScrub(*n, cfg.scrub));
    }
    if (const toml::node* n = root.get("cluster")) {
      ClusterConfig cluster;
      STRATA_RETURN_IF_ERROR(ReadCluster(*n, cluster));
      cfg.cluster = std::move(cluster);
    }
    return cfg;
  }

 private:
  // "origin:line:col: key: msg" (the position only when the node has one).
  Error Fail(const toml::source_region& where, std::string_view key, std::string_view msg) const {
    std::ostringstream os;
    os << origin_;
    if (where.begin.line > 0) {
      os << ':' << where.begin.line << ':' << where.begin.column;
    }
    os << ": " << key << ": " << msg;
    return Invalid(os.str());
  }
  Error Fail(const toml::node& n, std::string_view key, std::string_view msg) const {
    return Fail(n.source(), key, msg);
  }

  static std::string Join(std::string_view prefix, std::string_view key) {
    if (prefix.empty()) {
      return std::string(key);
    }
    return std::string(prefix) + "." + std::string(key);
  }

  static std::string Indexed(std::string_view prefix, std::size_t i) {
    return std::string(prefix) + "[" + std::to_string(i) + "]";
  }

  Result<void> CheckKeys(const toml::table& t, std::string_view prefix,
                         std::initializer_list<std::string_view> known) const {
    for (const auto& [k, v] : t) {
      if (std::find(known.begin(), known.end(), k.str()) == known.end()) {
        return Fail(k.source(), Join(prefix, k.str()), "unknown key");
      }
    }
    return Ok();
  }

  Result<const toml::table*> AsTable(const toml::node& n, std::string_view key) const {
    const toml::table* t = n.as_table();
    if (t == nullptr) {
      return Fail(n, key, "expected a table");
    }
    return t;
  }

  Result<std::string> GetString(const toml::node& n, std::string_view key) const {
    if (const auto* s = n.as_string()) {
      return s->get();
    }
    return Fail(n, key, "expected a string");
  }

  Result<std::string> GetNonEmptyString(const toml::node& n, std::string_view key) const {
    auto s = GetString(n, key);
    if (s.ok() && s->empty()) {
      return Fail(n, key, "must not be empty");
    }
    return s;
  }

  Result<bool> GetBool(const toml::node& n, std::string_view key) const {
    if (const auto* b = n.as_boolean()) {
      return b->get();
    }
    return Fail(n, key, "expected true or false");
  }

  Result<std::int64_t> GetInt(const toml::node& n, std::string_view key) const {
    if (const auto* i = n.as_integer()) {
      return i->get();
    }
    return Fail(n, key, "expected an integer");
  }

  Result<double> GetNumber(const toml::node& n, std::string_view key) const {
    if (const auto* d = n.as_floating_point()) {
      return d->get();
    }
    if (const auto* i = n.as_integer()) {
      return static_cast<double>(i->get());
    }
    return Fail(n, key, "expected a number");
  }

  // A byte size: an integer (bytes) or a string such as "16KiB".
  Result<std::uint64_t> GetSize(const toml::node& n, std::string_view key) const {
    if (const auto* i = n.as_integer()) {
      if (i->get() < 0) {
        return Fail(n, key, "size must not be negative");
      }
      return static_cast<std::uint64_t>(i->get());
    }
    if (const auto* s = n.as_string()) {
      auto r = ParseByteSize(s->get());
      if (!r.ok()) {
        return Fail(n, key, r.error().message);
      }
      return *r;
    }
    return Fail(n, key, "expected a size such as \"16KiB\" or an integer number of bytes");
  }

  // A duration string such as "5s" or "250ms".
  Result<std::chrono::milliseconds> GetDuration(const toml::node& n, std::string_view key,
                                                bool allow_zero) const {
    const auto* s = n.as_string();
    if (s == nullptr) {
      return Fail(n, key, "expected a duration string such as \"5s\" or \"250ms\"");
    }
    auto r = ParseDuration(s->get());
    if (!r.ok()) {
      return Fail(n, key, r.error().message);
    }
    if (!allow_zero && r->count() == 0) {
      return Fail(n, key, "must be greater than zero");
    }
    return *r;
  }

  Result<void> ReadServer(const toml::node& node, ServerConfig& s) const {
    auto t = AsTable(node, "server");
    STRATA_RETURN_IF_ERROR(t);
    const toml::table& tbl = **t;
    STRATA_RETURN_IF_ERROR(CheckKeys(tbl, "server",
                                     {"listen",
                                      "region",
                                      "data_dir",
                                      "threads",
                                      "tls_cert",
                                      "tls_key",
                                      "domain",
                                      "fsync",
                                      "io_uring",
                                      "max_header_bytes",
                                      "index_cache",
                                      "header_timeout",
                                      "idle_timeout",
                                      "shutdown_grace",
                                      "log_level",
                                      "metrics",
                                      "metrics_public",
                                      "metrics_token",
                                      "body_min_rate_bytes_per_s",
                                      "body_rate_grace",
                                      "max_connections",
                                      "xml_memory",
                                      "default_object_ownership",
                                      "default_public_access_block"}));
    for (const auto& [k, v] : tbl) {
      const std::string key = Join("server", k.str());
      const std::string_view name = k.str();
      if (name == "listen") {
        STRATA_RETURN_IF_ERROR(ReadListen(v, key, s.listen));
      } else if (name == "region") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.region = std::move(*r);
      } else if (name == "data_dir") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.data_dir = std::move(*r);
      } else if (name == "threads") {
        auto r = GetInt(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < 0 || *r > 4096) {
          return Fail(v, key, "must be in 0..4096 (0: one per core)");
        }
        s.threads = static_cast<int>(*r);
      } else if (name == "tls_cert") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.tls_cert = std::move(*r);
      } else if (name == "tls_key") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.tls_key = std::move(*r);
      } else if (name == "domain") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (r->find_first_of("/: ") != std::string::npos) {
          return Fail(v, key, "expected a bare domain such as \"s3.example.com\"");
        }
        s.domain = std::move(*r);
      } else if (name == "fsync") {
        auto r = GetBool(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.fsync = *r;
      } else if (name == "metrics") {
        auto r = GetBool(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.metrics = *r;
      } else if (name == "default_object_ownership") {
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r != "ObjectWriter" && *r != "BucketOwnerPreferred" && *r != "BucketOwnerEnforced") {
          return Fail(v, key,
                      "expected \"ObjectWriter\", \"BucketOwnerPreferred\" or "
                      "\"BucketOwnerEnforced\"");
        }
        s.default_object_ownership = std::move(*r);
      } else if (name == "default_public_access_block") {
        auto r = GetBool(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.default_public_access_block = *r;
      } else if (name == "metrics_public") {
        auto r = GetBool(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.metrics_public = *r;
      } else if (name == "metrics_token") {
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        STRATA_RETURN_IF_ERROR(CheckMetricsToken(v, key, *r));
        s.metrics_token = std::move(*r);
      } else if (name == "io_uring") {
        auto r = GetBool(v, key);
        STRATA_RETURN_IF_ERROR(r);
        s.io_uring = *r;
      } else if (name == "max_header_bytes") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < 1024 || *r > 1024 * 1024) {
          return Fail(v, key, "must be between 1KiB and 1MiB");
        }
        s.max_header_bytes = static_cast<std::size_t>(*r);
      } else if (name == "index_cache") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < (std::uint64_t{1} << 20) || *r > (std::uint64_t{1} << 40)) {
          return Fail(v, key, "must be between 1MiB and 1TiB");
        }
        s.index_cache_bytes = static_cast<std::size_t>(*r);
      } else if (name == "xml_memory") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < (std::uint64_t{1} << 20) || *r > (std::uint64_t{1} << 40)) {
          return Fail(v, key, "must be between 1MiB and 1TiB");
        }
        s.xml_memory_bytes = *r;
      } else if (name == "header_timeout") {
        auto r = GetDuration(v, key, false);
        STRATA_RETURN_IF_ERROR(r);
        s.header_timeout = *r;
      } else if (name == "idle_timeout") {
        auto r = GetDuration(v, key, false);
        STRATA_RETURN_IF_ERROR(r);
        s.idle_timeout = *r;
      } else if (name == "body_min_rate_bytes_per_s") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r > (std::uint64_t{1} << 30)) {
          return Fail(v, key, "must be at most 1GiB (0: no minimum)");
        }
        s.body_min_rate_bytes_per_s = *r;
      } else if (name == "body_rate_grace") {
        auto r = GetDuration(v, key, true);
        STRATA_RETURN_IF_ERROR(r);
        s.body_rate_grace = *r;
      } else if (name == "max_connections") {
        auto r = GetInt(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < 0 || *r > 10'000'000) {
          return Fail(v, key, "must be in 0..10000000 (0: derived from RLIMIT_NOFILE)");
        }
        s.max_connections = static_cast<std::size_t>(*r);
      } else if (name == "shutdown_grace") {
        auto r = GetDuration(v, key, true);
        STRATA_RETURN_IF_ERROR(r);
        s.shutdown_grace = *r;
      } else if (name == "log_level") {
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (std::find(std::begin(kLogLevels), std::end(kLogLevels), *r) == std::end(kLogLevels)) {
          return Fail(v, key,
                      "unknown level \"" + *r +
                          "\"; expected trace, debug, info, warn, error, critical or off");
        }
        s.log_level = std::move(*r);
      }
    }
    if (s.tls_cert.empty() != s.tls_key.empty()) {
      const char* missing = s.tls_cert.empty() ? "server.tls_cert" : "server.tls_key";
      const char* present = s.tls_cert.empty() ? "server.tls_key" : "server.tls_cert";
      return Fail(tbl, missing, std::string("must be set together with ") + present);
    }
    return Ok();
  }

  // A bearer token travels in an HTTP header: RFC 6750's token68 characters only. A short
  // one could be guessed; the message never repeats it (it is a secret).
  Result<void> CheckMetricsToken(const toml::node& v, const std::string& key,
                                 std::string_view token) const {
    constexpr std::size_t kMinTokenLength = 16;
    if (token.size() < kMinTokenLength) {
      return Fail(v, key,
                  "must be at least 16 characters (a random one, e.g. `openssl rand -hex 32`)");
    }
    for (char c : token) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
                      c == '=';
      if (!ok) {
        return Fail(v, key, "may hold only letters, digits and - . _ ~ + / =");
      }
    }
    return Ok();
  }

  Result<void> ReadListen(const toml::node& v, const std::string& key,
                          std::vector<std::string>& out) const {
    std::vector<std::string> addrs;
    if (const auto* s = v.as_string()) {
      auto ok = CheckListenAddress(s->get());
      if (!ok.ok()) {
        return Fail(v, key, ok.error().message);
      }
      addrs.push_back(s->get());
    } else if (const auto* a = v.as_array()) {
      if (a->empty()) {
        return Fail(v, key, "must list at least one address");
      }
      for (std::size_t i = 0; i < a->size(); ++i) {
        const toml::node& e = *a->get(i);
        const std::string ekey = Indexed(key, i);
        const auto* s = e.as_string();
        if (s == nullptr) {
          return Fail(e, ekey, "expected a string \"host:port\"");
        }
        auto ok = CheckListenAddress(s->get());
        if (!ok.ok()) {
          return Fail(e, ekey, ok.error().message);
        }
        if (std::find(addrs.begin(), addrs.end(), s->get()) != addrs.end()) {
          return Fail(e, ekey, "\"" + s->get() + "\" is listed twice");
        }
        addrs.push_back(s->get());
      }
    } else {
      return Fail(v, key, "expected \"host:port\" or a list of them");
    }
    out = std::move(addrs);
    return Ok();
  }

  // An array of tables ([[name]]), or an error naming `key`.
  Result<const toml::array*> AsArrayOfTables(const toml::node& n, std::string_view key) const {
    const toml::array* a = n.as_array();
    if (a == nullptr) {
      return Fail(n, key, "expected an array of tables ([[" + std::string(key) + "]] entries)");
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (!a->get(i)->is_table()) {
        return Fail(*a->get(i), Indexed(key, i), "expected a table");
      }
    }
    return a;
  }

  Result<void> ReadUsers(const toml::node& node, std::vector<UserConfig>& users) const {
    auto arr = AsArrayOfTables(node, "users");
    STRATA_RETURN_IF_ERROR(arr);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < (*arr)->size(); ++i) {
      const toml::table& t = *(*arr)->get(i)->as_table();
      const std::string prefix = Indexed("users", i);
      STRATA_RETURN_IF_ERROR(CheckKeys(t, prefix, {"access_key", "secret_key", "admin"}));
      UserConfig u;
      for (const char* required : {"access_key", "secret_key"}) {
        if (!t.contains(required)) {
          return Fail(t, Join(prefix, required), "missing (required)");
        }
      }
      {
        const toml::node& v = *t.get("access_key");
        auto r = GetNonEmptyString(v, Join(prefix, "access_key"));
        STRATA_RETURN_IF_ERROR(r);
        if (!seen.insert(*r).second) {
          return Fail(v, Join(prefix, "access_key"), "\"" + *r + "\" is used by another user");
        }
        u.access_key = std::move(*r);
      }
      {
        const toml::node& v = *t.get("secret_key");
        // The secret never appears in messages.
        auto r = GetNonEmptyString(v, Join(prefix, "secret_key"));
        STRATA_RETURN_IF_ERROR(r);
        u.secret_key = std::move(*r);
      }
      if (const toml::node* v = t.get("admin")) {
        auto r = GetBool(*v, Join(prefix, "admin"));
        STRATA_RETURN_IF_ERROR(r);
        u.admin = *r;
      }
      users.push_back(std::move(u));
    }
    return Ok();
  }

  Result<void> ReadTiers(const toml::node& node, std::vector<TierConfig>& tiers) const {
    auto arr = AsArrayOfTables(node, "tiers");
    STRATA_RETURN_IF_ERROR(arr);
    if ((*arr)->empty()) {
      return Fail(node, "tiers", "at least one tier is required");
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < (*arr)->size(); ++i) {
      const toml::table& t = *(*arr)->get(i)->as_table();
      const std::string prefix = Indexed("tiers", i);
      STRATA_RETURN_IF_ERROR(
          CheckKeys(t, prefix,
                    {"name", "kind", "path", "capacity", "high_watermark", "low_watermark",
                     "price_per_gb_month", "endpoint", "access_key", "secret_key", "region",
                     "revalidate_after", "ca_file"}));
      TierConfig tier;
      for (const char* required : {"name", "kind"}) {
        if (!t.contains(required)) {
          return Fail(t, Join(prefix, required), "missing (required)");
        }
      }
      {
        const toml::node& v = *t.get("name");
        auto r = GetNonEmptyString(v, Join(prefix, "name"));
        STRATA_RETURN_IF_ERROR(r);
        if (!names.insert(*r).second) {
          return Fail(v, Join(prefix, "name"), "tier \"" + *r + "\" is declared twice");
        }
        tier.name = std::move(*r);
      }
      {
        const toml::node& v = *t.get("kind");
        auto r = GetString(v, Join(prefix, "kind"));
        STRATA_RETURN_IF_ERROR(r);
        bool known = false;
        for (TierKind kind : {TierKind::kLocal, TierKind::kPeer, TierKind::kS3}) {
          if (*r == TierKindName(kind)) {
            tier.kind = kind;
            known = true;
          }
        }
        if (!known) {
          return Fail(v, Join(prefix, "kind"),
                      "unknown kind \"" + *r + "\"; expected local, peer or s3");
        }
      }
      for (const auto& [k, v] : t) {
        const std::string key = Join(prefix, k.str());
        const std::string_view name = k.str();
        const bool s3_only = name == "endpoint" || name == "access_key" || name == "secret_key" ||
                             name == "region" || name == "revalidate_after" || name == "ca_file";
        if (s3_only && tier.kind != TierKind::kS3) {
          return Fail(k.source(), key, "only applies to tiers of kind \"s3\"");
        }
        const bool capacity_key =
            name == "capacity" || name == "high_watermark" || name == "low_watermark";
        if (capacity_key && tier.kind == TierKind::kS3) {
          return Fail(k.source(), key, "only applies to local tiers (the upstream has no limit)");
        }
        if (name == "path" && tier.kind == TierKind::kS3) {
          return Fail(k.source(), key, "does not apply to tiers of kind \"s3\"");
        }
        if (name == "path") {
          auto r = GetNonEmptyString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.path = std::move(*r);
        } else if (name == "capacity") {
          auto r = GetSize(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.capacity = *r;
        } else if (name == "high_watermark" || name == "low_watermark") {
          auto r = GetNumber(v, key);
          STRATA_RETURN_IF_ERROR(r);
          if (!(*r > 0.0) || *r > 1.0) {
            return Fail(v, key, "must be a fraction of the capacity in (0, 1]");
          }
          (name == "high_watermark" ? tier.high_watermark : tier.low_watermark) = *r;
        } else if (name == "price_per_gb_month") {
          auto r = GetNumber(v, key);
          STRATA_RETURN_IF_ERROR(r);
          if (!(*r >= 0.0) || *r > 1e9) {
            return Fail(v, key, "must be a non-negative number");
          }
          tier.price_per_gb_month = *r;
        } else if (name == "endpoint") {
          auto r = GetNonEmptyString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          if (r->rfind("http://", 0) != 0 && r->rfind("https://", 0) != 0) {
            return Fail(v, key, "expected an http:// or https:// URL");
          }
          tier.endpoint = std::move(*r);
        } else if (name == "access_key") {
          auto r = GetString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.access_key = std::move(*r);
        } else if (name == "secret_key") {
          auto r = GetString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.secret_key = std::move(*r);
        } else if (name == "region") {
          auto r = GetNonEmptyString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.region = std::move(*r);
        } else if (name == "revalidate_after") {
          auto r = GetDuration(v, key, true);
          STRATA_RETURN_IF_ERROR(r);
          tier.revalidate_after = *r;
        } else if (name == "ca_file") {
          auto r = GetNonEmptyString(v, key);
          STRATA_RETURN_IF_ERROR(r);
          tier.ca_file = std::move(*r);
        }
      }
      if (tier.low_watermark >= tier.high_watermark) {
        return Fail(t, Join(prefix, "low_watermark"), "must be below high_watermark");
      }
      if (tier.kind == TierKind::kLocal && tier.path.empty()) {
        return Fail(t, Join(prefix, "path"), "missing (required for kind \"local\")");
      }
      if (tier.kind == TierKind::kS3 && tier.endpoint.empty()) {
        return Fail(t, Join(prefix, "endpoint"), "missing (required for kind \"s3\")");
      }
      if (tier.access_key.empty() != tier.secret_key.empty()) {
        return Fail(t, Join(prefix, tier.access_key.empty() ? "access_key" : "secret_key"),
                    "access_key and secret_key must be set together");
      }
      tiers.push_back(std::move(tier));
    }
    return Ok();
  }

  static const TierConfig* FindTier(const std::vector<TierConfig>& tiers, std::string_view name) {
    for (const auto& t : tiers) {
      if (t.name == name) {
        return &t;
      }
    }
    return nullptr;
  }

  Result<void> ReadStorageClasses(const toml::node* node, const std::vector<TierConfig>& tiers,
                                  std::map<std::string, std::string>& out) const {
    if (node != nullptr) {
      auto t = AsTable(*node, "storage_classes");
      STRATA_RETURN_IF_ERROR(t);
      for (const auto& [k, v] : **t) {
        const std::string key = Join("storage_classes", k.str());
        const std::string_view cls = k.str();
        if (cls == "HOT" || cls == "WARM" || cls == "COLD") {
          return Fail(k.source(), key,
                      "HOT, WARM and COLD always name the tiers hot, warm and cold; they cannot "
                      "be remapped");
        }
        if (std::find(std::begin(kS3StorageClasses), std::end(kS3StorageClasses), cls) ==
            std::end(kS3StorageClasses)) {
          return Fail(k.source(), key, "unknown key (not an S3 storage class)");
        }
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (FindTier(tiers, *r) == nullptr) {
          return Fail(v, key, "names tier \"" + *r + "\", which is not declared in [[tiers]]");
        }
        out[std::string(cls)] = std::move(*r);
      }
    }
    if (out.find("STANDARD") == out.end()) {
      const TierConfig* hot = FindTier(tiers, "hot");
      if (hot == nullptr || hot->kind == TierKind::kS3) {
        hot = nullptr;
        for (const auto& t : tiers) {
          if (t.kind == TierKind::kLocal) {
            hot = &t;
            break;
          }
        }
      }
      if (hot == nullptr) {
        return Fail(node != nullptr ? node->source() : toml::source_region{},
                    "storage_classes.STANDARD",
                    "missing, and there is no local tier to default it to");
      }
      out["STANDARD"] = hot->name;
    }
    const std::pair<const char*, const char*> defaults[] = {
        {"STANDARD_IA", "warm"}, {"GLACIER_IR", "cold"}, {"GLACIER", "cold"},
        {"HOT", "hot"},          {"WARM", "warm"},       {"COLD", "cold"}};
    for (const auto& [cls, tier] : defaults) {
      if (out.find(cls) == out.end() && FindTier(tiers, tier) != nullptr) {
        out[cls] = tier;
      }
    }
    // Without a tier named "cold", the cold classes name the upstream, whatever its name.
    const auto upstream = std::find_if(tiers.begin(), tiers.end(),
                                       [](const TierConfig& t) { return t.kind == TierKind::kS3; });
    for (const char* cls : {"GLACIER_IR", "GLACIER", "COLD"}) {
      if (upstream != tiers.end() && out.find(cls) == out.end()) {
        out[cls] = upstream->name;
      }
    }
    return Ok();
  }

  Result<void> ReadWriteback(const toml::node& node, WritebackConfig& w) const {
    auto t = AsTable(node, "writeback");
    STRATA_RETURN_IF_ERROR(t);
    STRATA_RETURN_IF_ERROR(CheckKeys(**t, "writeback", {"delay", "dirty_limit"}));
    if (const toml::node* v = (*t)->get("delay")) {
      auto r = GetDuration(*v, "writeback.delay", true);
      STRATA_RETURN_IF_ERROR(r);
      w.delay = *r;
    }
    if (const toml::node* v = (*t)->get("dirty_limit")) {
      auto r = GetSize(*v, "writeback.dirty_limit");
      STRATA_RETURN_IF_ERROR(r);
      w.dirty_limit = *r;
    }
    return Ok();
  }

  Result<void> ReadLifecycle(const toml::node& node, LifecycleConfig& l) const {
    auto t = AsTable(node, "lifecycle");
    STRATA_RETURN_IF_ERROR(t);
    STRATA_RETURN_IF_ERROR(CheckKeys(**t, "lifecycle", {"day", "interval"}));
    if (const toml::node* v = (*t)->get("day")) {
      auto r = GetDuration(*v, "lifecycle.day", false);
      STRATA_RETURN_IF_ERROR(r);
      l.day = *r;
    }
    if (const toml::node* v = (*t)->get("interval")) {
      auto r = GetDuration(*v, "lifecycle.interval", false);
      STRATA_RETURN_IF_ERROR(r);
      l.interval = *r;
    }
    return Ok();
  }

  Result<void> ReadPrefetch(const toml::node& node, PrefetchConfig& p) const {
    auto t = AsTable(node, "prefetch");
    STRATA_RETURN_IF_ERROR(t);
    STRATA_RETURN_IF_ERROR(CheckKeys(
        **t, "prefetch", {"learned", "scan_threshold", "scan_window", "budget", "concurrency"}));
    if (const toml::node* v = (*t)->get("learned")) {
      auto r = GetBool(*v, "prefetch.learned");
      STRATA_RETURN_IF_ERROR(r);
      p.learned = *r;
    }
    auto in_range = [this](const toml::node& v, std::string_view key, std::int64_t lo,
                           std::int64_t hi) -> Result<int> {
      auto r = GetInt(v, key);
      STRATA_RETURN_IF_ERROR(r);
      if (*r < lo || *r > hi) {
        return Fail(v, key, "must be from " + std::to_string(lo) + " to " + std::to_string(hi));
      }
      return static_cast<int>(*r);
    };
    if (const toml::node* v = (*t)->get("scan_threshold")) {
      auto r = in_range(*v, "prefetch.scan_threshold", 2, 10'000);
      STRATA_RETURN_IF_ERROR(r);
      p.scan_threshold = *r;
    }
    if (const toml::node* v = (*t)->get("concurrency")) {
      auto r = in_range(*v, "prefetch.concurrency", 1, 256);
      STRATA_RETURN_IF_ERROR(r);
      p.concurrency = *r;
    }
    if (const toml::node* v = (*t)->get("scan_window")) {
      auto r = GetDuration(*v, "prefetch.scan_window", false);
      STRATA_RETURN_IF_ERROR(r);
      p.scan_window = *r;
    }
    if (const toml::node* v = (*t)->get("budget")) {
      auto r = GetSize(*v, "prefetch.budget");
      STRATA_RETURN_IF_ERROR(r);
      p.budget = *r;
    }
    return Ok();
  }

  Result<void> ReadScrub(const toml::node& node, ScrubConfig& c) const {
    auto t = AsTable(node, "scrub");
    STRATA_RETURN_IF_ERROR(t);
    STRATA_RETURN_IF_ERROR(CheckKeys(**t, "scrub", {"bytes_per_second", "interval"}));
    if (const toml::node* v = (*t)->get("bytes_per_second")) {
      auto r = GetSize(*v, "scrub.bytes_per_second");
      STRATA_RETURN_IF_ERROR(r);
      c.bytes_per_second = *r;
    }
    if (const toml::node* v = (*t)->get("interval")) {
      auto r = GetDuration(*v, "scrub.interval", false);
      STRATA_RETURN_IF_ERROR(r);
      c.interval = *r;
    }
    return Ok();
  }

  // A name that becomes part of an etcd key (`/<name>/members/<node>`): no '/' (it would
  // nest under another key), nothing a log line or a shell would mangle.
  Result<void> CheckKeyName(const toml::node& v, std::string_view key,
                            std::string_view name) const {
    constexpr std::size_t kMaxName = 64;
    if (name.size() > kMaxName) {
      return Fail(v, key, "must be at most 64 characters");
    }
    for (char c : name) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '.' ||
                      c == '_' || c == '-';
      if (!ok) {
        return Fail(v, key, "may hold only letters, digits and . _ -");
      }
    }
    return Ok();
  }

  Result<void> ReadCluster(const toml::node& node, ClusterConfig& c) const {
    auto t = AsTable(node, "cluster");
    STRATA_RETURN_IF_ERROR(t);
    const toml::table& tbl = **t;
    STRATA_RETURN_IF_ERROR(
        CheckKeys(tbl, "cluster",
                  {"node", "zone", "peer_listen", "etcd", "replicas", "secret", "lease_ttl", "name",
                   "transport", "move_rate", "read_cache"}));
    for (const char* required : {"node", "peer_listen", "etcd", "secret"}) {
      if (!tbl.contains(required)) {
        return Fail(tbl, Join("cluster", required), "missing (required in [cluster])");
      }
    }
    for (const auto& [k, v] : tbl) {
      const std::string key = Join("cluster", k.str());
      const std::string_view name = k.str();
      if (name == "node" || name == "name") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        STRATA_RETURN_IF_ERROR(CheckKeyName(v, key, *r));
        (name == "node" ? c.node : c.name) = std::move(*r);
      } else if (name == "zone") {
        auto r = GetNonEmptyString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        c.zone = std::move(*r);
      } else if (name == "peer_listen") {
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        auto ok = CheckListenAddress(*r);
        if (!ok.ok()) {
          return Fail(v, key, ok.error().message);
        }
        c.peer_listen = std::move(*r);
      } else if (name == "etcd") {
        STRATA_RETURN_IF_ERROR(ReadEtcdUrls(v, key, c.etcd));
      } else if (name == "replicas") {
        auto r = GetInt(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r < 1 || *r > 16) {
          return Fail(v, key, "must be from 1 to 16");
        }
        c.replicas = static_cast<int>(*r);
      } else if (name == "secret") {
        // The secret never appears in messages.
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (r->size() < 16) {
          return Fail(v, key,
                      "must be at least 16 characters (a random one, e.g. `openssl rand -hex 32`)");
        }
        c.secret = std::move(*r);
      } else if (name == "lease_ttl") {
        auto r = GetDuration(v, key, false);
        STRATA_RETURN_IF_ERROR(r);
        // etcd grants leases in whole seconds and refuses (raises) TTLs below its minimum,
        // 2s with its default heartbeat: a TTL strata did not ask for would break fencing.
        if (*r < std::chrono::seconds(2)) {
          return Fail(v, key, "must be at least 2s");
        }
        if (r->count() % 1000 != 0) {
          return Fail(v, key, "must be a whole number of seconds (etcd's lease unit)");
        }
        c.lease_ttl = *r;
      } else if (name == "move_rate") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r == 0) {
          return Fail(v, key, "must be more than 0 (bytes a second)");
        }
        c.move_rate = *r;
      } else if (name == "read_cache") {
        auto r = GetSize(v, key);
        STRATA_RETURN_IF_ERROR(r);
        c.read_cache = *r;
      } else if (name == "transport") {
        auto r = GetString(v, key);
        STRATA_RETURN_IF_ERROR(r);
        if (*r == "auto") {
          c.transport = ClusterTransport::kAuto;
        } else if (*r == "tcp") {
          c.transport = ClusterTransport::kTcp;
        } else if (*r == "rdma") {
          c.transport = ClusterTransport::kRdma;
        } else {
          return Fail(v, key, "must be \"auto\", \"tcp\" or \"rdma\"");
        }
      }
    }
    return Ok();
  }

  // etcd's client URLs: plain http (etcd's JSON gateway; TLS to etcd is not supported yet).
  Result<void> ReadEtcdUrls(const toml::node& v, const std::string& key,
                            std::vector<std::string>& out) const {
    const auto* a = v.as_array();
    if (a == nullptr) {
      return Fail(v, key, "expected a list of URLs such as [\"http://127.0.0.1:2379\"]");
    }
    if (a->empty()) {
      return Fail(v, key, "must list at least one etcd URL");
    }
    std::vector<std::string> urls;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& e = *a->get(i);
      const std::string ekey = Indexed(key, i);
      const auto* s = e.as_string();
      if (s == nullptr) {
        return Fail(e, ekey, "expected a string \"http://host:port\"");
      }
      std::string_view url = s->get();
      if (url.starts_with("https://")) {
        return Fail(e, ekey, "https is not supported yet; use etcd's http:// client URL");
      }
      if (!url.starts_with("http://")) {
        return Fail(e, ekey, "expected \"http://host:port\"");
      }
      std::string_view hostport = url.substr(7);
      if (hostport.ends_with('/')) {
        hostport.remove_suffix(1);
      }
      auto ok = CheckListenAddress(hostport);
      if (!ok.ok()) {
        return Fail(e, ekey, ok.error().message);
      }
      if (std::find(urls.begin(), urls.end(), s->get()) != urls.end()) {
        return Fail(e, ekey, "\"" + s->get() + "\" is listed twice");
      }
      urls.push_back(s->get());
    }
    out = std::move(urls);
    return Ok();
  }

  std::string origin_;
};

}  // namespace

const TierConfig* Config::UpstreamTier() const {
  for (const auto& t : tiers) {
    if (t.kind == TierKind::kS3) {
      return &t;
    }
  }
  return nullptr;
}

const TierConfig* Config::HotTier() const {
  const auto it = storage_classes.find("STANDARD");
  if (it == storage_classes.end()) {
    return nullptr;
  }
  for (const auto& t : tiers) {
    if (t.name == it->second) {
      return &t;
    }
  }
  return nullptr;
}

const TierConfig* Config::TierOfClass(std::string_view storage_class) const {
  const auto named = [&](std::string_view name) -> const TierConfig* {
    for (const auto& t : tiers) {
      if (t.name == name) {
        return &t;
      }
    }
    return nullptr;
  };
  const auto mapped = storage_classes.find(std::string(storage_class));
  if (mapped != storage_classes.end()) {
    return named(mapped->second);
  }
  if (storage_class == "HOT") {
    const TierConfig* hot = named("hot");
    return hot != nullptr ? hot : HotTier();
  }
  if (storage_class == "WARM") {
    return named("warm");
  }
  if (storage_class == "COLD") {
    const TierConfig* cold = named("cold");
    return cold != nullptr ? cold : UpstreamTier();
  }
  return nullptr;
}

Result<Config> ParseConfig(std::string_view toml_text, std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ':' << e.source().begin.line << ':' << e.source().begin.column << ": "
       << e.description();
    return Error(ErrorCode::kInvalidArgument, os.str());
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, std::string(origin) + ": " + e.what());
  }
  return ConfigReader(origin).Read(root);
}

Result<Config> LoadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Error(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument,
                 path + ": cannot open config file: " + std::strerror(err));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    return Error(ErrorCode::kInvalidArgument, path + ": cannot read config file");
  }
  return ParseConfig(buf.str(), path);
}

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  const std::string_view s = TrimBlanks(text);
  if (s.empty()) {
    return Invalid("empty size; expected e.g. \"20GiB\", \"512MB\" or \"4096\"");
  }
  if (s.front() == '-') {
    return Invalid("size \"" + std::string(text) + "\" must not be negative");
  }
  std::string_view rest = s;
  std::uint64_t n = 0;
  bool overflow = false;
  if (!ConsumeUnsigned(rest, n, overflow)) {
    if (overflow) {
      return Invalid("size \"" + std::string(text) + "\" is too large");
    }
    return Invalid("size \"" + std::string(text) + "\" must start with a whole number");
  }
  const std::string_view unit = TrimBlanks(rest);
  struct Unit {
    std::string_view name;
    std::uint64_t factor;
  };
  constexpr std::uint64_t kKi = 1024;
  constexpr std::uint64_t kK = 1000;
  constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"K", kK},
      {"KB", kK},
      {"KiB", kKi},
      {"M", kK * kK},
      {"MB", kK * kK},
      {"MiB", kKi * kKi},
      {"G", kK * kK * kK},
      {"GB", kK * kK * kK},
      {"GiB", kKi * kKi * kKi},
      {"T", kK * kK * kK * kK},
      {"TB", kK * kK * kK * kK},
      {"TiB", kKi * kKi * kKi * kKi},
      {"P", kK * kK * kK * kK * kK},
      {"PB", kK * kK * kK * kK * kK},
      {"PiB", kKi * kKi * kKi * kKi * kKi},
  };
  for (const auto& u : kUnits) {
    if (EqualsIgnoreCase(unit, u.name)) {
      std::uint64_t out = 0;
      if (__builtin_mul_overflow(n, u.factor, &out)) {
        return Invalid("size \"" + std::string(text) + "\" is too large");
      }
      return out;
    }
  }
  if (!unit.empty() && unit.front() == '.') {
    return Invalid("size \"" + std::string(text) +
                   "\": fractions are not supported; use a smaller unit (\"1536MiB\")");
  }
  return Invalid("size \"" + std::string(text) +
                 "\": unknown unit; expected B, KB, MB, GB, TB, PB (powers of 1000) or KiB, "
                 "MiB, GiB, TiB, PiB (powers of 1024)");
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string_view s = TrimBlanks(text);
  if (s.empty()) {
    return Invalid("empty duration; expected e.g. \"5s\", \"250ms\", \"2m\" or \"1h\"");
  }
  if (s.front() == '-') {
    return Invalid("duration \"" + std::string(text) + "\" must not be negative");
  }
  // One or more <integer><unit> terms: "90s", "1h30m".
  std::uint64_t total_ms = 0;
  while (!s.empty()) {
    std::uint64_t n = 0;
    bool overflow = false;
    if (!ConsumeUnsigned(s, n, overflow)) {
      if (overflow) {
        return Invalid("duration \"" + std::string(text) + "\" is too large");
      }
      return Invalid("duration \"" + std::string(text) + "\": expected a whole number");
    }
    std::size_t ulen = 0;
    while (ulen < s.size() && !IsDigit(s[ulen])) {
      ++ulen;
    }
    const std::string_view unit = s.substr(0, ulen);
    s.remove_prefix(ulen);
    std::uint64_t factor = 0;
    if (unit == "ms") {
      factor = 1;
    } else if (unit == "s") {
      factor = 1000;
    } else if (unit == "m") {
      factor = 60'000;
    } else if (unit == "h") {
      factor = 3'600'000;
    } else if (unit == "d") {
      factor = 86'400'000;
    } else if (unit.empty()) {
      return Invalid("duration \"" + std::string(text) +
                     "\": missing unit; expected ms, s, m, h or d");
    } else {
      return Invalid("duration \"" + std::string(text) + "\": unknown unit \"" + std::string(unit) +
                     "\"; expected ms, s, m, h or d");
    }
    std::uint64_t term = 0;
    if (__builtin_mul_overflow(n, factor, &term) ||
        __builtin_add_overflow(total_ms, term, &total_ms) ||
        total_ms > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return Invalid("duration \"" + std::string(text) + "\" is too large");
    }
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms));
}

}  // namespace strata
