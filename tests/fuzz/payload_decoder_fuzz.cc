// The request body decoder (auth/payload_decoder): aws-chunked framing with chunk
// signatures, unsigned and signed trailers, and the whole-body SHA-256.
//
// Input: a mode byte (PayloadMode, modulo 5), then three lines the decoder's context comes
// from as the verifier would set it: the x-amz-date, the seed signature of the request
// header (the expected SHA-256 in kSignedSha256 mode), the x-amz-decoded-content-length
// (-1: absent); the rest is the body. Signing keys are derived for strata-secret-key in
// us-east-1, which is what capture_seeds.py signs real bodies with.
//
// Properties: however the body is split into reads, the outcome is the same (accepted or
// not, the same bytes, the same trailers); a Feed never emits more bytes than it was given;
// an accepted body has the declared decoded length.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/internal/canonical.h"
#include "auth/payload_decoder.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace strata::auth;

std::string_view Line(std::string_view& in) {
  auto nl = in.find('\n');
  std::string_view line = in.substr(0, nl);
  in.remove_prefix(nl == std::string_view::npos ? in.size() : nl + 1);
  return line;
}

struct Outcome {
  bool ok = false;
  std::string out;
  std::vector<std::pair<std::string, std::string>> trailers;
};

// Feeds `body` in pieces of the given sizes (cycled), then Finish().
Outcome Decode(const AuthResult& auth, std::string_view body, const std::uint8_t* sizes,
               std::size_t n_sizes) {
  Outcome o;
  auto decoder = MakePayloadDecoder(auth);
  std::size_t i = 0;
  while (!body.empty()) {
    std::size_t n = n_sizes == 0 ? body.size() : 1 + sizes[i++ % n_sizes];
    std::string_view piece = body.substr(0, n);
    body.remove_prefix(piece.size());
    std::size_t before = o.out.size();
    if (!decoder->Feed(piece, o.out).ok()) {
      return o;
    }
    FUZZ_CHECK(o.out.size() - before <= piece.size(), piece);
  }
  o.ok = decoder->Finish().ok();
  if (o.ok) {
    o.trailers = decoder->Trailers();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  AuthResult auth;
  auth.payload = static_cast<PayloadMode>(data[0] % 5);
  std::string_view amz_date = Line(in);
  std::string_view seed = Line(in);
  std::string_view length = Line(in);
  std::int64_t decoded_length = -1;
  if (internal::ParseDecimal(length, decoded_length)) {
    auth.decoded_content_length = decoded_length;
  }
  auth.expected_sha256 = std::string(seed);
  auth.chunk.amz_date = std::string(amz_date);
  std::string date(amz_date.substr(0, 8));
  auth.chunk.scope = date + "/us-east-1/s3/aws4_request";
  auth.chunk.seed_signature = std::string(seed);
  auth.chunk.signing_key = internal::CachedSigningKey("strata-secret-key", date, "us-east-1", "s3");

  Outcome whole = Decode(auth, in, nullptr, 0);
  // Split points from the body's own bytes, so every input has its own deterministic split.
  static constexpr std::uint8_t kSmall[] = {0, 1, 2, 6, 15, 40};
  Outcome split = Decode(auth, in, kSmall, sizeof kSmall);
  const std::uint8_t* own = reinterpret_cast<const std::uint8_t*>(in.data());
  Outcome split2 = Decode(auth, in, own, std::min<std::size_t>(in.size(), 7));
  for (const Outcome* other : {&split, &split2}) {
    FUZZ_CHECK(other->ok == whole.ok, in);
    if (whole.ok) {
      FUZZ_CHECK(other->out == whole.out, in);
      FUZZ_CHECK(other->trailers == whole.trailers, in);
    }
  }
  if (whole.ok && auth.payload != PayloadMode::kUnsigned &&
      auth.payload != PayloadMode::kSignedSha256 && auth.decoded_content_length >= 0) {
    FUZZ_CHECK(whole.out.size() == static_cast<std::uint64_t>(auth.decoded_content_length), in);
  }
  return 0;
}
