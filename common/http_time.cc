#include "common/http_time.h"

#include <ctime>

namespace strata {

std::string FormatHttpDate(std::int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

std::string FormatIso8601(std::int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return out + ms;
}

std::optional<std::int64_t> ParseHttpDate(std::string_view text) {
  std::string s(text);
  static const char* kFormats[] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                   "%a %b %d %H:%M:%S %Y"};
  for (const char* format : kFormats) {
    std::tm tm{};
    const char* end = strptime(s.c_str(), format, &tm);
    if (end != nullptr && *end == '\0') {
      return static_cast<std::int64_t>(timegm(&tm));
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> ParseIso8601(std::string_view text) {
  std::string s(text);
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) {
    return std::nullopt;
  }
  std::int64_t millis = 0;
  if (*end == '.') {
    // Fraction digits: the first three are milliseconds, more are ignored.
    int digits = 0;
    for (++end; *end >= '0' && *end <= '9'; ++end, ++digits) {
      if (digits < 3) {
        millis = millis * 10 + (*end - '0');
      }
    }
    if (digits == 0) {
      return std::nullopt;
    }
    for (; digits < 3; ++digits) {
      millis *= 10;
    }
  }
  if (end[0] != 'Z' || end[1] != '\0') {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(timegm(&tm)) * 1000 + millis;
}

}  // namespace strata
