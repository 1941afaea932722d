// SigV2 (header "AWS key:sig" and query AWSAccessKeyId/Signature/Expires), checked against
// the S3 developer guide's "Signing and authenticating REST requests" examples. The guide
// later renamed the example bucket "johnsmith" to "awsexamplebucket1" without recomputing
// the signatures; the published signatures are those of "johnsmith", used here.
#include <gtest/gtest.h>

#include <string>

#include "auth/internal/crypto.h"
#include "auth/signer.h"
#include "auth/verifier.h"
#include "tests/unit/auth/test_util.h"

namespace strata::auth {
namespace {

using testing::ExampleStore;
using testing::FromUnix;
using testing::OwnedRequest;

class SigV2Test : public ::testing::Test {
 protected:
  SigV2Test() : store_(ExampleStore()), clock_(FromUnix(1175024202)) {}

  Result<AuthResult> Verify(const OwnedRequest& r) {
    Verifier v(store_, clock_, {});
    return v.Verify(r.View());
  }
  ErrorCode Code(const OwnedRequest& r) {
    Result<AuthResult> res = Verify(r);
    EXPECT_FALSE(res.ok());
    return res.ok() ? ErrorCode::kInternal : res.error().code;
  }

  MemCredentialStore store_;
  FakeClock clock_;
};

std::string SignV2(const std::string& string_to_sign) {
  internal::Digest20 mac = internal::HmacSha1(testing::kExampleSecret, string_to_sign);
  return internal::Base64Encode(mac.data(), mac.size());
}

OwnedRequest PuppyGet() {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/photos/puppy.jpg";
  r.virtual_host_bucket = "johnsmith";
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"},
               {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"},
               {"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMU="}};
  return r;
}

TEST_F(SigV2Test, AwsExampleObjectGet) {
  Result<AuthResult> r = Verify(PuppyGet());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->signature_version, 2);
  EXPECT_EQ(r->payload, PayloadMode::kUnsigned);
  EXPECT_EQ(r->principal.access_key, "AKIAIOSFODNN7EXAMPLE");
}

TEST_F(SigV2Test, PathStyleSignsTheSameResource) {
  OwnedRequest r = PuppyGet();
  r.virtual_host_bucket = "";
  r.raw_path = "/johnsmith/photos/puppy.jpg";
  r.Set("Host", "s3.amazonaws.com");
  EXPECT_TRUE(Verify(r).ok());
}

// botocore signs a path-style request on a bucket as "/bucket/" while it sends "/bucket"
// (ceph/s3-tests' SigV2 CreateBucket and PutBucketPolicy): accepted, for a bucket only.
TEST_F(SigV2Test, BotocoreBucketResourceWithItsSlash) {
  OwnedRequest r;
  r.method = "PUT";
  r.raw_path = "/johnsmith";
  r.raw_query = "policy";
  const std::string date = "Tue, 27 Mar 2007 19:36:42 +0000";
  r.headers = {{"Host", "s3.amazonaws.com"},
               {"Date", date},
               {"Authorization",
                "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2("PUT\n\n\n" + date + "\n/johnsmith/?policy")}};
  EXPECT_TRUE(Verify(r).ok());
  r.Set("Authorization",
        "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2("PUT\n\n\n" + date + "\n/johnsmith?policy"));
  EXPECT_TRUE(Verify(r).ok());
  // Only a bucket: a key's resource is exactly its path.
  r.raw_path = "/johnsmith/k";
  r.raw_query = "";
  r.Set("Authorization",
        "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2("PUT\n\n\n" + date + "\n/johnsmith/k/"));
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
  // The query form too.
  r.raw_path = "/johnsmith";
  r.headers = {{"Host", "s3.amazonaws.com"}};
  r.raw_query = "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=" +
                UriEncode(SignV2("GET\n\n\n1175139620\n/johnsmith/"), true);
  r.method = "GET";
  EXPECT_TRUE(Verify(r).ok());
}

TEST_F(SigV2Test, AwsExampleAclSubresource) {
  clock_.Set(FromUnix(1175024686));
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/";
  r.raw_query = "acl";
  r.virtual_host_bucket = "johnsmith";
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"},
               {"Date", "Tue, 27 Mar 2007 19:44:46 +0000"},
               {"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:c2WLPFtWHVgbEmeEG93a4cG37dM="}};
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
}

TEST_F(SigV2Test, AwsExampleUploadWithAmzHeaders) {
  clock_.Set(FromUnix(1175029568));
  OwnedRequest r;
  r.method = "PUT";
  r.raw_path = "/db-backup.dat.gz";
  r.virtual_host_bucket = "static.johnsmith.net";
  r.headers = {{"User-Agent", "curl/7.15.5"},
               {"Host", "static.johnsmith.net:8080"},
               {"Date", "Tue, 27 Mar 2007 21:06:08 +0000"},
               {"x-amz-acl", "public-read"},
               {"content-type", "application/x-download"},
               {"Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="},
               {"X-Amz-Meta-ReviewedBy", "joe@johnsmith.net"},
               {"X-Amz-Meta-ReviewedBy", "jane@johnsmith.net"},
               {"X-Amz-Meta-FileChecksum", "0x02661779"},
               {"X-Amz-Meta-ChecksumAlgorithm", "crc32"},
               {"Content-Disposition", "attachment; filename=database.dat"},
               {"Content-Encoding", "gzip"},
               {"Content-Length", "5913339"},
               {"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:ilyl83RwaSoYIEdixDQcA4OnAnc="}};
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
  r.Set("X-Amz-Meta-FileChecksum", "0x02661778");
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(SigV2Test, AwsExampleDeleteWithXAmzDate) {
  clock_.Set(FromUnix(1175030426));
  OwnedRequest r;
  r.method = "DELETE";
  r.raw_path = "/johnsmith/photos/puppy.jpg";
  r.headers = {{"User-Agent", "dotnet"},
               {"Host", "s3.amazonaws.com"},
               {"Date", "Tue, 27 Mar 2007 21:20:27 +0000"},
               {"x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000"},
               {"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:lx3byBScXR6KzyMaifNkardMwNk="}};
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;

  // The form S3 and most SDKs use: empty Date position, x-amz-date among the amz headers.
  r.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:" +
                             SignV2("DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n"
                                    "/johnsmith/photos/puppy.jpg"));
  res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
  // Signing the ignored Date header instead does not verify.
  r.Set("Authorization",
        "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2("DELETE\n\n\nTue, 27 Mar 2007 21:20:27 +0000\n"
                                             "/johnsmith/photos/puppy.jpg"));
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(SigV2Test, SubresourcesAndResponseOverridesSorted) {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/photos/my%20puppy.jpg";
  r.raw_query =
      "versionId=3HL4kqtJlcpXroDTDmJ%2BrmSpXd3dIbrHY&response-content-type=text%2Fplain&acl&"
      "prefix=ignored&response-content-disposition=attachment%3B%20filename%3Dp.jpg&uploads=";
  r.virtual_host_bucket = "johnsmith";
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"}, {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"}};
  const std::string sts =
      "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/my%20puppy.jpg?acl&"
      "response-content-disposition=attachment; filename=p.jpg&response-content-type=text/plain&"
      "uploads=&versionId=3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY";
  r.headers.emplace_back("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2(sts));
  Result<AuthResult> res = Verify(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
}

TEST_F(SigV2Test, AwsExampleQueryString) {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/photos/puppy.jpg";
  r.raw_query =
      "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires="
      "1175139620";
  r.virtual_host_bucket = "johnsmith";
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"}};
  Result<AuthResult> res = Verify(r);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->signature_version, 2);
  EXPECT_EQ(res->payload, PayloadMode::kUnsigned);
  // Query authentication ignores Date entirely, including skew.
  r.headers.emplace_back("Date", "Mon, 01 Jan 2001 00:00:00 GMT");
  EXPECT_TRUE(Verify(r).ok());

  clock_.Set(FromUnix(1175139620));
  EXPECT_TRUE(Verify(r).ok());
  clock_.Set(FromUnix(1175139621));
  EXPECT_EQ(Code(r), ErrorCode::kExpiredPresignedRequest);
}

// SigV2 signs every x-amz-* header present (issue 17, item 1 holds for SigV4 only): one
// added after signing, to a header-signed request or a presigned URL, breaks the signature.
TEST_F(SigV2Test, AddedAmzHeadersBreakTheSignature) {
  OwnedRequest header_signed = PuppyGet();
  ASSERT_TRUE(Verify(header_signed).ok());
  for (const char* name : {"x-amz-copy-source", "x-amz-meta-owner", "x-amz-tagging", "X-Amz-Acl"}) {
    OwnedRequest r = PuppyGet();
    r.headers.emplace_back(name, "/other/secret");
    EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch) << name;
  }
  OwnedRequest query;
  query.method = "GET";
  query.raw_path = "/photos/puppy.jpg";
  query.raw_query =
      "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires="
      "1175139620";
  query.virtual_host_bucket = "johnsmith";
  query.headers = {{"Host", "johnsmith.s3.amazonaws.com"}};
  ASSERT_TRUE(Verify(query).ok());
  query.headers.emplace_back("x-amz-copy-source", "/other/secret");
  EXPECT_EQ(Code(query), ErrorCode::kSignatureDoesNotMatch);
}

// An Expires past 2262 (what the clock's nanoseconds hold) is simply far in the future:
// it was converted to a time point, a signed overflow (found by
// tests/fuzz/http_request_fuzz.cc; UBSan aborts on it).
TEST_F(SigV2Test, QueryStringExpiresFarInTheFuture) {
  for (const char* expires : {"9999999999", "999999999999999999"}) {
    OwnedRequest r;
    r.method = "GET";
    r.raw_path = "/photos/puppy.jpg";
    r.virtual_host_bucket = "johnsmith";
    r.headers = {{"Host", "johnsmith.s3.amazonaws.com"}};
    std::string signature =
        SignV2(std::string("GET\n\n\n") + expires + "\n/johnsmith/photos/puppy.jpg");
    std::string escaped;
    for (char c : signature) {
      escaped += c == '+' ? "%2B" : c == '/' ? "%2F" : c == '=' ? "%3D" : std::string(1, c);
    }
    r.raw_query =
        "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=" + escaped + "&Expires=" + expires;
    Result<AuthResult> res = Verify(r);
    EXPECT_TRUE(res.ok()) << expires << ": " << res.error().message;
  }
}

TEST_F(SigV2Test, QueryStringFailures) {
  OwnedRequest r;
  r.method = "GET";
  r.raw_path = "/photos/puppy.jpg";
  r.virtual_host_bucket = "johnsmith";
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"}};
  r.raw_query = "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D";
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.raw_query = "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620";
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.raw_query = "Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620";
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.raw_query =
      "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&"
      "Expires=soon";
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.raw_query =
      "AWSAccessKeyId=AKIDNOBODY&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&"
      "Expires=1175139620";
  EXPECT_EQ(Code(r), ErrorCode::kInvalidAccessKeyId);
  r.raw_query =
      "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn9%3D&"
      "Expires=1175139620";
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
  // Tampered path.
  r.raw_query =
      "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&"
      "Expires=1175139620";
  r.raw_path = "/photos/kitten.jpg";
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
}

TEST_F(SigV2Test, HeaderFailures) {
  for (const char* auth :
       {"AWS AKIAIOSFODNN7EXAMPLE", "AWS :sig", "AWS AKIAIOSFODNN7EXAMPLE:", "AWS "}) {
    OwnedRequest r = PuppyGet();
    r.Set("Authorization", auth);
    EXPECT_EQ(Code(r), ErrorCode::kInvalidArgument) << auth;
  }
  OwnedRequest r = PuppyGet();
  r.Set("Authorization", "AWS AKIDNOBODY:bWq2s1WEIj+Ydj0vQ697zp+IXMU=");
  EXPECT_EQ(Code(r), ErrorCode::kInvalidAccessKeyId);
  r = PuppyGet();
  r.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:bWq2s1WEIj+Ydj0vQ697zp+IXMV=");
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
  r = PuppyGet();
  r.method = "PUT";
  EXPECT_EQ(Code(r), ErrorCode::kSignatureDoesNotMatch);
  r = PuppyGet();
  r.Remove("Date");
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  r.Set("Date", "27/03/2007");
  EXPECT_EQ(Code(r), ErrorCode::kAccessDenied);
  clock_.Set(FromUnix(1175024202 + 16 * 60));
  EXPECT_EQ(Code(PuppyGet()), ErrorCode::kRequestTimeTooSkewed);
}

TEST_F(SigV2Test, HttpDateFormats) {
  // RFC 1123 with GMT, RFC 850 and asctime all name the same instant.
  for (const char* date : {"Tue, 27 Mar 2007 19:36:42 GMT", "Tuesday, 27-Mar-07 19:36:42 GMT",
                           "Tue Mar 27 19:36:42 2007", "Tue, 27 Mar 2007 21:36:42 +0200"}) {
    OwnedRequest r = PuppyGet();
    r.Set("Date", date);
    r.Set("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:" + SignV2(std::string("GET\n\n\n") + date +
                                                                "\n/johnsmith/photos/puppy.jpg"));
    Result<AuthResult> res = Verify(r);
    EXPECT_TRUE(res.ok()) << date << ": " << res.error().message;
  }
}

}  // namespace
}  // namespace strata::auth
