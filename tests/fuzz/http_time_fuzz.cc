// HTTP and ISO 8601 dates (common/http_time): If-Modified-Since and friends, the Date of
// SigV2, Last-Modified and XML dates from the upstream, lifecycle rules' Date.
// The first byte picks the parser, the rest is the text.
//
// Properties: what parses formats back to text that parses to the same instant.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/http_time.h"
#include "tests/fuzz/fuzz_check.h"

namespace {
// Years 0001..9999: what both formats can write.
constexpr std::int64_t kMinSecs = -62135596800;
constexpr std::int64_t kMaxSecs = 253402300799;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto secs = strata::ParseHttpDate(in);
    if (secs && *secs >= kMinSecs && *secs <= kMaxSecs) {
      std::string text = strata::FormatHttpDate(*secs * 1000);
      auto again = strata::ParseHttpDate(text);
      FUZZ_CHECK(again && *again == *secs, text);
    }
  } else {
    auto ms = strata::ParseIso8601(in);
    if (ms && *ms / 1000 >= kMinSecs && *ms / 1000 <= kMaxSecs) {
      std::string text = strata::FormatIso8601(*ms);
      auto again = strata::ParseIso8601(text);
      FUZZ_CHECK(again && *again == *ms, text);
    }
  }
  return 0;
}
