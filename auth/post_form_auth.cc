#include "auth/post_form_auth.h"

#include "auth/internal/canonical.h"
#include "auth/internal/credential_scope.h"
#include "auth/internal/crypto.h"

namespace strata::auth {
namespace {

// S3's words for a required field the form lacks (or sent after the file, where it is
// not read).
Error MissingField(std::string_view name) {
  return Error(ErrorCode::kInvalidArgument,
               "Bucket POST must contain a field named '" + std::string(name) +
                   "'.  If it is specified, please check the order of the fields.");
}

Error SignatureMismatch() {
  return Error(ErrorCode::kSignatureDoesNotMatch,
               "The request signature we calculated does not match the signature you provided. "
               "Check your key and signing method.");
}

Result<Credential> Lookup(const CredentialStore& store, std::string_view access_key) {
  auto found = store.Find(access_key);
  if (!found) {
    return Error(ErrorCode::kInvalidAccessKeyId,
                 "The AWS Access Key Id you provided does not exist in our records.");
  }
  return std::move(*found);
}

Result<AuthResult> Signed(Credential who, int version) {
  AuthResult result;
  result.principal = std::move(who);
  result.signature_version = version;
  result.payload = PayloadMode::kUnsigned;
  return result;
}

Result<AuthResult> VerifyV4(const CredentialStore& store, std::string_view region,
                            const PostFormSignature& form) {
  for (auto [field, name] :
       {std::pair{&form.algorithm, "x-amz-algorithm"},
        std::pair{&form.credential, "x-amz-credential"}, std::pair{&form.date, "x-amz-date"},
        std::pair{&form.signature_v4, "x-amz-signature"}}) {
    if (!field->has_value()) {
      return MissingField(name);
    }
  }
  if (*form.algorithm != internal::kAlgorithmV4) {
    return Error(
        ErrorCode::kInvalidArgument,
        "The x-amz-algorithm field must be AWS4-HMAC-SHA256; it is '" + *form.algorithm + "'.");
  }
  if (!internal::ParseAmzDate(*form.date)) {
    return Error(ErrorCode::kInvalidArgument,
                 "The x-amz-date field must be a date and time such as 20130524T000000Z.");
  }
  constexpr std::string_view kPrefix = "Error parsing the X-Amz-Credential parameter; ";
  internal::CredentialScope scope;
  if (!internal::ParseCredential(*form.credential, scope)) {
    return Error(ErrorCode::kInvalidArgument,
                 std::string(kPrefix) +
                     "the Credential is mal-formed; expecting "
                     "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
  }
  STRATA_RETURN_IF_ERROR(
      internal::CheckScope(scope, *form.date, region, ErrorCode::kInvalidArgument, kPrefix));
  auto who = Lookup(store, scope.access_key);
  if (!who.ok()) {
    return std::move(who).error();
  }
  const internal::Digest32 key =
      internal::CachedSigningKey(who->secret_key, scope.date, scope.region, scope.service);
  const std::string expected =
      internal::HexLower(internal::HmacSha256(internal::AsView(key), *form.policy));
  if (!internal::ConstantTimeEquals(expected, internal::ToLower(*form.signature_v4))) {
    return SignatureMismatch();
  }
  return Signed(std::move(*who), 4);
}

Result<AuthResult> VerifyV2(const CredentialStore& store, const PostFormSignature& form) {
  if (!form.access_key) {
    return MissingField("AWSAccessKeyId");
  }
  if (!form.signature_v2) {
    return MissingField("signature");
  }
  auto who = Lookup(store, *form.access_key);
  if (!who.ok()) {
    return std::move(who).error();
  }
  const internal::Digest20 mac = internal::HmacSha1(who->secret_key, *form.policy);
  if (!internal::ConstantTimeEquals(internal::Base64Encode(mac.data(), mac.size()),
                                    *form.signature_v2)) {
    return SignatureMismatch();
  }
  return Signed(std::move(*who), 2);
}

}  // namespace

Result<AuthResult> VerifyPostFormSignature(const CredentialStore& store, std::string_view region,
                                           const PostFormSignature& form) {
  const bool v4 = form.algorithm || form.credential || form.signature_v4;
  const bool v2 = form.access_key || form.signature_v2;
  if (v4 && v2) {
    return Error(ErrorCode::kInvalidArgument, "Only one auth mechanism allowed");
  }
  if (!v4 && !v2) {
    if (form.policy) {
      // A policy nobody signed proves nothing: S3 wants its signer.
      return MissingField("AWSAccessKeyId");
    }
    AuthResult anonymous;
    anonymous.anonymous = true;
    anonymous.signature_version = 0;
    return anonymous;
  }
  if (!form.policy) {
    return MissingField("policy");
  }
  return v4 ? VerifyV4(store, region, form) : VerifyV2(store, form);
}

Result<AuthResult> Verifier::VerifyPostForm(const PostFormSignature& form) const {
  return VerifyPostFormSignature(store_, options_.region, form);
}

}  // namespace strata::auth
