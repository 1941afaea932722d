// Private to auth/: which x-amz-* headers of a SigV4 request its signature leaves out.
//
// S3 acts on x-amz-* headers (x-amz-copy-source, x-amz-meta-*, x-amz-tagging, ...), so one
// the signature does not cover lets whoever holds a signed request or a presigned URL
// change what it does: a presigned PUT plus an unsigned x-amz-copy-source would copy any
// object the signer can read. AWS refuses such a request (403 AccessDenied, "There were
// headers present in the request which were not signed", <HeadersNotSigned>), in header
// and in query (presigned) authentication alike; so does the verifier, with this list.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::auth::internal {

// x-amz-content-sha256 need not be listed: its value is the payload hash the canonical
// request ends with, so the signature covers it whether or not it is named (AWS exempts
// it; a changed value is a SignatureDoesNotMatch).
inline constexpr std::string_view kExemptUnsignedHeader = "x-amz-content-sha256";

// The names (lower-cased, each once, in the order they first appear in `headers`) of the
// x-amz-* headers present that `signed_names` (lower-case, as parsed from SignedHeaders)
// does not list, other than kExemptUnsignedHeader. Empty when every one is signed.
std::vector<std::string> UnsignedAmzHeaders(
    const std::vector<std::pair<std::string_view, std::string_view>>& headers,
    const std::vector<std::string>& signed_names);

// The <HeadersNotSigned> text S3 sends: the names joined by ", ".
std::string JoinHeaderNames(const std::vector<std::string>& names);

}  // namespace strata::auth::internal
