#include "auth/internal/credential_scope.h"

#include <algorithm>
#include <array>
#include <string>

#include "auth/internal/canonical.h"

namespace strata::auth::internal {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool ParseCredential(std::string_view cred, CredentialScope& out) {
  std::array<std::size_t, 4> slash{};
  std::size_t end = cred.size();
  for (int i = 3; i >= 0; --i) {
    std::size_t p = end == 0 ? std::string_view::npos : cred.rfind('/', end - 1);
    if (p == std::string_view::npos) {
      return false;
    }
    slash[static_cast<std::size_t>(i)] = p;
    end = p;
  }
  out.access_key = cred.substr(0, slash[0]);
  out.date = cred.substr(slash[0] + 1, slash[1] - slash[0] - 1);
  out.region = cred.substr(slash[1] + 1, slash[2] - slash[1] - 1);
  out.service = cred.substr(slash[2] + 1, slash[3] - slash[2] - 1);
  out.terminator = cred.substr(slash[3] + 1);
  out.scope = cred.substr(slash[0] + 1);
  return !out.access_key.empty() && !out.date.empty() && !out.region.empty() &&
         !out.service.empty() && !out.terminator.empty();
}

Result<void> CheckScope(const CredentialScope& c, std::string_view amz_date,
                        std::string_view region, ErrorCode code, std::string_view prefix) {
  if (c.date.size() != 8 || !AllDigits(c.date) || amz_date.substr(0, 8) != c.date) {
    return Error(
        code, std::string(prefix) + "Invalid credential date. Date is not the same as X-Amz-Date.");
  }
  if (c.region != region) {
    // S3 names the region it expects in <Region> too: clients that guess a region (s3cmd
    // signs for "US" by default) read it from there and sign again.
    return Error(code, std::string(prefix) + "the region '" + std::string(c.region) +
                           "' is wrong; expecting '" + std::string(region) + "'")
        .WithDetail("Region", std::string(region));
  }
  if (c.service != "s3") {
    return Error(code, std::string(prefix) + "incorrect service \"" + std::string(c.service) +
                           "\". This endpoint belongs to \"s3\".");
  }
  if (c.terminator != kTerminator) {
    return Error(code, std::string(prefix) + "incorrect terminal \"" + std::string(c.terminator) +
                           "\". This endpoint uses \"aws4_request\".");
  }
  return Ok();
}

}  // namespace strata::auth::internal
