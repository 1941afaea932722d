#include "common/http_time.h"

#include <chrono>
#include <cstring>
#include <ctime>

namespace strata {

// Calendar arithmetic rather than gmtime_r and strftime: every response carries two of
// these dates, and glibc's gmtime_r takes a process-wide lock.
std::string FormatHttpDate(std::int64_t unix_ms) {
  using namespace std::chrono;
  static constexpr std::string_view kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const sys_seconds at{seconds{unix_ms / 1000 - (unix_ms % 1000 < 0 ? 1 : 0)}};
  const sys_days day = floor<days>(at);
  const year_month_day date{day};
  const hh_mm_ss<seconds> time{at - day};
  const int y = static_cast<int>(date.year());
  if (y < 0 || y > 9999) {
    return "Thu, 01 Jan 1970 00:00:00 GMT";  // outside RFC 1123's four digits
  }
  char buf[32];
  auto two = [](char* p, unsigned v) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  std::memcpy(buf, kDays[weekday(day).c_encoding()].data(), 3);
  buf[3] = ',';
  buf[4] = ' ';
  two(buf + 5, static_cast<unsigned>(date.day()));
  buf[7] = ' ';
  std::memcpy(buf + 8, kMonths[static_cast<unsigned>(date.month()) - 1].data(), 3);
  buf[11] = ' ';
  two(buf + 12, static_cast<unsigned>(y / 100));
  two(buf + 14, static_cast<unsigned>(y % 100));
  buf[16] = ' ';
  two(buf + 17, static_cast<unsigned>(time.hours().count()));
  buf[19] = ':';
  two(buf + 20, static_cast<unsigned>(time.minutes().count()));
  buf[22] = ':';
  two(buf + 23, static_cast<unsigned>(time.seconds().count()));
  std::memcpy(buf + 25, " GMT", 4);
  return std::string(buf, 29);
}

std::string FormatIso8601(std::int64_t unix_ms) {
  // Floor division: before 1970, -1 ms is 23:59:59.999 of the day before, not ".-01".
  std::int64_t secs = unix_ms / 1000;
  std::int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    secs -= 1;
    millis += 1000;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(millis));
  return out + ms;
}

std::optional<std::int64_t> ParseHttpDate(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;  // the common case: a request without the conditional header
  }
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
