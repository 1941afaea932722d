// Signer: reproduces AWS's examples, and whatever it signs the Verifier accepts; any
// change to a signed part afterwards is refused.
#include "auth/signer.h"

#include <gtest/gtest.h>

#include <string>

#include "auth/request.h"
#include "auth/verifier.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleCredential;
using testing::ExampleStore;
using testing::ExampleTime;
using testing::kEmptySha;
using testing::OwnedRequest;

std::string HeaderOf(const SignRequest& s, const std::string& name) {
  for (const auto& [n, v] : s.headers) {
    if (n == name) {
      return v;
    }
  }
  return "";
}

TEST(Signer, Sha256HexAndUriEncode) {
  EXPECT_EQ(Sha256Hex(""), kEmptySha);
  EXPECT_EQ(Sha256Hex("Welcome to Amazon S3."),
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  EXPECT_EQ(UriEncode("AZaz09-_.~", true), "AZaz09-_.~");
  EXPECT_EQ(UriEncode("a b/c", false), "a%20b/c");
  EXPECT_EQ(UriEncode("a b/c", true), "a%20b%2Fc");
  EXPECT_EQ(UriEncode("test$file.text", true), "test%24file.text");
  EXPECT_EQ(UriEncode("+=&?%*", true), "%2B%3D%26%3F%25%2A");
  EXPECT_EQ(UriEncode("caf\xc3\xa9", true), "caf%C3%A9");
  EXPECT_EQ(UriEncode(std::string_view("\0\xff", 2), true), "%00%FF");
}

TEST(Signer, ReproducesGetObjectExample) {
  SignRequest s;
  s.method = "GET";
  s.raw_path = "/test.txt";
  s.headers = {{"Host", "examplebucket.s3.amazonaws.com"}, {"Range", "bytes=0-9"}};
  s.payload_sha256 = kEmptySha;
  SignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime());
  EXPECT_EQ(HeaderOf(s, "x-amz-date"), "20130524T000000Z");
  EXPECT_EQ(HeaderOf(s, "x-amz-content-sha256"), kEmptySha);
  EXPECT_EQ(HeaderOf(s, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(Signer, ReproducesPresignedExample) {
  SignRequest s;
  s.method = "GET";
  s.raw_path = "/test.txt";
  s.headers = {{"Host", "examplebucket.s3.amazonaws.com"}};
  std::string q = PresignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime(),
                            std::chrono::seconds(86400));
  EXPECT_EQ(
      q,
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
      "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
      "SignedHeaders=host&X-Amz-Signature="
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

class RoundTrip : public ::testing::Test {
 protected:
  RoundTrip() : store_(ExampleStore()), clock_(ExampleTime()), verifier_(store_, clock_, {}) {}

  Result<AuthResult> Verify(const OwnedRequest& r) { return verifier_.Verify(r.View()); }
  void ExpectMismatch(const OwnedRequest& r, const std::string& what) {
    Result<AuthResult> res = Verify(r);
    ASSERT_FALSE(res.ok()) << what;
    EXPECT_EQ(res.error().code, ErrorCode::kSignatureDoesNotMatch)
        << what << ": " << res.error().message;
  }

  MemCredentialStore store_;
  FakeClock clock_;
  Verifier verifier_;
};

struct Shape {
  const char* path;
  const char* query;
};
constexpr Shape kShapes[] = {
    {"/", ""},
    {"/bucket", "list-type=2&prefix=a%2Fb&delimiter=%2F"},
    {"/bucket/key", "uploads"},
    {"/bucket/dir/my%20file%2B1.txt", "partNumber=3&uploadId=abc%3D%3D"},
    {"/bucket/caf%C3%A9/%E2%9C%93", "versionId=null&response-content-type=text%2Fplain"},
    {"/bucket/a~b_c-d.e", "tagging&x-id=PutObjectTagging"},
    {"/bucket/weird%21%27%28%29%2A", "a=1&a=0&b&c="},
};

TEST_F(RoundTrip, SignV4ThenVerify) {
  for (const Shape& shape : kShapes) {
    SignRequest s;
    s.method = "PUT";
    s.raw_path = shape.path;
    s.raw_query = shape.query;
    s.headers = {{"Host", "localhost:9000"},
                 {"Content-Type", "text/plain"},
                 {"x-amz-meta-note", "  two   spaces  "},
                 {"X-Amz-Meta-Multi", "a"},
                 {"x-amz-meta-multi", "b"}};
    s.payload_sha256 = Sha256Hex("hello");
    SignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime());
    OwnedRequest r = OwnedRequest::FromSigned(s);
    Result<AuthResult> res = Verify(r);
    ASSERT_TRUE(res.ok()) << shape.path << "?" << shape.query << ": " << res.error().message;
    EXPECT_EQ(res->payload, PayloadMode::kSignedSha256);
    EXPECT_EQ(res->expected_sha256, Sha256Hex("hello"));

    // Unsigned additions do not matter.
    OwnedRequest extra = r;
    extra.headers.emplace_back("User-Agent", "curl/8");
    EXPECT_TRUE(Verify(extra).ok());

    // Any signed part changed does.
    OwnedRequest t = r;
    t.method = "POST";
    ExpectMismatch(t, "method");
    t = r;
    t.raw_path = std::string(shape.path) + "x";
    ExpectMismatch(t, "path");
    t = r;
    t.raw_query = std::string(shape.query) + (std::string(shape.query).empty() ? "" : "&") + "z=1";
    ExpectMismatch(t, "query added");
    t = r;
    t.Set("Content-Type", "text/html");
    ExpectMismatch(t, "content-type");
    t = r;
    t.Set("x-amz-meta-note", "two spaces!");
    ExpectMismatch(t, "meta");
    t = r;
    t.Remove("x-amz-meta-note");
    ExpectMismatch(t, "meta removed");
    t = r;
    t.headers.emplace_back("x-amz-meta-multi", "c");
    ExpectMismatch(t, "repeated header added");
    t = r;
    t.Set("Host", "localhost:9001");
    ExpectMismatch(t, "host");
    t = r;
    t.Set("x-amz-content-sha256", Sha256Hex("hellO"));
    ExpectMismatch(t, "payload hash");
  }
}

TEST_F(RoundTrip, CanonicalEquivalentsStillVerify) {
  SignRequest s;
  s.method = "GET";
  s.raw_path = "/bucket/a%20b";
  s.raw_query = "b=2&a=1";
  s.headers = {{"Host", "localhost"}, {"x-amz-meta-x", "v  w"}};
  SignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime());
  OwnedRequest r = OwnedRequest::FromSigned(s);
  r.raw_query = "a=1&b=2";
  r.Set("x-amz-meta-x", " v w ");
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
}

TEST_F(RoundTrip, PresignV4ThenVerify) {
  for (const Shape& shape : kShapes) {
    SignRequest s;
    s.method = "GET";
    s.raw_path = shape.path;
    s.raw_query = shape.query;
    s.headers = {{"host", "bucket.localhost:9000"}};
    std::string q = PresignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime(),
                              std::chrono::seconds(3600));
    OwnedRequest r;
    r.method = "GET";
    r.raw_path = shape.path;
    r.raw_query = q;
    r.headers = {{"Host", "bucket.localhost:9000"}, {"User-Agent", "browser"}};
    Result<AuthResult> res = Verify(r);
    ASSERT_TRUE(res.ok()) << shape.path << "?" << q << ": " << res.error().message;
    EXPECT_EQ(res->payload, PayloadMode::kUnsigned);

    OwnedRequest t = r;
    t.method = "PUT";
    ExpectMismatch(t, "method");
    t = r;
    t.raw_path = std::string(shape.path) + "2";
    ExpectMismatch(t, "path");
    t = r;
    t.raw_query = q + "&extra=1";
    ExpectMismatch(t, "query added");
    t = r;
    std::string longer = q;
    longer.replace(longer.find("X-Amz-Expires=3600"), 18, "X-Amz-Expires=7200");
    t.raw_query = longer;
    ExpectMismatch(t, "expiry");
    t = r;
    t.Set("Host", "other.localhost:9000");
    ExpectMismatch(t, "host");

    clock_.Set(ExampleTime() + std::chrono::seconds(3601));
    Result<AuthResult> late = Verify(r);
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.error().code, ErrorCode::kExpiredPresignedRequest);
    clock_.Set(ExampleTime());
  }
}

TEST_F(RoundTrip, PresignWithSignedHeadersAndPayload) {
  SignRequest s;
  s.method = "PUT";
  s.raw_path = "/bucket/key";
  s.headers = {{"host", "localhost"}, {"Content-Type", "image/png"}};
  s.payload_sha256 = Sha256Hex("body");
  std::string q =
      PresignV4(s, ExampleCredential(), "us-east-1", "s3", ExampleTime(), std::chrono::seconds(60));
  EXPECT_NE(q.find("X-Amz-SignedHeaders=content-type%3Bhost"), std::string::npos) << q;
  EXPECT_NE(q.find("X-Amz-Content-Sha256="), std::string::npos) << q;
  OwnedRequest r;
  r.method = "PUT";
  r.raw_path = "/bucket/key";
  r.raw_query = q;
  r.headers = {{"Host", "localhost"}, {"Content-Type", "image/png"}};
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
  r.Set("Content-Type", "image/gif");
  ExpectMismatch(r, "content-type");
}

}  // namespace
}  // namespace strata::auth
