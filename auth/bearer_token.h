// Bearer tokens: the shared secret a Prometheus scraper sends as `Authorization: Bearer
// <token>` (RFC 6750) instead of signing. Pure; thread-safe.
#pragma once

#include <string_view>

namespace strata::auth {

// The token of an Authorization header value "Bearer <token>" (scheme case-insensitive,
// spaces around the token dropped); empty when the value is not of that scheme.
std::string_view BearerToken(std::string_view authorization);

// Whether `presented` equals `expected`, in time that depends on neither's content nor
// length (both are hashed first, then compared in constant time). False when `expected`
// is empty: no token configured accepts none.
bool BearerTokenMatches(std::string_view presented, std::string_view expected);

}  // namespace strata::auth
