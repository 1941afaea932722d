#include "auth/bearer_token.h"

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"

namespace strata::auth {

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "Bearer ";
  std::string_view v = internal::TrimSpaces(authorization);
  if (v.size() <= kScheme.size() || !internal::IEquals(v.substr(0, kScheme.size()), kScheme)) {
    return {};
  }
  return internal::TrimSpaces(v.substr(kScheme.size()));
}

bool BearerTokenMatches(std::string_view presented, std::string_view expected) {
  if (expected.empty()) {
    return false;
  }
  // Hashing first makes the comparison independent of the lengths, which a plain
  // constant-time compare would reveal.
  const internal::Digest32 a = internal::Sha256Of(presented);
  const internal::Digest32 b = internal::Sha256Of(expected);
  return internal::ConstantTimeEquals(internal::AsView(a), internal::AsView(b));
}

}  // namespace strata::auth
