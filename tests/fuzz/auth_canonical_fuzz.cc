// SigV4 and SigV2's canonicalization (auth/internal/canonical): percent-decoding, the
// canonical URI, query and header value, the x-amz-date and HTTP date formats, decimals.
// The first byte picks the function, the rest is its input (a request's path, query,
// header value or date as a client sent it).
//
// Properties: canonical forms are fixed points (canonicalizing twice changes nothing, so a
// client and strata that canonicalize an already canonical string agree); an accepted
// x-amz-date formats back to itself; an HTTP date both of strata's parsers accept means the
// same instant to both (the weekday is not checked by either); a decimal accepted is the number its
// digits spell.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/internal/canonical.h"
#include "common/http_time.h"
#include "tests/fuzz/fuzz_check.h"

using namespace strata::auth::internal;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0: {
      std::string out;
      if (UriDecode(in, out)) {
        FUZZ_CHECK(out.size() <= in.size(), in);
      }
      std::string uri = CanonicalUri(in);
      FUZZ_CHECK(!uri.empty(), in);
      FUZZ_CHECK(CanonicalUri(uri) == uri, in);
      break;
    }
    case 1: {
      std::string canonical = CanonicalQuery(ParseQuery(in));
      FUZZ_CHECK(CanonicalQuery(ParseQuery(canonical)) == canonical, in);
      std::string without = CanonicalQuery(ParseQuery(in), "X-Amz-Signature");
      FUZZ_CHECK(!without.starts_with("X-Amz-Signature=") &&
                     without.find("&X-Amz-Signature=") == std::string::npos,
                 in);
      break;
    }
    case 2: {
      std::string value = CanonicalHeaderValue(in);
      FUZZ_CHECK(CanonicalHeaderValue(value) == value, in);
      FUZZ_CHECK(value.find("  ") == std::string::npos, in);
      break;
    }
    case 3:
      // A leap second (":60") is accepted as the next minute's first.
      if (auto t = ParseAmzDate(in); t && in.substr(13, 2) != "60") {
        FUZZ_CHECK(FormatAmzDate(*t) == in, in);
      }
      break;
    case 4: {
      auto a = ParseHttpDate(in);
      auto b = strata::ParseHttpDate(in);
      if (a && b) {
        auto secs = std::chrono::duration_cast<std::chrono::seconds>(a->time_since_epoch());
        FUZZ_CHECK(secs.count() == *b, in);
      }
      break;
    }
    case 5: {
      std::int64_t v = -1;
      if (ParseDecimal(in, v)) {
        FUZZ_CHECK(v >= 0, in);
        std::string_view digits = in.substr(std::min(in.find_first_not_of('0'), in.size()));
        FUZZ_CHECK(std::to_string(v) == (digits.empty() ? "0" : digits), in);
      }
      break;
    }
    default: {
      std::string lower = ToLower(in);
      FUZZ_CHECK(IEquals(lower, in), in);
      std::string_view trimmed = TrimSpaces(in);
      FUZZ_CHECK(TrimSpaces(trimmed) == trimmed, in);
      break;
    }
  }
  return 0;
}
