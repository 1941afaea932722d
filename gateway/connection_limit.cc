#include "gateway/connection_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace strata::gateway {

std::size_t DefaultMaxConnections(std::uint64_t nofile) {
  constexpr std::uint64_t kReserved = 64;
  constexpr std::uint64_t kFloor = 16;
  // No limit: as many as a large host's limit would give (systemd's hard limit, 2^19).
  constexpr std::uint64_t kUnlimited = std::uint64_t{1} << 19;
  if (nofile == 0) {
    nofile = kUnlimited;
  }
  const std::uint64_t half = nofile / 2;
  return static_cast<std::size_t>(std::max(kFloor, half > kReserved ? half - kReserved : 0));
}

std::uint64_t OpenFileLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return 0;
  }
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

std::string_view RefusalResponse() {
  static constexpr std::string_view kResponse =
      "HTTP/1.1 503 Slow Down\r\n"
      "Server: strata\r\n"
      "Content-Type: application/xml\r\n"
      "Connection: close\r\n"
      "Content-Length: 126\r\n"
      "\r\n"
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
  return kResponse;
}

}  // namespace strata::gateway
