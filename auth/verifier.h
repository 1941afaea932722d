// Verifier: authenticates a request from its header alone (before any body byte is read).
//
// Supports AWS Signature Version 4 (Authorization header and presigned query) and
// Version 2 (header "AWS key:sig" and query AWSAccessKeyId/Signature/Expires).
// On success it tells how the body must be verified (AuthResult::payload), which
// MakePayloadDecoder (payload_decoder.h) turns into a streaming decoder.
// Thread-safe; the derived-signing-key cache is per thread, so no lock is shared.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "auth/credential_store.h"
#include "auth/request.h"
#include "common/clock.h"
#include "common/error.h"

namespace strata::auth {

enum class PayloadMode {
  kSignedSha256,              // x-amz-content-sha256 is the hex SHA-256 of the body
  kUnsigned,                  // UNSIGNED-PAYLOAD, SigV2, or presigned URLs
  kStreamingSigned,           // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
  kStreamingSignedTrailer,    // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
  kStreamingUnsignedTrailer,  // STREAMING-UNSIGNED-PAYLOAD-TRAILER
};

// What chunk signatures chain from (SigV4 streaming modes only).
struct ChunkSigningContext {
  std::array<std::uint8_t, 32> signing_key{};
  std::string amz_date;        // "20130524T000000Z"
  std::string scope;           // "20130524/us-east-1/s3/aws4_request"
  std::string seed_signature;  // hex signature of the request header
};

struct AuthResult {
  // A request that carries no signature at all (no Authorization header, no presigned
  // query): S3's anonymous requests, which the bucket's policy and ACLs may allow.
  // `principal` is then empty.
  bool anonymous = false;
  Credential principal;
  int signature_version = 4;
  PayloadMode payload = PayloadMode::kUnsigned;
  std::string expected_sha256;  // lower-case hex, kSignedSha256 only
  ChunkSigningContext chunk;    // streaming modes only
  // x-amz-decoded-content-length for streaming modes (-1 when absent).
  std::int64_t decoded_content_length = -1;
};

struct PostFormSignature;  // auth/post_form_auth.h

struct VerifierOptions {
  std::string region = "us-east-1";
  std::chrono::seconds max_skew{15 * 60};
  std::chrono::seconds max_presign_expiry{7 * 24 * 3600};
};

class Verifier {
 public:
  Verifier(const CredentialStore& store, const Clock& clock, VerifierOptions options);

  // Authenticates `request`. A request without any signature is anonymous (an AuthResult
  // with `anonymous` set), for the caller to authorize. Failures carry S3's codes: an
  // expired presigned URL as kExpiredPresignedRequest, kInvalidAccessKeyId,
  // kSignatureDoesNotMatch, kAuthorizationHeaderMalformed,
  // kAuthorizationQueryParametersError, kRequestTimeTooSkewed, kInvalidArgument.
  Result<AuthResult> Verify(const RequestView& request) const;

  // Authenticates a browser's POST Object form by its policy's signature, with this
  // verifier's users and region: VerifyPostFormSignature (auth/post_form_auth.h).
  Result<AuthResult> VerifyPostForm(const PostFormSignature& form) const;

 private:
  const CredentialStore& store_;
  const Clock& clock_;
  VerifierOptions options_;
};

}  // namespace strata::auth
