// A bucket's CORS configuration (PutBucketCors' <CORSConfiguration>), checked as S3 checks
// it, and the rule S3 applies to a browser's request: the first rule whose origin,
// method and (for a preflight) requested headers all match. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata::gateway {

inline constexpr std::size_t kMaxCorsRules = 100;
inline constexpr std::size_t kMaxCorsBody = 64 * 1024;

struct CorsRule {
  std::string id;
  std::vector<std::string> allowed_origins;  // each with at most one '*'
  std::vector<std::string> allowed_methods;  // GET, PUT, POST, DELETE, HEAD
  std::vector<std::string> allowed_headers;  // each with at most one '*'
  std::vector<std::string> expose_headers;
  std::optional<std::int64_t> max_age_seconds;
};

struct CorsConfiguration {
  std::vector<CorsRule> rules;  // 1..kMaxCorsRules
};

// kMalformedXml for a document that is not S3's schema (no rule, a rule without an origin
// or a method, an element twice that may appear once, more than kMaxCorsRules rules, a
// MaxAgeSeconds that is not a non-negative integer); kInvalidRequest, with S3's message,
// for a method S3 does not allow or an origin or header with two wildcards.
Result<CorsConfiguration> ParseCorsConfiguration(std::string_view body);
// GetBucketCors' document.
std::string CorsConfigurationXml(const CorsConfiguration& config);

// What a browser asks: its Origin, the method (a preflight's
// Access-Control-Request-Method), and a preflight's Access-Control-Request-Headers.
struct CorsRequest {
  std::string_view origin;
  std::string_view method;
  std::vector<std::string_view> headers;  // lower-cased or not: compared case-insensitively
};

// The first rule that allows `request`, or nullptr.
const CorsRule* MatchCorsRule(const CorsConfiguration& config, const CorsRequest& request);

// Access-Control-Request-Headers split at commas, trimmed, empty items dropped.
std::vector<std::string_view> SplitHeaderList(std::string_view list);

// The response headers S3 sends for a match, as (name, value) in order: a preflight
// answers Allow-Origin, Allow-Methods, Allow-Headers (the requested ones), Max-Age and
// Allow-Credentials; an actual request Allow-Origin, Allow-Methods, Expose-Headers,
// Max-Age and Allow-Credentials. Allow-Origin is "*" for a rule whose origin is "*", else
// the request's origin (with Allow-Credentials: true).
std::vector<std::pair<std::string, std::string>> CorsResponseHeaders(const CorsRule& rule,
                                                                     const CorsRequest& request,
                                                                     bool preflight);

}  // namespace strata::gateway
