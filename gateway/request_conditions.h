// RequestConditions: the values a bucket policy's Condition keys take for one request
// (auth/policy.h's ConditionSource), read from the request head and computed only for
// the keys a policy asks about.
//
// Keys (lower-cased, as the policy evaluator asks for them):
//   aws:sourceip          the client's address (as the gateway the client reached saw it)
//   aws:securetransport   "true" over TLS, else "false"
//   aws:currenttime       ISO 8601, "2026-12-07T10:00:00Z"; aws:epochtime: seconds
//   aws:username, aws:userid, aws:principalarn, aws:principaltype ("User" or "Anonymous")
//                         (none but the type for an anonymous caller)
//   aws:referer, aws:useragent                   the Referer and User-Agent headers
//   s3:prefix, s3:delimiter, s3:max-keys, s3:versionid   the query's parameters
//   s3:x-amz-...          the request header of that name (x-amz-acl,
//                         x-amz-server-side-encryption, x-amz-content-sha256, ...)
//   s3:signatureversion   "AWS4-HMAC-SHA256" or "AWS" (SigV2); s3:authtype "REST-HEADER"
//                         or "REST-QUERY-STRING" (none for an anonymous caller)
//   s3:requestobjecttag/K, s3:requestobjecttagkeys   the x-amz-tagging header's tags
//   s3:existingobjecttag/K  the addressed version's tag K (RequestFacts::existing_tags)
// Any other key has no value.
//
// Lives on the request's stack (with the request it reads); used on its thread only.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "auth/request.h"
#include "auth/verifier.h"
#include "gateway/s3_target.h"
#include "metadata/records.h"

namespace strata::gateway {

// What the conditions are read from: one request's head, its caller and its moment.
struct RequestFacts {
  const S3Target& target;
  const auth::RequestView& view;  // the headers
  const auth::AuthResult& auth;
  std::string_view remote;  // "address:port", as the client was seen
  bool secure = false;      // TLS
  std::int64_t now_ms = 0;  // Unix epoch milliseconds
  // The tags of the version the request addresses, when the caller read them (a policy
  // names s3:ExistingObjectTag/ keys and the version exists); nullptr otherwise.
  const metadata::Tags* existing_tags = nullptr;
};

class RequestConditions final : public auth::ConditionSource {
 public:
  explicit RequestConditions(const RequestFacts& facts) : facts_(facts) {}

  std::optional<std::span<const std::string>> Values(std::string_view key) const override;

 private:
  std::optional<std::span<const std::string>> One(std::string value) const;
  std::optional<std::span<const std::string>> Header(std::string_view name) const;

  const RequestFacts& facts_;
  mutable std::vector<std::string> values_;  // the last answer's
};

// The address part of "address:port" (IPv6 addresses keep their colons).
std::string_view AddressOf(std::string_view remote);

}  // namespace strata::gateway
