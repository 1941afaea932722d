// A hash for unordered maps keyed by std::string that are looked up by std::string_view
// (with std::equal_to<>): the lookup neither allocates nor copies the key.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace strata {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace strata
