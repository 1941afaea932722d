#include "common/log.h"

#include <string>

namespace strata {

bool SetLogLevel(std::string_view level) {
  std::string name(level);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  // from_str answers `off` for any name it does not know, so `off` must be asked for.
  const spdlog::level::level_enum parsed = spdlog::level::from_str(name);
  if (parsed == spdlog::level::off && name != "off") {
    return false;
  }
  spdlog::set_level(parsed);
  return true;
}

}  // namespace strata
