// Verifier: AWS's published SigV4 and SigV2 examples byte for byte, and every way a
// client can get the header or the query wrong.
#include "auth/verifier.h"

#include <gtest/gtest.h>

#include <string>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "auth/signer.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleStore;
using testing::ExampleTime;
using testing::FromUnix;
using testing::kEmptySha;
using testing::OwnedRequest;
using testing::StreamingExample;

constexpr const char* kHost = "examplebucket.s3.amazonaws.com";

class VerifierTest : public ::testing::Test {
 protected:
  VerifierTest() : store_(ExampleStore()), clock_(ExampleTime()) {}

  Result<AuthResult> Verify(const OwnedRequest& r, VerifierOptions options = {}) {
    Verifier v(store_, clock_, std::move(options));
    return v.Verify(r.View());
  }

  ErrorCode Code(const OwnedRequest& r, VerifierOptions options = {}) {
    Result<AuthResult> res = Verify(r, std::move(options));
    EXPECT_FALSE(res.ok());
    return res.ok() ? ErrorCode::kInternal : res.error().code;
  }

  MemCredentialStore store_;
  FakeClock clock_;
};

// ---------------------------------------------------------------------------------------
// The S3 API reference's "Signature Calculations for the Authorization Header" examples.

OwnedRequest GetObjectExample() {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/test.txt";
  r.headers = {
      {"Host", kHost},
      {"Authorization",
       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
       "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
       "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
      {"Range", "bytes=0-9"},
      {"x-amz-content-sha256", kEmptySha},
      {"x-amz-date", "20130524T000000Z"},
  };
  return r;
}

TEST_F(VerifierTest, AwsExampleGetObject) {
  Result<AuthResult> r = Verify(GetObjectExample());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->principal.access_key, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(r->signature_version, 4);
  EXPECT_EQ(r->payload, PayloadMode::kSignedSha256);
  EXPECT_EQ(r->expected_sha256, kEmptySha);
  EXPECT_EQ(r->decoded_content_length, -1);
}

TEST_F(VerifierTest, AwsExamplePutObject) {
  for (const char* path : {"/test%24file.text", "/test$file.text"}) {
    OwnedRequest r;
    r.method = "PUT";
    r.raw_path = path;
    r.headers = {
        {"Host", kHost},
        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
         "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
         "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"},
        {"x-amz-date", "20130524T000000Z"},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"x-amz-content-sha256",
         "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"},
    };
    Result<AuthResult> res = Verify(r);
    ASSERT_TRUE(res.ok()) << path << ": " << res.error().message;
    EXPECT_EQ(res->payload, PayloadMode::kSignedSha256);
    EXPECT_EQ(res->expected_sha256, Sha256Hex("Welcome to Amazon S3."));
  }
}

OwnedRequest BucketExample(const std::string& query, const std::string& signature) {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/";
  r.raw_query = query;
  r.headers = {
      {"Host", kHost},
      {"Authorization",
       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
       "SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=" +
           signature},
      {"x-amz-date", "20130524T000000Z"},
      {"x-amz-content-sha256", kEmptySha},
  };
  return r;
}

