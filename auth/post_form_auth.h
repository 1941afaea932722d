// The signature of a browser's POST Object form: who signed its policy document. Pure
// logic; thread-safe (the signing key comes from the per-thread cache, canonical.h).
//
// A signed form carries the base64 `policy` and either SigV4's fields (x-amz-algorithm
// AWS4-HMAC-SHA256, x-amz-credential AKID/DATE/REGION/s3/aws4_request, x-amz-date,
// x-amz-signature = hex HMAC-SHA256(signing key of DATE/REGION/s3, policy)) or SigV2's
// (AWSAccessKeyId, signature = base64 HMAC-SHA1(secret, policy)). The string signed is the
// policy field exactly as sent. A form with none of these is anonymous, as a request
// without any signature is. The policy's own conditions are checked by post_policy.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/credential_store.h"
#include "auth/verifier.h"
#include "common/error.h"

namespace strata::auth {

// The form's fields that authenticate it, each nullopt when the form lacks it.
struct PostFormSignature {
  std::optional<std::string> policy;
  std::optional<std::string> algorithm;     // x-amz-algorithm
  std::optional<std::string> credential;    // x-amz-credential
  std::optional<std::string> date;          // x-amz-date
  std::optional<std::string> signature_v4;  // x-amz-signature
  std::optional<std::string> access_key;    // AWSAccessKeyId
  std::optional<std::string> signature_v2;  // signature
};

// Who signed the form: an AuthResult naming the signer (payload kUnsigned: the form's
// own file is not covered by the signature), or an anonymous one for an unsigned form.
// Errors, as S3 answers them: kInvalidArgument for a missing or malformed field (a policy
// without a signature, a signature without a policy, an algorithm other than
// AWS4-HMAC-SHA256, an x-amz-date or credential scope that does not parse or does not
// match `region`, s3, aws4_request and the date); kInvalidAccessKeyId for an unknown key;
// kSignatureDoesNotMatch.
Result<AuthResult> VerifyPostFormSignature(const CredentialStore& store, std::string_view region,
                                           const PostFormSignature& form);

}  // namespace strata::auth
