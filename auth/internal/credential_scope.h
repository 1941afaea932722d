// Private to auth/: a SigV4 credential ("AKID/20130524/us-east-1/s3/aws4_request") and
// S3's checks of its scope, shared by the header and presigned forms (verifier.cc) and a
// POST form's x-amz-credential (post_form_auth.cc), so the three agree on what they take.
#pragma once

#include <string_view>

#include "common/error.h"

namespace strata::auth::internal {

struct CredentialScope {
  std::string_view access_key;
  std::string_view date;
  std::string_view region;
  std::string_view service;
  std::string_view terminator;
  std::string_view scope;  // date/region/service/terminator
};

// Splits `cred` (views into it). The scope is the last four parts, so an access key that
// itself contains '/' still parses. False when a part is missing or empty.
bool ParseCredential(std::string_view cred, CredentialScope& out);

// Checks the scope against the request's date ("20130524T000000Z": its day must be the
// scope's) and this endpoint's `region`, service s3 and terminator aws4_request. Errors
// carry `code` and S3's message after `prefix` ("The authorization header is malformed; ",
// "Error parsing the X-Amz-Credential parameter; "); a wrong region names the expected
// one in the <Region> detail, which clients read to sign again.
Result<void> CheckScope(const CredentialScope& c, std::string_view amz_date,
                        std::string_view region, ErrorCode code, std::string_view prefix);

}  // namespace strata::auth::internal
