// Mutation fuzzing of the TOML configuration parser with fixed seeds under ASan and UBSan:
// any damaged file is either a complete Config or an error that names where it failed.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/config.h"

namespace strata {
namespace {

TEST(ConfigFuzz, DamagedDefaultConfig) {
  const std::string original(EmbeddedDefaultConfig());
  std::mt19937 rng(21);
  static constexpr char kInteresting[] = "[]=\"'#\n.,{}0123456789sGiB-";
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = original;
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      std::size_t at = rng() % text.size();
      char c =
          rng() % 2 ? static_cast<char>(rng()) : kInteresting[rng() % (sizeof kInteresting - 1)];
      if (rng() % 2) {
        text[at] = c;
      } else {
        text.erase(at, 1 + rng() % 8);
      }
    }
    auto config = ParseConfig(text, "fuzz.toml");
    if (config.ok()) {
      ++accepted;
      EXPECT_NE(config->HotTier(), nullptr);
      EXPECT_FALSE(config->server.listen.empty());
    } else {
      EXPECT_FALSE(config.error().message.empty());
    }
  }
  // Most damage lands in comments or is refused; both outcomes must occur.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 3000);
}

}  // namespace
}  // namespace strata
