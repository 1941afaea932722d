// A bucket's CORS rules applied to requests (issue 20): the headers a browser's request
// gets when a rule of the bucket allows it, and the parsed configuration behind them,
// cached per thread as bucket policies are (gateway/bucket_access.h).
#pragma once

#include <memory>

#include "gateway/cors.h"
#include "gateway/handlers/context.h"
#include "metadata/records.h"

namespace strata::gateway {

// The parsed CORS configuration of `bucket`, nullptr when it has none (or, written by a
// later build, one that does not parse: logged, and then no request is allowed).
std::shared_ptr<const CorsConfiguration> CorsOf(const metadata::BucketRecord& bucket);

// For a request with an Origin header on `bucket`: when a rule allows its origin and
// method, the rule's headers are added to whatever the response will be (an error's
// too, so a browser can read it), with Vary. Nothing otherwise.
void AddCorsHeaders(RequestContext& ctx, const metadata::BucketRecord& bucket);

// The Vary header every CORS answer carries: a cache must not reuse it for another origin.
inline constexpr const char* kCorsVary =
    "Origin, Access-Control-Request-Headers, Access-Control-Request-Method";

}  // namespace strata::gateway
