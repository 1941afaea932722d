#include "auth/internal/canonical.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <unordered_map>

#include "auth/signer.h"
#include "common/text.h"

namespace strata::auth::internal {

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = AsciiLower(c);
  }
  return out;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) {
      return false;
    }
  }
  return true;
}

std::string_view TrimSpaces(std::string_view s) { return TrimBlanks(s); }

bool UriDecode(std::string_view in, std::string& out) { return PercentDecode(in, out); }

std::string CanonicalUri(std::string_view raw_path) {
  if (raw_path.empty()) {
    return "/";
  }
  std::string decoded;
  if (!UriDecode(raw_path, decoded)) {
    return UriEncode(raw_path, false);
  }
  return UriEncode(decoded, false);
}

std::vector<QueryParam> ParseQuery(std::string_view raw_query) {
  std::vector<QueryParam> out;
  std::size_t pos = 0;
  while (pos <= raw_query.size()) {
    std::size_t amp = raw_query.find('&', pos);
    if (amp == std::string_view::npos) {
      amp = raw_query.size();
    }
    std::string_view part = raw_query.substr(pos, amp - pos);
    pos = amp + 1;
    if (part.empty()) {
      continue;
    }
    QueryParam p;
    std::size_t eq = part.find('=');
    std::string_view name = part.substr(0, eq);
    if (!UriDecode(name, p.name)) {
      p.name.assign(name);
    }
    if (eq != std::string_view::npos) {
      p.has_value = true;
      std::string_view value = part.substr(eq + 1);
      if (!UriDecode(value, p.value)) {
        p.value.assign(value);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

const QueryParam* FindParam(const std::vector<QueryParam>& params, std::string_view name) {
  for (const QueryParam& p : params) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

std::string CanonicalQuery(const std::vector<QueryParam>& params, std::string_view exclude) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const QueryParam& p : params) {
    if (!exclude.empty() && p.name == exclude) {
      continue;
    }
    encoded.emplace_back(UriEncode(p.name, true), UriEncode(p.value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) {
      out.push_back('&');
    }
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

std::string CanonicalHeaderValue(std::string_view value) {
  value = TrimSpaces(value);
  std::string out;
  out.reserve(value.size());
  bool in_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      if (!in_space) {
        out.push_back(' ');
      }
      in_space = true;
    } else {
      out.push_back(c);
      in_space = false;
    }
  }
  return out;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

bool Digits(std::string_view s, int& out) {
  if (s.empty() || s.size() > 9) {
    return false;
  }
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::optional<WallTime> MakeTime(int year, int month, int day, int hour, int minute, int second,
                                 int offset_seconds) {
  if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 ||
      day > DaysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::int64_t secs =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset_seconds;
  // The clock counts nanoseconds in 64 bits: past 2262-04-11 a time cannot be represented
  // (converting it would overflow), so such a date is as unusable as a malformed one.
  constexpr std::int64_t kMaxSecs =
      std::chrono::duration_cast<std::chrono::seconds>(WallTime::duration::max()).count();
  if (secs > kMaxSecs) {
    return std::nullopt;
  }
  return WallTime(std::chrono::seconds(secs));
}

int MonthFromName(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (IEquals(s, kMonths[i])) {
      return static_cast<int>(i) + 1;
    }
  }
  return 0;
}

bool ParseClock(std::string_view s, int& h, int& m, int& sec) {
  if (s.size() != 8 || s[2] != ':' || s[5] != ':') {
    return false;
  }
  return Digits(s.substr(0, 2), h) && Digits(s.substr(3, 2), m) && Digits(s.substr(6, 2), sec);
}

bool ParseZone(std::string_view s, int& offset) {
  offset = 0;
  if (s.empty() || IEquals(s, "GMT") || IEquals(s, "UTC") || IEquals(s, "UT") || s == "Z") {
    return true;
  }
  if (s.size() == 5 && (s[0] == '+' || s[0] == '-')) {
    int hh = 0;
    int mm = 0;
    if (!Digits(s.substr(1, 2), hh) || !Digits(s.substr(3, 2), mm) || mm > 59) {
      return false;
    }
    offset = (hh * 3600 + mm * 60) * (s[0] == '-' ? -1 : 1);
    return true;
  }
  return false;
}

}  // namespace

std::optional<WallTime> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') {
    return std::nullopt;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!Digits(s.substr(0, 4), y) || !Digits(s.substr(4, 2), mo) || !Digits(s.substr(6, 2), d) ||
      !Digits(s.substr(9, 2), h) || !Digits(s.substr(11, 2), mi) || !Digits(s.substr(13, 2), sec)) {
    return std::nullopt;
  }
  return MakeTime(y, mo, d, h, mi, sec, 0);
}

std::string FormatAmzDate(WallTime t) {
  std::time_t tt =
      std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::seconds>(t));
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::optional<WallTime> ParseHttpDate(std::string_view s) {
  std::vector<std::string_view> tok;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\t')) {
      ++i;
    }
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != ',' && s[i] != '\t') {
      ++i;
    }
    if (i > start) {
      tok.push_back(s.substr(start, i - start));
    }
    if (tok.size() > 8) {
      return std::nullopt;
    }
  }
  // Drop a leading weekday name.
  if (!tok.empty() && !tok[0].empty() && ((tok[0][0] | 0x20) >= 'a' && (tok[0][0] | 0x20) <= 'z') &&
      MonthFromName(tok[0]) == 0) {
    tok.erase(tok.begin());
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, off = 0;
  if (tok.size() >= 4 && tok.size() <= 5 && MonthFromName(tok[1]) != 0) {
    // RFC 1123: 06 Nov 1994 08:49:37 GMT
    mo = MonthFromName(tok[1]);
    if (!Digits(tok[0], d) || !Digits(tok[2], y) || tok[2].size() != 4 ||
        !ParseClock(tok[3], h, mi, sec) || !ParseZone(tok.size() == 5 ? tok[4] : "", off)) {
      return std::nullopt;
    }
    return MakeTime(y, mo, d, h, mi, sec, off);
  }
  if (tok.size() >= 2 && tok.size() <= 3 && tok[0].size() == 9 && tok[0][2] == '-' &&
      tok[0][6] == '-') {
    // RFC 850: 06-Nov-94 08:49:37 GMT
    mo = MonthFromName(tok[0].substr(3, 3));
    if (mo == 0 || !Digits(tok[0].substr(0, 2), d) || !Digits(tok[0].substr(7, 2), y) ||
        !ParseClock(tok[1], h, mi, sec) || !ParseZone(tok.size() == 3 ? tok[2] : "", off)) {
      return std::nullopt;
    }
    y += y < 70 ? 2000 : 1900;
    return MakeTime(y, mo, d, h, mi, sec, off);
  }
  if (tok.size() == 4 && MonthFromName(tok[0]) != 0) {
    // asctime: Nov  6 08:49:37 1994
    mo = MonthFromName(tok[0]);
    if (!Digits(tok[1], d) || !ParseClock(tok[2], h, mi, sec) || !Digits(tok[3], y) ||
        tok[3].size() != 4) {
      return std::nullopt;
    }
    return MakeTime(y, mo, d, h, mi, sec, 0);
  }
  return std::nullopt;
}

