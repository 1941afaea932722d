// Private to auth/: the pieces both signature versions and the signer build strings from:
// percent-decoding, canonical URI / query / header values, S3's date formats, and the
// SigV4 string-to-sign and signing key (with its per-thread cache).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/internal/crypto.h"
#include "common/clock.h"

namespace strata::auth::internal {

inline constexpr std::string_view kAlgorithmV4 = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kTerminator = "aws4_request";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

char AsciiLower(char c);
std::string ToLower(std::string_view s);
bool IEquals(std::string_view a, std::string_view b);
std::string_view TrimSpaces(std::string_view s);  // spaces and tabs, both ends

// Percent-decodes `in` into `out`. False (and `out` unspecified) on a malformed escape.
// '+' is kept as '+': S3 clients encode spaces as %20.
bool UriDecode(std::string_view in, std::string& out);

// SigV4 canonical URI: the path decoded once and re-encoded with S3's rules, '/' kept.
// A path that does not decode is encoded as received. Empty becomes "/".
std::string CanonicalUri(std::string_view raw_path);

struct QueryParam {
  std::string name;   // decoded
  std::string value;  // decoded; empty for a bare name
  bool has_value = false;
};
// Splits a raw query at '&' and decodes each name and value (a part that does not decode
// is kept as received). Empty parts are skipped.
std::vector<QueryParam> ParseQuery(std::string_view raw_query);
// The value of the first parameter named `name` (exact match), if any.
const QueryParam* FindParam(const std::vector<QueryParam>& params, std::string_view name);

// SigV4 canonical query string: names and values encoded (also '/'), sorted by name then
// value, "name=value" joined by '&'. Parameters named `exclude` are left out.
std::string CanonicalQuery(const std::vector<QueryParam>& params, std::string_view exclude = {});

// A header value as SigV4 signs it: trimmed, runs of spaces collapsed to one.
std::string CanonicalHeaderValue(std::string_view value);

// "20130524T000000Z" <-> time. Parse is strict (16 chars, valid calendar fields).
std::optional<WallTime> ParseAmzDate(std::string_view s);
std::string FormatAmzDate(WallTime t);
// RFC 1123 ("Fri, 24 May 2013 00:00:00 GMT", also numeric zones like "+0000"),
// RFC 850 and asctime formats, as HTTP allows for Date.
std::optional<WallTime> ParseHttpDate(std::string_view s);

// Parses a decimal integer without sign; false on anything else or overflow.
bool ParseDecimal(std::string_view s, std::int64_t& out);

// "AWS4-HMAC-SHA256\n<amz_date>\n<scope>\n<hex(sha256(canonical_request))>"
std::string StringToSignV4(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical_request);

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
Digest32 DeriveSigningKey(std::string_view secret, std::string_view date, std::string_view region,
                          std::string_view service);
// The same through a bounded thread_local cache keyed by (secret, date, region, service).
Digest32 CachedSigningKey(std::string_view secret, std::string_view date, std::string_view region,
                          std::string_view service);
// Entries currently in this thread's cache (tests).
std::size_t SigningKeyCacheSizeForTest();
inline constexpr std::size_t kSigningKeyCacheCapacity = 256;

// Builds a canonical request from already canonical pieces. `headers` are (lower-case
// name, canonical value) in signed order.
std::string CanonicalRequestV4(std::string_view method, std::string_view canonical_uri,
                               std::string_view canonical_query,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               std::string_view signed_headers, std::string_view payload_hash);

}  // namespace strata::auth::internal
