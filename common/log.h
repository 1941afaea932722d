// Logging: spdlog, set up once at start. Modules log through these helpers so the
// format (one structured line per event) stays the same everywhere.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace strata {

// Sets the global level ("trace".."critical", "off"); false if the name is unknown.
bool SetLogLevel(std::string_view level);

}  // namespace strata
