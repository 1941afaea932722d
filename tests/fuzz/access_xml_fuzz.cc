// The XML bodies of a bucket's access settings (gateway/access_xml.h, gateway/cors.h):
// PutBucketOwnershipControls', PutPublicAccessBlock's and PutBucketCors'. The first byte
// picks the parser (0, 1, 2 modulo 3), the rest is the body.
//
// Properties: a refusal is MalformedXML (CORS: or InvalidRequest) with a message; what is
// accepted keeps S3's bounds (one of S3's ownership modes; 1 to 100 CORS rules, each with
// an origin and a method), and renders (as the GET answers it) into a document that parses
// back to the same setting.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/access_xml.h"
#include "gateway/cors.h"
#include "tests/fuzz/fuzz_check.h"

using namespace strata;
using namespace strata::gateway;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 2) {
    auto cors = ParseCorsConfiguration(body);
    if (!cors.ok()) {
      FUZZ_CHECK(cors.error().code == ErrorCode::kMalformedXml ||
                     cors.error().code == ErrorCode::kInvalidRequest,
                 body);
      FUZZ_CHECK(!cors.error().message.empty(), body);
      return 0;
    }
    FUZZ_CHECK(!cors->rules.empty() && cors->rules.size() <= kMaxCorsRules, body);
    for (const auto& rule : cors->rules) {
      FUZZ_CHECK(!rule.allowed_origins.empty() && !rule.allowed_methods.empty(), body);
    }
    const std::string rendered = CorsConfigurationXml(*cors);
    auto again = ParseCorsConfiguration(rendered);
    FUZZ_CHECK(again.ok() && CorsConfigurationXml(*again) == rendered, body);
  } else if (data[0] % 3 == 0) {
    auto mode = ParseOwnershipControls(body);
    if (!mode.ok()) {
      FUZZ_CHECK(mode.error().code == ErrorCode::kMalformedXml, body);
      FUZZ_CHECK(!mode.error().message.empty(), body);
      return 0;
    }
    FUZZ_CHECK(IsObjectOwnership(*mode), body);
    auto again = ParseOwnershipControls(OwnershipControlsXml(*mode));
    FUZZ_CHECK(again.ok() && *again == *mode, body);
  } else {
    auto block = ParsePublicAccessBlock(body);
    if (!block.ok()) {
      FUZZ_CHECK(block.error().code == ErrorCode::kMalformedXml, body);
      FUZZ_CHECK(!block.error().message.empty(), body);
      return 0;
    }
    auto again = ParsePublicAccessBlock(PublicAccessBlockXml(*block));
    FUZZ_CHECK(again.ok() && *again == *block, body);
  }
  return 0;
}
