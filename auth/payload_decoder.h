// PayloadDecoder: verifies a request body while it streams, and strips aws-chunked
// framing. The gateway feeds raw body bytes as they arrive and gets back the object's
// bytes; nothing may be committed until Finish() succeeds.
// Not thread-safe: one decoder per request, used by the request's own thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/verifier.h"
#include "common/error.h"

namespace strata::auth {

class PayloadDecoder {
 public:
  virtual ~PayloadDecoder() = default;

  // Consumes `in` (any split of the raw body) and appends decoded object bytes to `out`.
  // Appends at most in.size() bytes. Errors: kSignatureDoesNotMatch (bad chunk
  // signature), kInvalidChunkSize / kIncompleteBody (broken framing).
  virtual Result<void> Feed(std::string_view in, std::string& out) = 0;

  // Called once the whole raw body was fed. Errors: kXAmzContentSha256Mismatch,
  // kIncompleteBody (missing final chunk or fewer bytes than declared),
  // kSignatureDoesNotMatch (trailer signature).
  virtual Result<void> Finish() = 0;

  // Trailing headers (aws-chunked trailer modes), names lower-cased, after Finish().
  virtual const std::vector<std::pair<std::string, std::string>>& Trailers() const = 0;
};

// The decoder for an authenticated request's body, chosen by auth.payload.
std::unique_ptr<PayloadDecoder> MakePayloadDecoder(const AuthResult& auth);

}  // namespace strata::auth
