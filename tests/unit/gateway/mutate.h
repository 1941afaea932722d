// Seeded byte-level mutation for the fuzz loops of the gateway's parsers: a few
// replacements, insertions and deletions, biased toward characters parsers split on.
#pragma once

#include <random>
#include <string>

namespace strata::gateway::testing {

inline std::string Mutate(std::string s, std::mt19937& rng) {
  static constexpr char kInteresting[] = "%/?&=+-<>\"'!\r\n 0123456789abcdefFbytesPart";
  int edits = 1 + static_cast<int>(rng() % 4);
  for (; edits > 0; --edits) {
    std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    char c = rng() % 2 ? static_cast<char>(rng()) : kInteresting[rng() % (sizeof kInteresting - 1)];
    switch (rng() % 4) {
      case 0:
        if (at < s.size()) {
          s[at] = c;
          break;
        }
        [[fallthrough]];
      case 1:
        s.insert(s.begin() + static_cast<long>(at), c);
        break;
      case 2:
        // Duplicate a slice: repeats elements and makes nesting mistakes.
        if (!s.empty()) {
          std::size_t from = rng() % s.size();
          std::size_t len = 1 + rng() % 24;
          s.insert(at, s.substr(from, len));
        }
        break;
      default:
        if (at < s.size()) {
          s.erase(at, 1 + rng() % 3);
        }
    }
  }
  return s;
}

}  // namespace strata::gateway::testing
