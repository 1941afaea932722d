// The ACL and object lock inputs of a request (gateway/acl_xml.h, gateway/acl.h,
// gateway/object_lock_xml.h): Put*Acl's AccessControlPolicy, the x-amz-grant-* header
// values, PutObjectLockConfiguration's, PutObjectRetention's and PutObjectLegalHold's
// bodies, and the x-amz-object-lock-* headers. The first byte picks the parser (modulo 6),
// the rest is the input.
//
// Properties: a refusal is one of S3's errors for that input, with a message; what is
// accepted keeps S3's bounds (at most 100 grants, users only as the resolver names them; a
// lock period positive) and renders, as the GET answers it, into a document that parses
// back to the same value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/acl.h"
#include "gateway/acl_xml.h"
#include "gateway/identity.h"
#include "gateway/object_lock_xml.h"
#include "tests/fuzz/fuzz_check.h"

using namespace strata;
using namespace strata::gateway;

namespace {

// Two users exist: "alice" and "bob".
std::optional<std::string> Resolve(std::string_view id) {
  for (const char* name : {"alice", "bob"}) {
    if (CanonicalUserId(name) == id) {
      return std::string(name);
    }
  }
  return std::nullopt;
}

bool KnownUsers(const metadata::Acl& acl) {
  for (const auto& grant : acl) {
    const bool user = grant.grantee == metadata::AclGrantee::kUser;
    if (user != (grant.user == "alice" || grant.user == "bob")) {
      return false;
    }
  }
  return true;
}

void AccessControlPolicyCase(std::string_view body) {
  auto policy = ParseAccessControlPolicy(body, Resolve);
  if (!policy.ok()) {
    const ErrorCode code = policy.error().code;
    FUZZ_CHECK(code == ErrorCode::kMalformedAcl || code == ErrorCode::kInvalidArgument ||
                   code == ErrorCode::kUnresolvableGrantByEmailAddress,
               body);
    FUZZ_CHECK(!policy.error().message.empty(), body);
    return;
  }
  FUZZ_CHECK(policy->acl.size() <= kMaxAclGrants && KnownUsers(policy->acl), body);
  auto again = ParseAccessControlPolicy(AccessControlPolicyXml("alice", policy->acl), Resolve);
  FUZZ_CHECK(again.ok() && again->acl == policy->acl, body);
}

void GrantHeaderCase(std::string_view value) {
  const std::vector<std::pair<metadata::AclPermission, std::string_view>> headers = {
      {metadata::AclPermission::kReadAcp, value}};
  auto acl = GrantHeadersAcl(headers, Resolve);
  if (!acl.ok()) {
    FUZZ_CHECK(acl.error().code == ErrorCode::kInvalidArgument ||
                   acl.error().code == ErrorCode::kUnresolvableGrantByEmailAddress,
               value);
    return;
  }
  FUZZ_CHECK(!acl->empty() && KnownUsers(*acl), value);
  for (const auto& grant : *acl) {
    FUZZ_CHECK(grant.permission == metadata::AclPermission::kReadAcp, value);
  }
}

void LockConfigurationCase(std::string_view body) {
  auto config = ParseObjectLockConfiguration(body);
  if (!config.ok()) {
    FUZZ_CHECK(config.error().code == ErrorCode::kMalformedXml ||
                   config.error().code == ErrorCode::kInvalidArgument,
               body);
    return;
  }
  FUZZ_CHECK(config->enabled, body);
  FUZZ_CHECK(
      config->default_mode.empty() == (config->default_days == 0 && config->default_years == 0),
      body);
  FUZZ_CHECK(config->default_days >= 0 && config->default_years >= 0, body);
  auto again = ParseObjectLockConfiguration(ObjectLockConfigurationXml(*config));
  FUZZ_CHECK(again.ok() && *again == *config, body);
}

void RetentionCase(std::string_view body) {
  auto retention = ParseRetention(body);
  if (!retention.ok()) {
    FUZZ_CHECK(retention.error().code == ErrorCode::kMalformedXml ||
                   retention.error().code == ErrorCode::kInvalidArgument,
               body);
    return;
  }
  if (retention->mode.empty()) {
    return;
  }
  auto again = ParseRetention(RetentionXml(*retention));
  FUZZ_CHECK(again.ok() && again->mode == retention->mode, body);
}

void LegalHoldCase(std::string_view body) {
  auto on = ParseLegalHold(body);
  if (!on.ok()) {
    FUZZ_CHECK(on.error().code == ErrorCode::kMalformedXml, body);
    return;
  }
  auto again = ParseLegalHold(LegalHoldXml(*on));
  FUZZ_CHECK(again.ok() && *again == *on, body);
}

void LockHeadersCase(std::string_view input) {
  // mode, date and hold separated by newlines.
  const auto first = input.find('\n');
  const auto second = first == std::string_view::npos ? first : input.find('\n', first + 1);
  if (second == std::string_view::npos) {
    return;
  }
  auto lock = ParseLockHeaders(input.substr(0, first), input.substr(first + 1, second - first - 1),
                               input.substr(second + 1), 1'800'000'000'000);
  if (!lock.ok()) {
    FUZZ_CHECK(lock.error().code == ErrorCode::kInvalidArgument, input);
    return;
  }
  if (lock->retention) {
    FUZZ_CHECK(lock->retention->until_ms > 1'800'000'000'000, input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      AccessControlPolicyCase(input);
      break;
    case 1:
      GrantHeaderCase(input);
      break;
    case 2:
      LockConfigurationCase(input);
      break;
    case 3:
      RetentionCase(input);
      break;
    case 4:
      LegalHoldCase(input);
      break;
    default:
      LockHeadersCase(input);
      break;
  }
  return 0;
}
