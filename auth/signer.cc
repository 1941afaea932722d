#include "auth/signer.h"

#include <algorithm>
#include <string>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"

namespace strata::auth {

using internal::CanonicalHeaderValue;
using internal::ToLower;

std::string Sha256Hex(std::string_view data) {
  return internal::HexLower(internal::Sha256Of(data));
}

std::string UriEncode(std::string_view in, bool encode_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() + in.size() / 2);
  for (char ch : in) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

namespace {

// Lower-cased names, sorted, with repeated headers joined by ','; and the signed list.
struct CanonicalHeaders {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string signed_headers;
};

CanonicalHeaders Canonicalize(const std::vector<std::pair<std::string, std::string>>& in) {
  std::vector<std::pair<std::string, std::string>> lowered;
  lowered.reserve(in.size());
  for (const auto& [name, value] : in) {
    lowered.emplace_back(ToLower(name), CanonicalHeaderValue(value));
  }
  std::stable_sort(lowered.begin(), lowered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  CanonicalHeaders out;
  for (auto& [name, value] : lowered) {
    if (!out.headers.empty() && out.headers.back().first == name) {
      out.headers.back().second += ',';
      out.headers.back().second += value;
      continue;
    }
    if (!out.signed_headers.empty()) {
      out.signed_headers.push_back(';');
    }
    out.signed_headers += name;
    out.headers.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

void EraseHeader(std::vector<std::pair<std::string, std::string>>& headers, std::string_view name) {
  std::erase_if(headers, [&](const auto& h) { return internal::IEquals(h.first, name); });
}

std::string Scope(std::string_view date, const std::string& region, const std::string& service) {
  std::string scope(date);
  scope += '/';
  scope += region;
  scope += '/';
  scope += service;
  scope += '/';
  scope += internal::kTerminator;
  return scope;
}

}  // namespace

void SignV4(SignRequest& request, const Credential& cred, const std::string& region,
            const std::string& service, WallTime now) {
  const std::string amz_date = internal::FormatAmzDate(now);
  const std::string date = amz_date.substr(0, 8);
  EraseHeader(request.headers, "authorization");
  EraseHeader(request.headers, "x-amz-date");
  EraseHeader(request.headers, "x-amz-content-sha256");
  request.headers.emplace_back("x-amz-date", amz_date);
  request.headers.emplace_back("x-amz-content-sha256", request.payload_sha256);

  CanonicalHeaders ch = Canonicalize(request.headers);
  std::string canonical_request = internal::CanonicalRequestV4(
      request.method, internal::CanonicalUri(request.raw_path),
      internal::CanonicalQuery(internal::ParseQuery(request.raw_query)), ch.headers,
      ch.signed_headers, request.payload_sha256);
  std::string scope = Scope(date, region, service);
  internal::Digest32 key = internal::CachedSigningKey(cred.secret_key, date, region, service);
  std::string signature = internal::HexLower(internal::HmacSha256(
      internal::AsView(key), internal::StringToSignV4(amz_date, scope, canonical_request)));

  std::string auth(internal::kAlgorithmV4);
  auth += " Credential=";
  auth += cred.access_key;
  auth += '/';
  auth += scope;
  auth += ", SignedHeaders=";
  auth += ch.signed_headers;
  auth += ", Signature=";
  auth += signature;
  request.headers.emplace_back("Authorization", std::move(auth));
}

std::string PresignV4(const SignRequest& request, const Credential& cred, const std::string& region,
                      const std::string& service, WallTime now, std::chrono::seconds expires) {
  const std::string amz_date = internal::FormatAmzDate(now);
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = Scope(date, region, service);

  std::vector<std::pair<std::string, std::string>> headers = request.headers;
  EraseHeader(headers, "authorization");
  CanonicalHeaders ch = Canonicalize(headers);

  // The payload hash a verifier will use: x-amz-content-sha256 header if sent, else the
  // X-Amz-Content-Sha256 parameter added here when the caller asked for a signed digest.
  std::string payload(internal::kUnsignedPayload);
  bool payload_param = false;
  for (const auto& [name, value] : ch.headers) {
    if (name == "x-amz-content-sha256") {
      payload = value;
    }
  }
  if (payload == internal::kUnsignedPayload && !request.payload_sha256.empty() &&
      request.payload_sha256 != internal::kUnsignedPayload) {
    payload = request.payload_sha256;
    payload_param = true;
  }

  std::string query = request.raw_query;
  auto add = [&query](std::string_view name, std::string_view value) {
    if (!query.empty()) {
      query += '&';
    }
    query += name;
    query += '=';
    query += UriEncode(value, true);
  };
  add("X-Amz-Algorithm", internal::kAlgorithmV4);
  add("X-Amz-Credential", cred.access_key + "/" + scope);
  add("X-Amz-Date", amz_date);
  add("X-Amz-Expires", std::to_string(expires.count()));
  add("X-Amz-SignedHeaders", ch.signed_headers);
  if (payload_param) {
    add("X-Amz-Content-Sha256", payload);
  }

  std::string canonical_request =
      internal::CanonicalRequestV4(request.method, internal::CanonicalUri(request.raw_path),
                                   internal::CanonicalQuery(internal::ParseQuery(query)),
                                   ch.headers, ch.signed_headers, payload);
  internal::Digest32 key = internal::CachedSigningKey(cred.secret_key, date, region, service);
  std::string signature = internal::HexLower(internal::HmacSha256(
      internal::AsView(key), internal::StringToSignV4(amz_date, scope, canonical_request)));
  add("X-Amz-Signature", signature);
  return query;
}

}  // namespace strata::auth
