// Range and conditional-request rules of S3 GET/HEAD. Pure logic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/error.h"

namespace strata::gateway {

struct ByteRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;  // inclusive
};

// One "bytes=a-b", "bytes=a-" or "bytes=-n" range as S3 reads it, for an object of `size`
// bytes. nullopt: no usable Range (absent, or a form S3 ignores such as several ranges);
// kInvalidRange: not satisfiable.
Result<std::optional<ByteRange>> ParseRange(std::string_view header, std::uint64_t size);

// True when `condition` (a comma-separated list of quoted ETags, or "*") names `etag`.
bool EtagMatches(std::string_view condition, std::string_view etag);

struct Preconditions {
  std::string_view if_match = {};
  std::string_view if_none_match = {};
  std::string_view if_modified_since = {};
  std::string_view if_unmodified_since = {};
};

// S3's rules: If-Match / If-Unmodified-Since fail with 412, If-None-Match /
// If-Modified-Since with 304; If-Match wins over If-Unmodified-Since and If-None-Match
// over If-Modified-Since. nullopt when the request may proceed.
std::optional<unsigned> EvaluatePreconditions(const Preconditions& conditions,
                                              std::string_view etag, std::int64_t last_modified_ms);

}  // namespace strata::gateway
