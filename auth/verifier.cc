#include "auth/verifier.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "auth/internal/canonical.h"
#include "auth/internal/credential_scope.h"
#include "auth/internal/crypto.h"
#include "auth/internal/unsigned_headers.h"

namespace strata::auth {

namespace {

using internal::CanonicalHeaderValue;
using internal::Digest32;
using internal::IEquals;
using internal::QueryParam;
using internal::TrimSpaces;

constexpr std::string_view kStreamingSigned = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
constexpr std::string_view kStreamingSignedTrailer = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
constexpr std::string_view kStreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
constexpr std::int64_t kMaxPresignExpiry = 604800;

Error Err(ErrorCode code, std::string message) { return Error(code, std::move(message)); }

Error SignatureMismatch() {
  return Err(ErrorCode::kSignatureDoesNotMatch,
             "The request signature we calculated does not match the signature you provided. "
             "Check your key and signing method.");
}

Error UnknownKey() {
  return Err(ErrorCode::kInvalidAccessKeyId,
             "The AWS Access Key Id you provided does not exist in our records.");
}

Error NoDate() {
  return Err(ErrorCode::kAccessDenied,
             "AWS authentication requires a valid Date or x-amz-date header");
}

// The request acts on x-amz-* headers its signature does not cover (unsigned_headers.h).
Result<void> CheckAllAmzHeadersSigned(const RequestView& request,
                                      const std::vector<std::string>& signed_names) {
  std::vector<std::string> unsigned_names =
      internal::UnsignedAmzHeaders(request.headers, signed_names);
  if (unsigned_names.empty()) {
    return Ok();
  }
  return Err(ErrorCode::kAccessDenied,
             "There were headers present in the request which were not signed")
      .WithDetail("HeadersNotSigned", internal::JoinHeaderNames(unsigned_names));
}

Error Skewed() {
  return Err(ErrorCode::kRequestTimeTooSkewed,
             "The difference between the request time and the current time is too large.");
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) {
      return false;
    }
  }
  return true;
}

std::chrono::seconds AbsDiff(WallTime a, WallTime b) {
  auto d = std::chrono::duration_cast<std::chrono::seconds>(a - b);
  return d.count() < 0 ? -d : d;
}

// ---------------------------------------------------------------------------------------
// SigV4 pieces shared by the header and presigned forms (the credential scope's are in
// internal/credential_scope.h, shared with the POST form's signature).

using internal::CheckScope;
using internal::CredentialScope;
using internal::ParseCredential;

// Splits "host;range;x-amz-date" into lower-case names. False on an empty entry or when
// host is not signed.
bool ParseSignedHeaders(std::string_view list, std::vector<std::string>& out) {
  out.clear();
  if (list.empty()) {
    return false;
  }
  std::size_t pos = 0;
  bool has_host = false;
  while (pos <= list.size()) {
    std::size_t semi = list.find(';', pos);
    if (semi == std::string_view::npos) {
      semi = list.size();
    }
    std::string_view name = list.substr(pos, semi - pos);
    if (name.empty()) {
      return false;
    }
    out.push_back(internal::ToLower(name));
    has_host = has_host || out.back() == "host";
    pos = semi + 1;
  }
  return has_host;
}

std::string JoinSignedHeaders(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) {
      out.push_back(';');
    }
    out += n;
  }
  return out;
}

// (name, canonical value) for each signed header, in the order the client listed them.
std::vector<std::pair<std::string, std::string>> SignedHeaderValues(
    const RequestView& request, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    std::string value;
    bool first = true;
    for (const auto& [n, v] : request.headers) {
      if (IEquals(n, name)) {
        if (!first) {
          value.push_back(',');
        }
        value += CanonicalHeaderValue(v);
        first = false;
      }
    }
    out.emplace_back(name, std::move(value));
  }
  return out;
}

struct V4Check {
  std::string_view method;
  std::string_view raw_path;
  std::string canonical_query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string signed_headers;
  std::string_view payload_hash;
  std::string_view amz_date;
  std::string_view scope;
  std::string_view provided_signature;  // lower-case hex
};

