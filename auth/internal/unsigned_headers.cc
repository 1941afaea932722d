#include "auth/internal/unsigned_headers.h"

#include <algorithm>

#include "auth/internal/canonical.h"

namespace strata::auth::internal {

std::vector<std::string> UnsignedAmzHeaders(
    const std::vector<std::pair<std::string_view, std::string_view>>& headers,
    const std::vector<std::string>& signed_names) {
  constexpr std::string_view kAmzPrefix = "x-amz-";
  std::vector<std::string> out;
  for (const auto& [name, value] : headers) {
    if (name.size() < kAmzPrefix.size() ||
        !IEquals(name.substr(0, kAmzPrefix.size()), kAmzPrefix)) {
      continue;
    }
    std::string lower = ToLower(name);
    if (lower == kExemptUnsignedHeader) {
      continue;
    }
    if (std::find(signed_names.begin(), signed_names.end(), lower) != signed_names.end()) {
      continue;
    }
    if (std::find(out.begin(), out.end(), lower) == out.end()) {
      out.push_back(std::move(lower));
    }
  }
  return out;
}

std::string JoinHeaderNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) {
      out += ", ";
    }
    out += n;
  }
  return out;
}

}  // namespace strata::auth::internal
