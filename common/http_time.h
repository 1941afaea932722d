// Time formats S3 speaks: RFC 1123 for HTTP headers, ISO 8601 for XML bodies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

std::string FormatHttpDate(std::int64_t unix_ms);  // "Sun, 29 Nov 2026 22:39:30 GMT"
std::string FormatIso8601(std::int64_t unix_ms);   // "2026-11-29T22:39:30.000Z"
// Parses RFC 1123 (and RFC 850 / asctime, as HTTP requires); nullopt when unparsable.
std::optional<std::int64_t> ParseHttpDate(std::string_view text);  // unix seconds
// Parses "2026-11-29T22:39:30Z" with an optional fraction ("...30.123Z"), as S3's XML
// has it; unix milliseconds, nullopt when unparsable.
std::optional<std::int64_t> ParseIso8601(std::string_view text);

}  // namespace strata