// Computes the signature over the S3-canonical URI and, if that does not match, over the
// path exactly as received (clients disagree on how to encode some characters). Returns
// the matching signature, or a mismatch error.
Result<std::string> MatchV4Signature(const V4Check& c, const Digest32& key) {
  auto compute = [&](std::string_view uri) {
    std::string canonical_request = internal::CanonicalRequestV4(
        c.method, uri, c.canonical_query, c.headers, c.signed_headers, c.payload_hash);
    return internal::HexLower(internal::HmacSha256(
        internal::AsView(key), internal::StringToSignV4(c.amz_date, c.scope, canonical_request)));
  };
  std::string canonical_uri = internal::CanonicalUri(c.raw_path);
  std::string sig = compute(canonical_uri);
  if (internal::ConstantTimeEquals(sig, c.provided_signature)) {
    return sig;
  }
  std::string_view raw = c.raw_path.empty() ? std::string_view("/") : c.raw_path;
  if (raw != canonical_uri) {
    sig = compute(raw);
    if (internal::ConstantTimeEquals(sig, c.provided_signature)) {
      return sig;
    }
  }
  return SignatureMismatch();
}

// ---------------------------------------------------------------------------------------
// SigV2 pieces.

constexpr std::array<std::string_view, 29> kV2SubResources = {
    "acl",
    "cors",
    "delete",
    "lifecycle",
    "location",
    "logging",
    "notification",
    "partNumber",
    "policy",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
    // Also signed by botocore's HmacV1Auth.
    "accelerate",
    "replication",
    "object-lock",
    "storageClass",
};

std::string V2Resource(const RequestView& request, const std::vector<QueryParam>& params) {
  std::string out;
  if (!request.virtual_host_bucket.empty()) {
    out.push_back('/');
    out += request.virtual_host_bucket;
  }
  out += request.raw_path.empty() ? std::string_view("/") : request.raw_path;
  std::vector<const QueryParam*> sub;
  for (const QueryParam& p : params) {
    if (std::find(kV2SubResources.begin(), kV2SubResources.end(), p.name) !=
        kV2SubResources.end()) {
      sub.push_back(&p);
    }
  }
  std::stable_sort(sub.begin(), sub.end(),
                   [](const QueryParam* a, const QueryParam* b) { return a->name < b->name; });
  for (std::size_t i = 0; i < sub.size(); ++i) {
    out.push_back(i == 0 ? '?' : '&');
    out += sub[i]->name;
    if (sub[i]->has_value) {
      out.push_back('=');
      out += sub[i]->value;
    }
  }
  return out;
}

// The resource botocore's SigV2 signer signs for a path-style request on a bucket itself:
// "/bucket/" for "/bucket" (it signs as if virtual-hosted; Ceph RGW accepts it, and both
// name the same bucket). nullopt for any other resource.
std::optional<std::string> V2BucketSlashResource(std::string_view resource) {
  const std::size_t end = std::min(resource.find('?'), resource.size());
  const std::string_view path = resource.substr(0, end);
  if (path.size() < 2 || path[0] != '/' || path.find('/', 1) != std::string_view::npos) {
    return std::nullopt;
  }
  std::string out(path);
  out.push_back('/');
  out += resource.substr(end);
  return out;
}

// x-amz-* headers, lower-cased, sorted, repeated ones joined by ',', one "name:value\n"
// each. `skip_amz_date` leaves x-amz-date out (when its value takes the Date position).
std::string V2AmzHeaders(const RequestView& request, bool skip_amz_date) {
  std::vector<std::pair<std::string, std::string_view>> amz;
  for (const auto& [n, v] : request.headers) {
    if (n.size() >= 6 && IEquals(n.substr(0, 6), "x-amz-")) {
      std::string name = internal::ToLower(n);
      if (skip_amz_date && name == "x-amz-date") {
        continue;
      }
      amz.emplace_back(std::move(name), TrimSpaces(v));
    }
  }
  std::stable_sort(amz.begin(), amz.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (std::size_t i = 0; i < amz.size(); ++i) {
    if (i > 0 && amz[i].first == amz[i - 1].first) {
      out.back() = ',';
    } else {
      out += amz[i].first;
      out.push_back(':');
    }
    out += amz[i].second;
    out.push_back('\n');
  }
  return out;
}

std::string V2StringToSign(const RequestView& request, std::string_view date_position,
                           std::string_view amz_headers, std::string_view resource) {
  std::string out;
  out += request.method;
  out.push_back('\n');
  out += TrimSpaces(request.Header("content-md5"));
  out.push_back('\n');
  out += TrimSpaces(request.Header("content-type"));
  out.push_back('\n');
  out += date_position;
  out.push_back('\n');
  out += amz_headers;
  out += resource;
  return out;
}

bool V2Matches(std::string_view secret, std::string_view string_to_sign,
               std::string_view provided) {
  internal::Digest20 mac = internal::HmacSha1(secret, string_to_sign);
  return internal::ConstantTimeEquals(internal::Base64Encode(mac.data(), mac.size()), provided);
}

}  // namespace

