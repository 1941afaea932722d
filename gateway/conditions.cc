#include "gateway/conditions.h"

#include <charconv>

#include "common/http_time.h"
#include "common/text.h"

namespace strata::gateway {
namespace {

bool ParseUnsigned(std::string_view s, std::uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<std::optional<ByteRange>> ParseRange(std::string_view header, std::uint64_t size) {
  using Maybe = std::optional<ByteRange>;
  header = TrimBlanks(header);
  if (!header.starts_with("bytes=")) {
    return Maybe();
  }
  std::string_view spec = TrimBlanks(header.substr(6));
  if (spec.find(',') != std::string_view::npos) {
    return Maybe();
  }
  auto dash = spec.find('-');
  if (dash == std::string_view::npos) {
    return Maybe();
  }
  std::string_view a = TrimBlanks(spec.substr(0, dash));
  std::string_view b = TrimBlanks(spec.substr(dash + 1));
  const Error unsatisfiable(ErrorCode::kInvalidRange, "The requested range is not satisfiable");
  std::uint64_t x = 0;
  std::uint64_t y = 0;
  if (a.empty()) {  // the last y bytes
    if (!ParseUnsigned(b, y)) {
      return Maybe();
    }
    if (y == 0 || size == 0) {
      return unsatisfiable;
    }
    return Maybe(ByteRange{y >= size ? 0 : size - y, size - 1});
  }
  if (!ParseUnsigned(a, x)) {
    return Maybe();
  }
  if (b.empty()) {
    y = UINT64_MAX;
  } else if (!ParseUnsigned(b, y) || y < x) {
    return Maybe();
  }
  if (x >= size) {
    return unsatisfiable;
  }
  return Maybe(ByteRange{x, std::min(y, size - 1)});
}

bool EtagMatches(std::string_view condition, std::string_view etag) {
  while (!condition.empty()) {
    auto comma = condition.find(',');
    std::string_view item = TrimBlanks(condition.substr(0, comma));
    condition = comma == std::string_view::npos ? std::string_view() : condition.substr(comma + 1);
    if (item.starts_with("W/")) {
      item.remove_prefix(2);
    }
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
      item = item.substr(1, item.size() - 2);
    }
    if (item == "*" || item == etag) {
      return true;
    }
  }
  return false;
}

std::optional<unsigned> EvaluatePreconditions(const Preconditions& c, std::string_view etag,
                                              std::int64_t last_modified_ms) {
  std::int64_t modified_s = last_modified_ms / 1000;
  if (!c.if_match.empty()) {
    if (!EtagMatches(c.if_match, etag)) {
      return 412;
    }
  } else if (auto since = ParseHttpDate(c.if_unmodified_since)) {
    if (modified_s > *since) {
      return 412;
    }
  }
  if (!c.if_none_match.empty()) {
    if (EtagMatches(c.if_none_match, etag)) {
      return 304;
    }
  } else if (auto since = ParseHttpDate(c.if_modified_since)) {
    if (modified_s <= *since) {
      return 304;
    }
  }
  return std::nullopt;
}

}  // namespace strata::gateway