bool ParseDecimal(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 18) {
    return false;
  }
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::string StringToSignV4(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical_request) {
  std::string out;
  out.reserve(kAlgorithmV4.size() + amz_date.size() + scope.size() + 64 + 3);
  out += kAlgorithmV4;
  out.push_back('\n');
  out += amz_date;
  out.push_back('\n');
  out += scope;
  out.push_back('\n');
  out += HexLower(Sha256Of(canonical_request));
  return out;
}

Digest32 DeriveSigningKey(std::string_view secret, std::string_view date, std::string_view region,
                          std::string_view service) {
  std::string k = "AWS4";
  k += secret;
  Digest32 k_date = HmacSha256(k, date);
  Digest32 k_region = HmacSha256(AsView(k_date), region);
  Digest32 k_service = HmacSha256(AsView(k_region), service);
  return HmacSha256(AsView(k_service), kTerminator);
}

namespace {

struct KeyCache {
  std::unordered_map<std::string, Digest32> entries;
};

KeyCache& ThreadCache() {
  thread_local KeyCache cache;
  return cache;
}

}  // namespace

Digest32 CachedSigningKey(std::string_view secret, std::string_view date, std::string_view region,
                          std::string_view service) {
  // The cache key holds a digest of the secret, not the secret itself.
  Digest32 secret_digest = Sha256Of(secret);
  std::string key;
  key.reserve(32 + date.size() + region.size() + service.size() + 3);
  key.append(AsView(secret_digest));
  key.push_back('\0');
  key += date;
  key.push_back('\0');
  key += region;
  key.push_back('\0');
  key += service;
  KeyCache& cache = ThreadCache();
  auto it = cache.entries.find(key);
  if (it != cache.entries.end()) {
    return it->second;
  }
  Digest32 derived = DeriveSigningKey(secret, date, region, service);
  if (cache.entries.size() >= kSigningKeyCacheCapacity) {
    // Keys are per day: a full cache is mostly yesterday's. Dropping it all is simple and
    // keeps the bound hard; the cost is one re-derivation per active key.
    cache.entries.clear();
  }
  cache.entries.emplace(std::move(key), derived);
  return derived;
}

std::size_t SigningKeyCacheSizeForTest() { return ThreadCache().entries.size(); }

std::string CanonicalRequestV4(std::string_view method, std::string_view canonical_uri,
                               std::string_view canonical_query,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view signed_headers, std::string_view payload_hash) {
  std::string out;
  out.reserve(256);
  out += method;
  out.push_back('\n');
  out += canonical_uri;
  out.push_back('\n');
  out += canonical_query;
  out.push_back('\n');
  for (const auto& [name, value] : headers) {
    out += name;
    out.push_back(':');
    out += value;
    out.push_back('\n');
  }
  out.push_back('\n');
  out += signed_headers;
  out.push_back('\n');
  out += payload_hash;
  return out;
}

}  // namespace strata::auth::internal