Verifier::Verifier(const CredentialStore& store, const Clock& clock, VerifierOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

namespace {

class Verification {
 public:
  Verification(const CredentialStore& store, const Clock& clock, const VerifierOptions& options,
               const RequestView& request)
      : store_(store), clock_(clock), options_(options), request_(request) {}

  Result<AuthResult> Run() {
    params_ = internal::ParseQuery(request_.raw_query);
    const bool has_auth_header = request_.HasHeader("authorization");
    const bool v4_query = internal::FindParam(params_, "X-Amz-Algorithm") != nullptr ||
                          internal::FindParam(params_, "X-Amz-Credential") != nullptr ||
                          internal::FindParam(params_, "X-Amz-Signature") != nullptr;
    const bool v2_query = internal::FindParam(params_, "AWSAccessKeyId") != nullptr ||
                          internal::FindParam(params_, "Signature") != nullptr;
    if (has_auth_header) {
      if (v4_query) {
        return Err(ErrorCode::kInvalidArgument, "Only one auth mechanism allowed");
      }
      std::string_view auth = TrimSpaces(request_.Header("authorization"));
      if (StartsWith(auth, internal::kAlgorithmV4) &&
          (auth.size() == internal::kAlgorithmV4.size() ||
           auth[internal::kAlgorithmV4.size()] == ' ')) {
        return HeaderV4(auth.substr(internal::kAlgorithmV4.size()));
      }
      if (StartsWith(auth, "AWS ")) {
        return HeaderV2(auth.substr(4));
      }
      return Err(ErrorCode::kInvalidArgument, "Unsupported Authorization Type");
    }
    if (v4_query) {
      return PresignedV4();
    }
    if (v2_query) {
      return QueryV2();
    }
    AuthResult anonymous;
    anonymous.anonymous = true;
    anonymous.signature_version = 0;
    return anonymous;
  }

 private:
  Result<Credential> Lookup(std::string_view access_key) {
    std::optional<Credential> cred = store_.Find(access_key);
    if (!cred) {
      return UnknownKey();
    }
    return std::move(*cred);
  }

  // ---- SigV4, Authorization header ----
  Result<AuthResult> HeaderV4(std::string_view rest) {
    constexpr std::string_view kMalformed = "The authorization header is malformed; ";
    const auto malformed = [&](std::string_view why) {
      return Err(ErrorCode::kAuthorizationHeaderMalformed,
                 std::string(kMalformed) + std::string(why));
    };
    std::string_view credential, signed_headers, signature;
    bool have_cred = false, have_signed = false, have_sig = false;
    std::size_t i = 0;
    while (i < rest.size()) {
      while (i < rest.size() && (rest[i] == ' ' || rest[i] == ',' || rest[i] == '\t')) {
        ++i;
      }
      std::size_t start = i;
      while (i < rest.size() && rest[i] != ' ' && rest[i] != ',' && rest[i] != '\t') {
        ++i;
      }
      if (i == start) {
        break;
      }
      std::string_view token = rest.substr(start, i - start);
      std::size_t eq = token.find('=');
      if (eq == std::string_view::npos) {
        return malformed("the authorization component \"" + std::string(token) +
                         "\" is malformed.");
      }
      std::string_view key = token.substr(0, eq);
      std::string_view value = token.substr(eq + 1);
      bool* seen = nullptr;
      std::string_view* slot = nullptr;
      if (key == "Credential") {
        seen = &have_cred;
        slot = &credential;
      } else if (key == "SignedHeaders") {
        seen = &have_signed;
        slot = &signed_headers;
      } else if (key == "Signature") {
        seen = &have_sig;
        slot = &signature;
      } else {
        return malformed("the authorization component \"" + std::string(token) +
                         "\" is malformed.");
      }
      if (*seen) {
        return malformed("the authorization header has a duplicate component \"" +
                         std::string(key) + "\".");
      }
      *seen = true;
      *slot = value;
    }
    if (!have_cred || !have_signed || !have_sig) {
      return malformed(
          "the authorization header requires three components: Credential, SignedHeaders, "
          "and Signature.");
    }
    CredentialScope scope;
    if (!ParseCredential(credential, scope)) {
      return malformed(
          "the Credential is mal-formed; expecting "
          "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
    }
    std::vector<std::string> names;
    if (!ParseSignedHeaders(signed_headers, names)) {
      return malformed("the SignedHeaders component must be non-empty and include host.");
    }
    if (signature.size() != 64 || !IsHex(signature)) {
      return malformed("the Signature component must be 64 hexadecimal characters.");
    }

    // The request time: x-amz-date, else Date.
    std::string amz_date;
    WallTime when;
    if (request_.HasHeader("x-amz-date")) {
      std::string_view v = TrimSpaces(request_.Header("x-amz-date"));
      std::optional<WallTime> t = internal::ParseAmzDate(v);
      if (!t) {
        return NoDate();
      }
      amz_date.assign(v);
      when = *t;
    } else {
      std::optional<WallTime> t = internal::ParseHttpDate(TrimSpaces(request_.Header("date")));
      if (!t) {
        return NoDate();
      }
      amz_date = internal::FormatAmzDate(*t);
      when = *t;
    }
    STRATA_RETURN_IF_ERROR(CheckScope(scope, amz_date, options_.region,
                                      ErrorCode::kAuthorizationHeaderMalformed, kMalformed));

    // The payload mode (S3 requires x-amz-content-sha256 with header-signed SigV4).
    AuthResult result;
    if (!request_.HasHeader("x-amz-content-sha256")) {
      return Err(ErrorCode::kInvalidRequest,
                 "Missing required header for this request: x-amz-content-sha256");
    }
    std::string_view content_sha = TrimSpaces(request_.Header("x-amz-content-sha256"));
    if (content_sha.size() == 64 && IsHex(content_sha)) {
      result.payload = PayloadMode::kSignedSha256;
      result.expected_sha256 = internal::ToLower(content_sha);
    } else if (content_sha == internal::kUnsignedPayload) {
      result.payload = PayloadMode::kUnsigned;
    } else if (content_sha == kStreamingSigned) {
      result.payload = PayloadMode::kStreamingSigned;
    } else if (content_sha == kStreamingSignedTrailer) {
      result.payload = PayloadMode::kStreamingSignedTrailer;
    } else if (content_sha == kStreamingUnsignedTrailer) {
      result.payload = PayloadMode::kStreamingUnsignedTrailer;
    } else {
      return Err(ErrorCode::kInvalidArgument,
                 "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, "
                 "STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
                 "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, "
                 "STREAMING-UNSIGNED-PAYLOAD-TRAILER, or a valid sha256 value.");
    }
    const bool streaming = result.payload == PayloadMode::kStreamingSigned ||
                           result.payload == PayloadMode::kStreamingSignedTrailer ||
                           result.payload == PayloadMode::kStreamingUnsignedTrailer;
    if (streaming && request_.HasHeader("x-amz-decoded-content-length")) {
      std::int64_t n = 0;
      if (!internal::ParseDecimal(TrimSpaces(request_.Header("x-amz-decoded-content-length")), n)) {
        return Err(ErrorCode::kInvalidArgument,
                   "x-amz-decoded-content-length must be a non-negative integer");
      }
      result.decoded_content_length = n;
    }

    Result<Credential> cred = Lookup(scope.access_key);
    if (!cred.ok()) {
      return std::move(cred).error();
    }
    if (AbsDiff(clock_.Now(), when) > options_.max_skew) {
      return Skewed();
    }
    STRATA_RETURN_IF_ERROR(CheckAllAmzHeadersSigned(request_, names));

    std::string provided = internal::ToLower(signature);
    V4Check check{request_.method,
                  request_.raw_path,
                  internal::CanonicalQuery(params_),
                  SignedHeaderValues(request_, names),
                  JoinSignedHeaders(names),
                  content_sha,
                  amz_date,
                  scope.scope,
                  provided};
    Digest32 key =
        internal::CachedSigningKey(cred->secret_key, scope.date, scope.region, scope.service);
    Result<std::string> matched = MatchV4Signature(check, key);
    if (!matched.ok()) {
      return std::move(matched).error();
    }
    result.principal = std::move(*cred);
    result.signature_version = 4;
    if (streaming) {
      result.chunk.signing_key = key;
      result.chunk.amz_date = amz_date;
      result.chunk.scope.assign(scope.scope);
      result.chunk.seed_signature = std::move(*matched);
    }
    return result;
  }

  // ---- SigV4, presigned query ----
  Result<AuthResult> PresignedV4() {
    const auto qerr = [](std::string msg) {
      return Err(ErrorCode::kAuthorizationQueryParametersError, std::move(msg));
    };
    const QueryParam* algorithm = internal::FindParam(params_, "X-Amz-Algorithm");
    const QueryParam* credential = internal::FindParam(params_, "X-Amz-Credential");
    const QueryParam* date = internal::FindParam(params_, "X-Amz-Date");
    const QueryParam* expires = internal::FindParam(params_, "X-Amz-Expires");
    const QueryParam* signed_headers = internal::FindParam(params_, "X-Amz-SignedHeaders");
    const QueryParam* signature = internal::FindParam(params_, "X-Amz-Signature");
    if (!algorithm || !credential || !date || !expires || !signed_headers || !signature) {
      return qerr(
          "Query-string authentication version 4 requires the X-Amz-Algorithm, "
          "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
          "X-Amz-Expires parameters.");
    }
    if (algorithm->value != internal::kAlgorithmV4) {
      return qerr("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
    }
    std::optional<WallTime> when = internal::ParseAmzDate(date->value);
    if (!when) {
      return qerr("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
    }
    std::int64_t expiry = 0;
    if (!internal::ParseDecimal(expires->value, expiry)) {
      return qerr("X-Amz-Expires should be a number");
    }
    const std::int64_t max_expiry = std::min<std::int64_t>(
        kMaxPresignExpiry, static_cast<std::int64_t>(options_.max_presign_expiry.count()));
    if (expiry < 1) {
      return qerr("X-Amz-Expires must be non-negative");
    }
    if (expiry > max_expiry) {
      return qerr("X-Amz-Expires must be less than a week (in seconds) that is " +
                  std::to_string(max_expiry));
    }
    CredentialScope scope;
    if (!ParseCredential(credential->value, scope)) {
      return qerr(
          "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; "
          "expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
    }
    STRATA_RETURN_IF_ERROR(CheckScope(scope, date->value, options_.region,
                                      ErrorCode::kAuthorizationQueryParametersError,
                                      "Error parsing the X-Amz-Credential parameter; "));
    std::vector<std::string> names;
    if (!ParseSignedHeaders(signed_headers->value, names)) {
      return qerr("X-Amz-SignedHeaders must be non-empty and include host.");
    }
    if (signature->value.size() != 64 || !IsHex(signature->value)) {
      return qerr("X-Amz-Signature must be 64 hexadecimal characters.");
    }

    Result<Credential> cred = Lookup(scope.access_key);
    if (!cred.ok()) {
      return std::move(cred).error();
    }
    const WallTime now = clock_.Now();
    if (now > *when + std::chrono::seconds(expiry)) {
      return Err(ErrorCode::kExpiredPresignedRequest, "Request has expired");
    }
    if (*when > now + options_.max_skew) {
      return Err(ErrorCode::kAccessDenied, "Request is not yet valid");
    }
    // X-Amz-* query parameters are in the canonical query, so signed; headers are not.
    STRATA_RETURN_IF_ERROR(CheckAllAmzHeadersSigned(request_, names));

    std::string payload_hash(internal::kUnsignedPayload);
    if (const QueryParam* p = internal::FindParam(params_, "X-Amz-Content-Sha256")) {
      payload_hash = p->value;
    } else if (request_.HasHeader("x-amz-content-sha256")) {
      payload_hash.assign(TrimSpaces(request_.Header("x-amz-content-sha256")));
    }

    std::string provided = internal::ToLower(signature->value);
    V4Check check{request_.method,
                  request_.raw_path,
                  internal::CanonicalQuery(params_, "X-Amz-Signature"),
                  SignedHeaderValues(request_, names),
                  JoinSignedHeaders(names),
                  payload_hash,
                  date->value,
                  scope.scope,
                  provided};
    Digest32 key =
        internal::CachedSigningKey(cred->secret_key, scope.date, scope.region, scope.service);
    Result<std::string> matched = MatchV4Signature(check, key);
    if (!matched.ok()) {
      return std::move(matched).error();
    }
    AuthResult result;
    result.principal = std::move(*cred);
    result.signature_version = 4;
    result.payload = PayloadMode::kUnsigned;
    return result;
  }

  // ---- SigV2, Authorization header ----
  Result<AuthResult> HeaderV2(std::string_view rest) {
    rest = TrimSpaces(rest);
    std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= rest.size()) {
      return Err(ErrorCode::kInvalidArgument,
                 "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature");
    }
    std::string_view access_key = rest.substr(0, colon);
    std::string_view signature = TrimSpaces(rest.substr(colon + 1));

    const bool has_amz_date = request_.HasHeader("x-amz-date");
    std::string_view amz_date = TrimSpaces(request_.Header("x-amz-date"));
    std::string_view date = TrimSpaces(request_.Header("date"));
    std::optional<WallTime> when = internal::ParseHttpDate(has_amz_date ? amz_date : date);
    if (!when) {
      return NoDate();
    }
    Result<Credential> cred = Lookup(access_key);
    if (!cred.ok()) {
      return std::move(cred).error();
    }
    if (AbsDiff(clock_.Now(), *when) > options_.max_skew) {
      return Skewed();
    }
    const std::string resource = V2Resource(request_, params_);
    const auto matches = [&](const std::string& signed_resource) {
      if (V2Matches(cred->secret_key,
                    V2StringToSign(request_, has_amz_date ? std::string_view() : date,
                                   V2AmzHeaders(request_, false), signed_resource),
                    signature)) {
        return true;
      }
      // Some signers (and AWS's own documented example) put x-amz-date's value in the
      // Date position instead of among the x-amz-* headers.
      return has_amz_date &&
             V2Matches(
                 cred->secret_key,
                 V2StringToSign(request_, amz_date, V2AmzHeaders(request_, true), signed_resource),
                 signature);
    };
    bool ok = matches(resource);
    if (!ok) {
      const auto slashed = V2BucketSlashResource(resource);
      ok = slashed && matches(*slashed);
    }
    if (!ok) {
      return SignatureMismatch();
    }
    AuthResult result;
    result.principal = std::move(*cred);
    result.signature_version = 2;
    result.payload = PayloadMode::kUnsigned;
    return result;
  }

  // ---- SigV2, query string ----
  Result<AuthResult> QueryV2() {
    const QueryParam* access_key = internal::FindParam(params_, "AWSAccessKeyId");
    const QueryParam* signature = internal::FindParam(params_, "Signature");
    const QueryParam* expires = internal::FindParam(params_, "Expires");
    if (!access_key || !signature || !expires || access_key->value.empty() ||
        signature->value.empty()) {
      return Err(ErrorCode::kAccessDenied,
                 "Query-string authentication requires the Signature, Expires and "
                 "AWSAccessKeyId parameters");
    }
    std::int64_t expiry = 0;
    if (!internal::ParseDecimal(expires->value, expiry)) {
      return Err(ErrorCode::kAccessDenied,
                 "Invalid date (should be seconds since epoch): " + expires->value);
    }
    Result<Credential> cred = Lookup(access_key->value);
    if (!cred.ok()) {
      return std::move(cred).error();
    }
    // Compared in seconds: an Expires past 2262 does not fit the clock's nanoseconds.
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch());
    if (now.count() > expiry) {
      return Err(ErrorCode::kExpiredPresignedRequest, "Request has expired");
    }
    const std::string resource = V2Resource(request_, params_);
    const auto matches = [&](const std::string& signed_resource) {
      return V2Matches(
          cred->secret_key,
          V2StringToSign(request_, expires->value, V2AmzHeaders(request_, false), signed_resource),
          signature->value);
    };
    bool ok = matches(resource);
    if (!ok) {
      const auto slashed = V2BucketSlashResource(resource);
      ok = slashed && matches(*slashed);
    }
    if (!ok) {
      return SignatureMismatch();
    }
    AuthResult result;
    result.principal = std::move(*cred);
    result.signature_version = 2;
    result.payload = PayloadMode::kUnsigned;
    return result;
  }

  const CredentialStore& store_;
  const Clock& clock_;
  const VerifierOptions& options_;
  const RequestView& request_;
  std::vector<QueryParam> params_;
};

}  // namespace

Result<AuthResult> Verifier::Verify(const RequestView& request) const {
  return Verification(store_, clock_, options_, request).Run();
}

}  // namespace strata::auth