TEST_F(VerifierTest, AwsExampleGetBucketLifecycle) {
  Result<AuthResult> r = Verify(BucketExample(
      "lifecycle", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"));
  ASSERT_TRUE(r.ok()) << r.error().message;
}

TEST_F(VerifierTest, AwsExampleListObjects) {
  Result<AuthResult> r = Verify(BucketExample(
      "max-keys=2&prefix=J", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The canonical query is sorted, so the order on the wire does not matter.
  r = Verify(BucketExample("prefix=J&max-keys=2",
                           "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
  ASSERT_TRUE(r.ok()) << r.error().message;
}

OwnedRequest PresignedExample() {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/test.txt";
  r.raw_query =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
      "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
      "SignedHeaders=host&X-Amz-Signature="
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
  r.headers = {{"Host", kHost}};
  return r;
}

TEST_F(VerifierTest, AwsExamplePresignedUrl) {
  Result<AuthResult> r = Verify(PresignedExample());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->payload, PayloadMode::kUnsigned);
  EXPECT_EQ(r->signature_version, 4);
  // Valid until the last second of its 86400.
  clock_.Set(ExampleTime() + std::chrono::seconds(86400));
  EXPECT_TRUE(Verify(PresignedExample()).ok());
  clock_.Set(ExampleTime() + std::chrono::seconds(86401));
  EXPECT_EQ(Code(PresignedExample()), ErrorCode::kExpiredPresignedRequest);
}

TEST_F(VerifierTest, AwsExampleStreamingSeedSignature) {
  Result<AuthResult> r = Verify(StreamingExample());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->payload, PayloadMode::kStreamingSigned);
  EXPECT_EQ(r->decoded_content_length, 66560);
  EXPECT_EQ(r->chunk.seed_signature,
            "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9");
  EXPECT_EQ(r->chunk.amz_date, "20130524T000000Z");
  EXPECT_EQ(r->chunk.scope, "20130524/us-east-1/s3/aws4_request");
  internal::Digest32 key =
      internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3");
  EXPECT_EQ(r->chunk.signing_key, key);
}

// ---------------------------------------------------------------------------------------
// Header parsing tolerance.

TEST_F(VerifierTest, AuthorizationSpacingVariants) {
  const std::string cred = "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request";
  const std::string sh = "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date";
  const std::string sig =
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
  for (const std::string& auth : {
           "AWS4-HMAC-SHA256 " + cred + ", " + sh + ", " + sig,
           "AWS4-HMAC-SHA256 " + cred + " , " + sh + " ,  " + sig,
           "  AWS4-HMAC-SHA256   " + cred + "," + sh + "," + sig + "  ",
           "AWS4-HMAC-SHA256 " + sig + "," + cred + "," + sh,
           "AWS4-HMAC-SHA256 " + cred + ",\t" + sh + ",\t" + sig,
           "AWS4-HMAC-SHA256 " + cred + ", " + sh + ", " +
               "Signature=F0E8BDB87C964420E857BD35B5D6ED310BD44F0170ABA48DD91039C6036BDB41",
       }) {
    OwnedRequest r = GetObjectExample();
    r.Set("Authorization", auth);
    Result<AuthResult> res = Verify(r);
    EXPECT_TRUE(res.ok()) << auth << ": " << res.error().message;
  }
}

TEST_F(VerifierTest, HeaderNamesAreCaseInsensitiveAndValuesCanonicalized) {
  OwnedRequest r = GetObjectExample();
  r.headers = {
      {"HOST", std::string("  ") + kHost + " "},
      {"authorization", GetObjectExample().headers[1].second},
      {"RANGE", "bytes=0-9"},
      {"X-Amz-Content-Sha256", kEmptySha},
      {"X-AMZ-DATE", "20130524T000000Z"},
  };
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
}

TEST_F(VerifierTest, MalformedAuthorizationHeader) {
  const std::string cred = "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request";
  const std::string sh = "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date";
  const std::string sig =
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
  const std::string alg = "AWS4-HMAC-SHA256 ";
  for (const std::string& auth : {
           alg + sh + ", " + sig,            // no Credential
           alg + cred + ", " + sig,          // no SignedHeaders
           alg + cred + ", " + sh,           // no Signature
           std::string("AWS4-HMAC-SHA256"),  // nothing at all
           alg + "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3, " + sh + ", " + sig,
           alg + "Credential=AKIAIOSFODNN7EXAMPLE, " + sh + ", " + sig,
           alg + "Credential=/20130524/us-east-1/s3/aws4_request, " + sh + ", " + sig,
           alg + "Credential=AKIAIOSFODNN7EXAMPLE//us-east-1/s3/aws4_request, " + sh + ", " + sig,
           alg + "Credential=, " + sh + ", " + sig,
           alg + cred + ", SignedHeaders=, " + sig,
           alg + cred + ", SignedHeaders=range;x-amz-date, " + sig,  // host unsigned
           alg + cred + ", SignedHeaders=host;;x-amz-date, " + sig,
           alg + cred + ", " + sh + ", Signature=f0e8",
           alg + cred + ", " + sh + ", Signature=",
           alg + cred + ", " + sh +
               ", Signature=z0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
           alg + cred + ", " + sh + ", " + sig + ", Extra=1",
           alg + cred + ", " + cred + ", " + sh + ", " + sig,
           alg + cred + " " + sh + " " + sig + " garbage",
           alg + "Credential=AKIAIOSFODNN7EXAMPLE/2013052/us-east-1/s3/aws4_request, " + sh + ", " +
               sig,  // bad scope date
           alg + "Credential=AKIAIOSFODNN7EXAMPLE/20130525/us-east-1/s3/aws4_request, " + sh +
               ", " + sig,  // date mismatch
           alg + "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/ec2/aws4_request, " + sh +
               ", " + sig,  // wrong service
           alg + "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws5_request, " + sh +
               ", " + sig,  // wrong terminator
       }) {
    OwnedRequest r = GetObjectExample();
    r.Set("Authorization", auth);
    Result<AuthResult> res = Verify(r);
    ASSERT_FALSE(res.ok()) << auth;
    EXPECT_EQ(res.error().code, ErrorCode::kAuthorizationHeaderMalformed) << auth;
  }
}

TEST_F(VerifierTest, WrongRegionNamesBoth) {
  OwnedRequest r = GetObjectExample();
  r.Set("Authorization",
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/eu-west-1/s3/aws4_request,"
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  Result<AuthResult> res = Verify(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_NE(res.error().message.find("the region 'eu-west-1' is wrong; expecting 'us-east-1'"),
            std::string::npos)
      << res.error().message;
  // A gateway configured for eu-west-1 refuses the us-east-1 example the same way.
  VerifierOptions eu;
  eu.region = "eu-west-1";
  res = Verify(GetObjectExample(), eu);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message.find("the region 'us-east-1' is wrong; expecting 'eu-west-1'"),
            std::string::npos);
}

TEST_F(VerifierTest, WrongAlgorithmIsUnsupported) {
  for (const char* auth :
       {"AWS4-HMAC-SHA512 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        "SignedHeaders=host,Signature="
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
        "AWS4-HMAC-SHA256Credential=x", "Bearer abc", "", "AWS4-ECDSA-P256-SHA256 Credential=x"}) {
    OwnedRequest r = GetObjectExample();
    r.Set("Authorization", auth);
    EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument) << auth;
  }
}

TEST_F(VerifierTest, BadOrMissingDate) {
  for (const char* date : {"2013-05-24T00:00:00Z", "20130524T000000", "20131324T000000Z",
                           "20130524T250000Z", "", "yesterday"}) {
    OwnedRequest r = GetObjectExample();
    r.Set("x-amz-date", date);
    EXPECT_EQ(Code(r), ErrorCode::kAccessDenied) << date;
  }
  OwnedRequest r = GetObjectExample();
  r.Remove("x-amz-date");
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.Set("Date", "not a date");
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
}

TEST_F(VerifierTest, DateHeaderStandsInForXAmzDate) {
  // Signed by hand: no x-amz-date, the time comes from Date and is signed in ISO form.
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/photos/a%20b.jpg";
  r.headers = {{"Host", kHost},
               {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
               {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}};
  std::string canonical =
      "GET\n/photos/a%20b.jpg\n\ndate:Fri, 24 May 2013 00:00:00 GMT\nhost:" + std::string(kHost) +
      "\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n\ndate;host;x-amz-content-sha256\n"
      "UNSIGNED-PAYLOAD";
  internal::Digest32 key =
      internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3");
  std::string sig = internal::HexLower(internal::HmacSha256(
      internal::AsView(key),
      internal::StringToSignV4("20130524T000000Z", "20130524/us-east-1/s3/aws4_request",
                               canonical)));
  r.headers.emplace_back("Authorization",
                         "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                         "aws4_request, SignedHeaders=date;host;x-amz-content-sha256, Signature=" +
                             sig);
  Result<AuthResult> res = Verify(r);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->payload, PayloadMode::kUnsigned);
}

TEST_F(VerifierTest, ClockSkew) {
  clock_.Set(ExampleTime() + std::chrono::minutes(14));
  EXPECT_TRUE(Verify(GetObjectExample()).ok());
  clock_.Set(ExampleTime() - std::chrono::minutes(14));
  EXPECT_TRUE(Verify(GetObjectExample()).ok());
  clock_.Set(ExampleTime() + std::chrono::minutes(16));
  EXPECT_EQ(Code(GetObjectExample()), ErrorCode::kRequestTimeTooSkewed);
  clock_.Set(ExampleTime() - std::chrono::minutes(16));
  EXPECT_EQ(Code(GetObjectExample()), ErrorCode::kRequestTimeTooSkewed);
  VerifierOptions tight;
  tight.max_skew = std::chrono::seconds(30);
  clock_.Set(ExampleTime() + std::chrono::seconds(31));
  EXPECT_EQ(Code(GetObjectExample(), tight), ErrorCode::kRequestTimeTooSkewed);
}

TEST_F(VerifierTest, UnknownAccessKey) {
  MemCredentialStore empty;
  Verifier v(empty, clock_, {});
  Result<AuthResult> r = v.Verify(GetObjectExample().View());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidAccessKeyId);
}

TEST_F(VerifierTest, WrongSecretOrSignature) {
  MemCredentialStore other;
  other.Add(Credential{testing::kExampleAccessKey, "another-secret", false});
  Verifier v(other, clock_, {});
  Result<AuthResult> r = v.Verify(GetObjectExample().View());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kSignatureDoesNotMatch);

  OwnedRequest req = GetObjectExample();
  req.Set("Authorization",
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb42");
  EXPECT_EQ(Code(req), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(VerifierTest, ContentSha256IsRequiredAndChecked) {
  OwnedRequest r = GetObjectExample();
  r.Remove("x-amz-content-sha256");
  EXPECT_EQ(Code(r), ErrorCode::kInvalidRequest);
  for (const char* bad : {"", "abc", "STREAMING-AWS4-HMAC-SHA256", "unsigned-payload",
                          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",
                          "g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}) {
    r.Set("x-amz-content-sha256", bad);
    EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST_F(VerifierTest, AnonymousIsNamedSo) {
  OwnedRequest r;
  r.raw_path = "/bucket/key";
  r.headers = {{"Host", "localhost"}};
  for (std::string query : {"", "versionId=3", "X-Amz-Date=20130524T000000Z"}) {
    r.raw_query = query;
    auto result = Verify(r);
    ASSERT_TRUE(result.ok()) << query;
    EXPECT_TRUE(result->anonymous) << query;
    EXPECT_TRUE(result->principal.access_key.empty()) << query;
    EXPECT_EQ(result->payload, PayloadMode::kUnsigned) << query;
  }
  // A signature of any kind is never anonymous, even a broken one.
  r.raw_query = "X-Amz-Signature=abc";
  EXPECT_FALSE(Verify(r).ok());
  r.raw_query = "AWSAccessKeyId=nobody";
  EXPECT_FALSE(Verify(r).ok());
  r.raw_query = "";
  r.headers.emplace_back("Authorization", "AWS nobody:sig");
  EXPECT_FALSE(Verify(r).ok());
}

TEST_F(VerifierTest, HeaderAndPresignTogetherIsRefused) {
  OwnedRequest r = GetObjectExample();
  r.raw_query = "X-Amz-Signature=abc";
  EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument);
}

// A client that signs the path exactly as it sent it, not re-encoded the S3 way.
TEST_F(VerifierTest, RawPathFallback) {
  for (const char* raw : {"/bucket/caf%c3%a9", "/bucket/a%2Fb", "/bucket/x+y", "/bucket/a%20b"}) {
    OwnedRequest r;
    r.method = "GET";
    r.raw_path = raw;
    r.headers = {{"Host", "localhost:9000"},
                 {"x-amz-date", "20130524T000000Z"},
                 {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}};
    std::string canonical = std::string("GET\n") + raw +
                            "\n\nhost:localhost:9000\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n"
                            "x-amz-date:20130524T000000Z\n\nhost;x-amz-content-sha256;x-amz-date\n"
                            "UNSIGNED-PAYLOAD";
    internal::Digest32 key =
        internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3");
    std::string sig = internal::HexLower(internal::HmacSha256(
        internal::AsView(key),
        internal::StringToSignV4("20130524T000000Z", "20130524/us-east-1/s3/aws4_request",
                                 canonical)));
    r.headers.emplace_back(
        "Authorization",
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" +
            sig);
    Result<AuthResult> res = Verify(r);
    EXPECT_TRUE(res.ok()) << raw << ": " << res.error().message;
  }
}

TEST_F(VerifierTest, StreamingModesAndDecodedLength) {
  struct Case {
    const char* sentinel;
    PayloadMode mode;
  };
  for (const Case& c :
       {Case{"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", PayloadMode::kStreamingSigned},
        Case{"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", PayloadMode::kStreamingSignedTrailer},
        Case{"STREAMING-UNSIGNED-PAYLOAD-TRAILER", PayloadMode::kStreamingUnsignedTrailer},
        Case{"UNSIGNED-PAYLOAD", PayloadMode::kUnsigned}}) {
    SignRequest s;
    s.method = "PUT";
    s.raw_path = "/bucket/key";
    s.headers = {{"host", "localhost"}, {"x-amz-decoded-content-length", "11"}};
    s.payload_sha256 = c.sentinel;
    SignV4(s, testing::ExampleCredential(), "us-east-1", "s3", ExampleTime());
    Result<AuthResult> r = Verify(OwnedRequest::FromSigned(s));
    ASSERT_TRUE(r.ok()) << c.sentinel << ": " << r.error().message;
    EXPECT_EQ(r->payload, c.mode) << c.sentinel;
    if (c.mode == PayloadMode::kUnsigned) {
      EXPECT_EQ(r->decoded_content_length, -1);
      EXPECT_TRUE(r->chunk.seed_signature.empty());
    } else {
      EXPECT_EQ(r->decoded_content_length, 11);
      EXPECT_EQ(r->chunk.seed_signature.size(), 64u);
      EXPECT_EQ(r->chunk.scope, "20130524/us-east-1/s3/aws4_request");
    }
  }
  OwnedRequest r = StreamingExample();
  r.Set("x-amz-decoded-content-length", "-5");
  EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument);
  r.Set("x-amz-decoded-content-length", "12abc");
  EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------
// Presigned URLs.

TEST_F(VerifierTest, PresignedMissingParameters) {
  for (const char* drop : {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                           "X-Amz-SignedHeaders", "X-Amz-Signature"}) {
    OwnedRequest r = PresignedExample();
    std::string q;
    for (const internal::QueryParam& p : internal::ParseQuery(r.raw_query)) {
      if (p.name == drop) {
        continue;
      }
      q += (q.empty() ? "" : "&") + p.name + "=" + UriEncode(p.value, true);
    }
    r.raw_query = q;
    EXPECT_EQ(Code(r), ErrorCode::kAuthorizationQueryParametersError) << drop;
  }
}

std::string ReplaceParam(const std::string& query, const std::string& name,
                         const std::string& value) {
  std::string q;
  for (const internal::QueryParam& p : internal::ParseQuery(query)) {
    q +=
        (q.empty() ? "" : "&") + p.name + "=" + (p.name == name ? value : UriEncode(p.value, true));
  }
  return q;
}

TEST_F(VerifierTest, PresignedMalformedParameters) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (const Case& c : {
           Case{"X-Amz-Algorithm", "AWS4-HMAC-SHA1"},
           Case{"X-Amz-Date", "2013-05-24"},
           Case{"X-Amz-Date", "20130524T000000"},
           Case{"X-Amz-Expires", "0"},
           Case{"X-Amz-Expires", "604801"},
           Case{"X-Amz-Expires", "-1"},
           Case{"X-Amz-Expires", "abc"},
           Case{"X-Amz-Expires", ""},
           Case{"X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3"},
           Case{"X-Amz-Credential",
                "AKIAIOSFODNN7EXAMPLE%2F20130524%2Feu-west-1%2Fs3%2Faws4_request"},
           Case{"X-Amz-Credential",
                "AKIAIOSFODNN7EXAMPLE%2F20130523%2Fus-east-1%2Fs3%2Faws4_request"},
           Case{"X-Amz-Credential",
                "AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fsqs%2Faws4_request"},
           Case{"X-Amz-SignedHeaders", "range"},
           Case{"X-Amz-SignedHeaders", ""},
           Case{"X-Amz-Signature", "abc"},
       }) {
    OwnedRequest r = PresignedExample();
    r.raw_query = ReplaceParam(r.raw_query, c.name, c.value);
    EXPECT_EQ(Code(r), ErrorCode::kAuthorizationQueryParametersError) << c.name << "=" << c.value;
  }
  VerifierOptions short_expiry;
  short_expiry.max_presign_expiry = std::chrono::hours(1);
  EXPECT_EQ(Code(PresignedExample(), short_expiry), ErrorCode::kAuthorizationQueryParametersError);
}

TEST_F(VerifierTest, PresignedOtherFailures) {
  OwnedRequest r = PresignedExample();
  r.raw_query = ReplaceParam(r.raw_query, "X-Amz-Signature",
                             "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d405");
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
  r = PresignedExample();
  r.raw_query = ReplaceParam(r.raw_query, "X-Amz-Credential",
                             "AKIDUNKNOWN%2F20130524%2Fus-east-1%2Fs3%2Faws4_request");
  EXPECT_EQ(Code(r), ErrorCode::kInvalidAccessKeyId);
  // Dated well in the future.
  clock_.Set(ExampleTime() - std::chrono::hours(1));
  EXPECT_EQ(Code(PresignedExample()), ErrorCode::kAccessDenied);
}

// ---------------------------------------------------------------------------------------
// Every x-amz-* header must be signed (issue 17, item 1), in header and query auth.

std::string Detail(const Error& e, std::string_view element) {
  for (const auto& [name, text] : e.details) {
    if (name == element) {
      return text;
    }
  }
  return "<none>";
}

void ExpectHeadersNotSigned(const Result<AuthResult>& r, std::string_view names) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(r.error().message, "There were headers present in the request which were not signed");
  EXPECT_EQ(Detail(r.error(), "HeadersNotSigned"), names);
}

TEST_F(VerifierTest, HeaderAuthRefusesUnsignedAmzHeaders) {
  // AWS's own example stays valid; an x-amz-* header added after signing does not.
  ASSERT_TRUE(Verify(GetObjectExample()).ok());
  OwnedRequest r = GetObjectExample();
  r.headers.emplace_back("x-amz-copy-source", "/other-bucket/secret");
  ExpectHeadersNotSigned(Verify(r), "x-amz-copy-source");
  r.headers.emplace_back("X-Amz-Meta-Owner", "mallory");
  r.headers.emplace_back("x-amz-tagging", "a=b");
  ExpectHeadersNotSigned(Verify(r), "x-amz-copy-source, x-amz-meta-owner, x-amz-tagging");

  // Signed, the same headers are fine.
  SignRequest s;
  s.method = "PUT";
  s.raw_path = "/bucket/key";
  s.headers = {{"host", "localhost"},
               {"x-amz-copy-source", "/other-bucket/key"},
               {"x-amz-meta-owner", "alice"},
               {"x-amz-tagging", "a=b"}};
  SignV4(s, testing::ExampleCredential(), "us-east-1", "s3", ExampleTime());
  OwnedRequest signed_request = OwnedRequest::FromSigned(s);
  ASSERT_TRUE(Verify(signed_request).ok());
  // Headers other than x-amz-* may go unsigned, as on S3.
  signed_request.headers.emplace_back("User-Agent", "curl/7.88");
  signed_request.headers.emplace_back("Content-Type", "text/plain");
  EXPECT_TRUE(Verify(signed_request).ok());
  signed_request.headers.emplace_back("x-amz-storage-class", "GLACIER");
  ExpectHeadersNotSigned(Verify(signed_request), "x-amz-storage-class");
}

TEST_F(VerifierTest, HeaderAuthNeedNotNameContentSha256) {
  // x-amz-content-sha256 is signed as the payload hash; AWS does not insist on the name.
  // Signed by hand with SignedHeaders leaving x-amz-content-sha256 out.
  OwnedRequest bare;
  bare.method = "GET";
  bare.raw_path = "/bucket/key";
  bare.headers = {{"host", "localhost"}, {"x-amz-date", "20130524T000000Z"}};
  std::string canonical = internal::CanonicalRequestV4(
      "GET", "/bucket/key", "", {{"host", "localhost"}, {"x-amz-date", "20130524T000000Z"}},
      "host;x-amz-date", kEmptySha);
  std::string sig = internal::HexLower(internal::HmacSha256(
      internal::AsView(
          internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3")),
      internal::StringToSignV4("20130524T000000Z", "20130524/us-east-1/s3/aws4_request",
                               canonical)));
  bare.headers.emplace_back("x-amz-content-sha256", kEmptySha);
  bare.headers.emplace_back(
      "Authorization",
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
      "SignedHeaders=host;x-amz-date,Signature=" +
          sig);
  Result<AuthResult> ok = Verify(bare);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  // A changed value still breaks the signature.
  bare.Set("x-amz-content-sha256", std::string(64, 'a'));
  EXPECT_EQ(Code(bare), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(VerifierTest, PresignedRefusesUnsignedAmzHeaders) {
  // The attack of issue 17: a presigned PUT URL plus an unsigned x-amz-copy-source.
  SignRequest s;
  s.method = "PUT";
  s.raw_path = "/bucket/upload-here";
  s.headers = {{"host", "localhost"}};
  s.raw_query = PresignV4(s, testing::ExampleCredential(), "us-east-1", "s3", ExampleTime(),
                          std::chrono::seconds(3600));
  OwnedRequest r = OwnedRequest::FromSigned(s);
  ASSERT_TRUE(Verify(r).ok());
  r.headers.emplace_back("x-amz-copy-source", "/victim/secret");
  ExpectHeadersNotSigned(Verify(r), "x-amz-copy-source");
  r.Remove("x-amz-copy-source");
  r.headers.emplace_back("x-amz-meta-owner", "mallory");
  ExpectHeadersNotSigned(Verify(r), "x-amz-meta-owner");
  // x-amz-date as a header is not the X-Amz-Date parameter: unsigned too.
  r.Remove("x-amz-meta-owner");
  r.headers.emplace_back("x-amz-date", "20130524T000000Z");
  ExpectHeadersNotSigned(Verify(r), "x-amz-date");
  // The AWS presigned example with an unsigned header.
  OwnedRequest example = PresignedExample();
  example.headers.emplace_back("x-amz-tagging", "a=b");
  ExpectHeadersNotSigned(Verify(example), "x-amz-tagging");

  // Headers the URL signs are fine.
  SignRequest with_meta;
  with_meta.method = "PUT";
  with_meta.raw_path = "/bucket/upload-here";
  with_meta.headers = {{"host", "localhost"}, {"x-amz-meta-owner", "alice"}};
  with_meta.raw_query = PresignV4(with_meta, testing::ExampleCredential(), "us-east-1", "s3",
                                  ExampleTime(), std::chrono::seconds(3600));
  Result<AuthResult> ok = Verify(OwnedRequest::FromSigned(with_meta));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  // An unsigned x-amz-content-sha256 is exempt here as well: it is the payload hash.
  OwnedRequest unsigned_payload = OwnedRequest::FromSigned(s);
  unsigned_payload.headers.emplace_back("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
  EXPECT_TRUE(Verify(unsigned_payload).ok());
  unsigned_payload.Set("x-amz-content-sha256", kEmptySha);
  EXPECT_EQ(Code(unsigned_payload), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(VerifierTest, WrongRegionNamesTheExpectedOne) {
  // s3cmd signs for "US" by default and re-signs for what <Region> says.
  SignRequest s;
  s.method = "GET";
  s.raw_path = "/";
  s.headers = {{"host", "localhost"}};
  SignV4(s, testing::ExampleCredential(), "US", "s3", ExampleTime());
  Result<AuthResult> r = Verify(OwnedRequest::FromSigned(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kAuthorizationHeaderMalformed);
  EXPECT_EQ(r.error().message,
            "The authorization header is malformed; the region 'US' is wrong; expecting "
            "'us-east-1'");
  EXPECT_EQ(Detail(r.error(), "Region"), "us-east-1");
  VerifierOptions eu;
  eu.region = "eu-west-1";
  Result<AuthResult> r2 = Verify(OwnedRequest::FromSigned(s), eu);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(Detail(r2.error(), "Region"), "eu-west-1");

  OwnedRequest q = PresignedExample();
  q.raw_query = ReplaceParam(q.raw_query, "X-Amz-Credential",
                             "AKIAIOSFODNN7EXAMPLE%2F20130524%2Feu-west-1%2Fs3%2Faws4_request");
  Result<AuthResult> r3 = Verify(q);
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.error().code, ErrorCode::kAuthorizationQueryParametersError);
  EXPECT_EQ(Detail(r3.error(), "Region"), "us-east-1");
  // Other scope errors name no region.
  OwnedRequest svc = PresignedExample();
  svc.raw_query = ReplaceParam(svc.raw_query, "X-Amz-Credential",
                               "AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fsqs%2Faws4_request");
  Result<AuthResult> r4 = Verify(svc);
  ASSERT_FALSE(r4.ok());
  EXPECT_TRUE(r4.error().details.empty());
}

// ---------------------------------------------------------------------------------------
// Signing key cache.

TEST(SigningKeyCache, MatchesDerivationAndStaysBounded) {
  internal::Digest32 direct =
      internal::DeriveSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3");
  EXPECT_EQ(internal::CachedSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3"),
            direct);
  EXPECT_EQ(internal::CachedSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3"),
            direct);
  EXPECT_NE(internal::CachedSigningKey("other", "20130524", "us-east-1", "s3"), direct);
  for (int i = 0; i < 3 * static_cast<int>(internal::kSigningKeyCacheCapacity); ++i) {
    (void)internal::CachedSigningKey(testing::kExampleSecret, std::to_string(20000000 + i),
                                     "us-east-1", "s3");
    EXPECT_LE(internal::SigningKeyCacheSizeForTest(), internal::kSigningKeyCacheCapacity);
  }
  EXPECT_EQ(internal::CachedSigningKey(testing::kExampleSecret, "20130524", "us-east-1", "s3"),
            direct);
}

}  // namespace
}  // namespace strata::auth
