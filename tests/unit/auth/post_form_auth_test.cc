#include "auth/post_form_auth.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleStore;
using testing::kExampleAccessKey;

// A policy for the AWS example credentials, and its signatures as Python's hmac computes
// them (an implementation independent of this one):
//   k = HMAC-SHA256 chain of "AWS4"+secret, "20151229", "us-east-1", "s3", "aws4_request"
//   hmac.new(k, policy, sha256).hexdigest()
//   base64(hmac.new(secret, policy, sha1).digest())
constexpr const char* kPolicy =
    "eyJleHBpcmF0aW9uIjogIjIwMTUtMTItMzBUMTI6MDA6MDAuMDAwWiIsICJjb25kaXRpb25zIjogW3siYnVja2V0Ij"
    "ogInNpZ3Y0ZXhhbXBsZWJ1Y2tldCJ9LCBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwgeyJ4"
    "LWFtei1jcmVkZW50aWFsIjogIkFLSUFJT1NGT0ROTjdFWEFNUExFLzIwMTUxMjI5L3VzLWVhc3QtMS9zMy9hd3M0X3"
    "JlcXVlc3QifSwgeyJ4LWFtei1hbGdvcml0aG0iOiAiQVdTNC1ITUFDLVNIQTI1NiJ9LCB7IngtYW16LWRhdGUiOiAi"
    "MjAxNTEyMjlUMDAwMDAwWiJ9XX0=";
constexpr const char* kSignatureV4 =
    "2652986fb239413bbccfe0b1ce6e07e44ab1385edfab3c03943cf94e8384faeb";
constexpr const char* kSignatureV2 = "lbbTBQ3n5paoNS9YcbyH7J5x9Bc=";

PostFormSignature V4Form() {
  PostFormSignature form;
  form.policy = kPolicy;
  form.algorithm = "AWS4-HMAC-SHA256";
  form.credential = std::string(kExampleAccessKey) + "/20151229/us-east-1/s3/aws4_request";
  form.date = "20151229T000000Z";
  form.signature_v4 = kSignatureV4;
  return form;
}

PostFormSignature V2Form() {
  PostFormSignature form;
  form.policy = kPolicy;
  form.access_key = kExampleAccessKey;
  form.signature_v2 = kSignatureV2;
  return form;
}

Result<AuthResult> Verify(const PostFormSignature& form) {
  static const MemCredentialStore store = ExampleStore();
  return VerifyPostFormSignature(store, "us-east-1", form);
}

ErrorCode Refusal(const PostFormSignature& form) {
  auto r = Verify(form);
  EXPECT_FALSE(r.ok());
  return r.ok() ? ErrorCode::kInternal : r.error().code;
}

TEST(PostFormAuth, SigV4KnownVector) {
  auto r = Verify(V4Form());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->anonymous);
  EXPECT_EQ(r->principal.access_key, kExampleAccessKey);
  EXPECT_EQ(r->signature_version, 4);
  EXPECT_EQ(r->payload, PayloadMode::kUnsigned);
  // Hex digits in either case are the same signature.
  auto upper = V4Form();
  for (char& c : *upper.signature_v4) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  EXPECT_TRUE(Verify(upper).ok());
}

TEST(PostFormAuth, SigV2KnownVector) {
  auto r = Verify(V2Form());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->principal.access_key, kExampleAccessKey);
  EXPECT_EQ(r->signature_version, 2);
}

TEST(PostFormAuth, AnyChangeBreaksTheSignature) {
  auto form = V4Form();
  (*form.policy)[10] = (*form.policy)[10] == 'A' ? 'B' : 'A';
  EXPECT_EQ(Refusal(form), ErrorCode::kSignatureDoesNotMatch);
  form = V4Form();
  (*form.signature_v4)[0] = (*form.signature_v4)[0] == '0' ? '1' : '0';
  EXPECT_EQ(Refusal(form), ErrorCode::kSignatureDoesNotMatch);
  form = V4Form();
  form.signature_v4->pop_back();
  EXPECT_EQ(Refusal(form), ErrorCode::kSignatureDoesNotMatch);
  // Another day is another signing key.
  form = V4Form();
  form.credential = std::string(kExampleAccessKey) + "/20151230/us-east-1/s3/aws4_request";
  form.date = "20151230T000000Z";
  EXPECT_EQ(Refusal(form), ErrorCode::kSignatureDoesNotMatch);
  auto v2 = V2Form();
  v2.signature_v2 = "mbbTBQ3n5paoNS9YcbyH7J5x9Bc=";
  EXPECT_EQ(Refusal(v2), ErrorCode::kSignatureDoesNotMatch);
  v2 = V2Form();
  v2.policy->insert(0, " ");  // the string signed is the field exactly as sent
  EXPECT_EQ(Refusal(v2), ErrorCode::kSignatureDoesNotMatch);
}

TEST(PostFormAuth, UnknownKeys) {
  auto form = V4Form();
  form.credential = "AKIDUNKNOWN/20151229/us-east-1/s3/aws4_request";
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidAccessKeyId);
  auto v2 = V2Form();
  v2.access_key = "AKIDUNKNOWN";
  EXPECT_EQ(Refusal(v2), ErrorCode::kInvalidAccessKeyId);
}

TEST(PostFormAuth, MalformedFields) {
  auto form = V4Form();
  form.algorithm = "AWS4-HMAC-SHA1";
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  form = V4Form();
  form.date = "2015-12-29";
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  form = V4Form();
  form.credential = "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1";
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  form = V4Form();
  form.credential = std::string(kExampleAccessKey) + "/20151229/eu-west-1/s3/aws4_request";
  auto r = Verify(form);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("expecting 'us-east-1'"), std::string::npos);
  form = V4Form();
  form.date = "20151228T000000Z";  // not the credential's day
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  for (auto field : {&PostFormSignature::algorithm, &PostFormSignature::credential,
                     &PostFormSignature::date, &PostFormSignature::signature_v4}) {
    form = V4Form();
    (form.*field).reset();
    EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  }
  auto v2 = V2Form();
  v2.signature_v2.reset();
  EXPECT_EQ(Refusal(v2), ErrorCode::kInvalidArgument);
  // Both mechanisms at once.
  form = V4Form();
  form.access_key = kExampleAccessKey;
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
}

TEST(PostFormAuth, PolicyAndSignatureGoTogether) {
  auto form = V4Form();
  form.policy.reset();
  EXPECT_EQ(Refusal(form), ErrorCode::kInvalidArgument);
  PostFormSignature unsigned_policy;
  unsigned_policy.policy = kPolicy;
  EXPECT_EQ(Refusal(unsigned_policy), ErrorCode::kInvalidArgument);
}

TEST(PostFormAuth, AnUnsignedFormIsAnonymous) {
  auto r = Verify(PostFormSignature{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->anonymous);
  EXPECT_TRUE(r->principal.access_key.empty());
}

}  // namespace
}  // namespace strata::auth
