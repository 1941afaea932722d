// RequestView: the parts of an incoming request that signatures cover, as plain strings.
// The gateway fills it from its HTTP request; auth never sees an HTTP type. All views
// point into storage the caller keeps alive for the duration of the call.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace strata::auth {

struct RequestView {
  std::string_view method;     // "GET", "PUT", ...
  std::string_view raw_path;   // as on the wire, still percent-encoded: "/bucket/my%20key"
  std::string_view raw_query;  // as on the wire, without '?': "list-type=2&prefix=a%2Fb"
  // The bucket named by the Host header in virtual-hosted-style requests, else empty
  // (SigV2 signs "/bucket/key" even when the bucket came from the host name).
  std::string_view virtual_host_bucket;
  // Header fields as received (names in any case, values untrimmed), in order.
  std::vector<std::pair<std::string_view, std::string_view>> headers;

  // The first value of a header, matched case-insensitively; empty view when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

}  // namespace strata::auth
