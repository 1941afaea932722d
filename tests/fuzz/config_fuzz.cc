// strata's TOML configuration (common/config): the operator's file, the first thing the
// binary reads. Seeds: the shipped conf/strata.toml and the configurations of the docs.
//
// Properties: ParseConfig yields a complete configuration (a hot tier, a listen address,
// watermarks in order) or an error whose message names the source; short inputs also go
// through the byte-size and duration parsers, whose results are never negative and whose
// canonical forms ("<n>B", "<n>ms") parse back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/config.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = strata::ParseConfig(text, "fuzz.toml");
  if (config.ok()) {
    FUZZ_CHECK(config->HotTier() != nullptr, text);
    FUZZ_CHECK(!config->server.listen.empty(), text);
    for (const auto& tier : config->tiers) {
      FUZZ_CHECK(!tier.name.empty(), text);
      FUZZ_CHECK(tier.low_watermark <= tier.high_watermark, text);
    }
  } else {
    FUZZ_CHECK(config.error().message.find("fuzz.toml") != std::string::npos, text);
  }
  if (size <= 32) {
    if (auto bytes = strata::ParseByteSize(text); bytes.ok()) {
      auto again = strata::ParseByteSize(std::to_string(*bytes) + "B");
      FUZZ_CHECK(again.ok() && *again == *bytes, text);
    }
    if (auto ms = strata::ParseDuration(text); ms.ok()) {
      FUZZ_CHECK(ms->count() >= 0, text);
      auto again = strata::ParseDuration(std::to_string(ms->count()) + "ms");
      FUZZ_CHECK(again.ok() && *again == *ms, text);
    }
  }
  return 0;
}
