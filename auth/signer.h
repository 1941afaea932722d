// Signer: produces SigV4 signatures for outgoing requests (strata-admin, the upstream
// client, tests) and presigned URLs. Pure functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "auth/credential_store.h"
#include "common/clock.h"

namespace strata::auth {

struct SignRequest {
  std::string method;
  std::string raw_path;                                      // percent-encoded as it will be sent
  std::string raw_query;                                     // percent-encoded, without '?'
  std::vector<std::pair<std::string, std::string>> headers;  // must include "host"
  std::string payload_sha256 = "UNSIGNED-PAYLOAD";           // hex digest or a sentinel
};

// Adds x-amz-date, x-amz-content-sha256 and Authorization to `request.headers`.
void SignV4(SignRequest& request, const Credential& cred, const std::string& region,
            const std::string& service, WallTime now);

// Returns the query string (without '?') of a SigV4 presigned URL for `request`.
std::string PresignV4(const SignRequest& request, const Credential& cred, const std::string& region,
                      const std::string& service, WallTime now, std::chrono::seconds expires);

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// S3's URI encoding (RFC 3986 unreserved kept; '/' kept when encode_slash is false).
std::string UriEncode(std::string_view in, bool encode_slash);

}  // namespace strata::auth
