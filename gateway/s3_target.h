// S3Target: what an S3 request addresses, parsed from the request target and Host
// header. Pure logic, no I/O; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace strata::gateway {

struct S3Target {
  std::string raw_path;   // as received, percent-encoded
  std::string raw_query;  // as received, without '?'
  std::string bucket;     // decoded; empty for service-level requests
  std::string key;        // decoded; empty for bucket-level requests
  bool virtual_hosted = false;
  // Decoded query parameters in order of appearance; a bare name has an empty value.
  std::vector<std::pair<std::string, std::string>> query;

  bool HasParam(std::string_view name) const;
  // The value of the first parameter `name`, or nullopt.
  std::optional<std::string_view> Param(std::string_view name) const;
};

// Parses `target` ("/bucket/key?x=y"). With a non-empty `domain`, a Host of
// "<bucket>.<domain>[:port]" names the bucket and the whole path is the key.
// Errors: kInvalidArgument for a target that is not an absolute path or has bad
// percent-encoding.
Result<S3Target> ParseS3Target(std::string_view target, std::string_view host,
                               std::string_view domain);

// Percent-decodes `in`; '+' stays '+' (S3 paths), unless plus_is_space (query strings).
std::optional<std::string> PercentDecode(std::string_view in, bool plus_is_space);

}  // namespace strata::gateway
