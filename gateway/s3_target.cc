#include "gateway/s3_target.h"

#include "common/text.h"
#include "common/utf8.h"

namespace strata::gateway {
namespace {

std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') {
      x = static_cast<char>(x - 'A' + 'a');
    }
    if (y >= 'A' && y <= 'Z') {
      y = static_cast<char>(y - 'A' + 'a');
    }
    if (x != y) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view in, bool plus_is_space) {
  std::string out;
  if (!strata::PercentDecode(in, out, plus_is_space)) {
    return std::nullopt;
  }
  return out;
}

bool S3Target::HasParam(std::string_view name) const { return Param(name).has_value(); }

std::optional<std::string_view> S3Target::Param(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) {
      return std::string_view(v);
    }
  }
  return std::nullopt;
}

Result<S3Target> ParseS3Target(std::string_view target, std::string_view host,
                               std::string_view domain) {
  if (target.empty() || target.front() != '/') {
    return Error(ErrorCode::kInvalidArgument, "request target must be an absolute path");
  }
  S3Target t;
  auto qpos = target.find('?');
  t.raw_path = std::string(target.substr(0, qpos));
  if (qpos != std::string_view::npos) {
    t.raw_query = std::string(target.substr(qpos + 1));
  }

  std::string_view q = t.raw_query;
  while (!q.empty()) {
    auto amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    auto eq = pair.find('=');
    auto name = PercentDecode(pair.substr(0, eq), true);
    auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                              : PercentDecode(pair.substr(eq + 1), true);
    if (!name || !value) {
      return Error(ErrorCode::kInvalidArgument, "malformed percent-encoding in query string");
    }
    t.query.emplace_back(std::move(*name), std::move(*value));
  }

  auto path = PercentDecode(t.raw_path, false);
  if (!path) {
    return Error(ErrorCode::kInvalidArgument, "malformed percent-encoding in path");
  }
  // Keys (and the prefixes, markers and tokens that name them) are UTF-8 in S3. One that
  // is not would be stored and later written into listings and error bodies that no XML
  // parser accepts. S3 refuses such a target with 400 (InvalidURI and this message, by
  // reports of its answers); strata's code for a malformed target is InvalidArgument.
  bool utf8 = IsValidUtf8(*path);
  for (const auto& [name, value] : t.query) {
    utf8 = utf8 && IsValidUtf8(name) && IsValidUtf8(value);
  }
  if (!utf8) {
    return Error(ErrorCode::kInvalidArgument, "Couldn't parse the specified URI.");
  }

  std::string_view hostname = StripPort(host);
  if (!domain.empty() && hostname.size() > domain.size() + 1 &&
      EqualsIgnoreCase(hostname.substr(hostname.size() - domain.size()), domain) &&
      hostname[hostname.size() - domain.size() - 1] == '.') {
    t.virtual_hosted = true;
    t.bucket = std::string(hostname.substr(0, hostname.size() - domain.size() - 1));
    if (t.bucket.find('/') != std::string::npos) {
      // Not a host name (the mutation fuzz test found it): no bucket can be named so.
      return Error(ErrorCode::kInvalidArgument, "malformed Host header");
    }
    t.key = path->substr(1);
    return t;
  }
  std::string_view rest = std::string_view(*path).substr(1);
  auto slash = rest.find('/');
  t.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) {
    t.key = std::string(rest.substr(slash + 1));
  }
  return t;
}

}  // namespace strata::gateway
