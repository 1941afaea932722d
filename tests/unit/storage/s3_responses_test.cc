#include "storage/upstream/s3_responses.h"

#include <gtest/gtest.h>

namespace strata::storage::upstream {
namespace {

TEST(EndpointTest, ParsesSchemesHostsAndPorts) {
  auto plain = Endpoint::Parse("http://127.0.0.1:5055");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, "5055");
  EXPECT_EQ(plain->HostHeader(), "127.0.0.1:5055");

  auto tls = Endpoint::Parse("https://s3.us-west-2.amazonaws.com/");
  ASSERT_TRUE(tls.ok()) << tls.error().message;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, "443");
  EXPECT_EQ(tls->HostHeader(), "s3.us-west-2.amazonaws.com");

  auto v6 = Endpoint::Parse("http://[::1]:9000");
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->HostHeader(), "[::1]:9000");
}

TEST(EndpointTest, RefusesWhatIsNoEndpoint) {
  for (const char* url :
       {"", "127.0.0.1:9000", "ftp://host", "http://", "http://host/path", "http://host:0",
        "http://host:65536", "http://host:12x", "http://user@host", "http://[::1", "http://[::1]x",
        "http://host?x=1", "http://:80"}) {
    auto parsed = Endpoint::Parse(url);
    EXPECT_FALSE(parsed.ok()) << url;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << url;
    }
  }
}

TEST(UpstreamErrorTest, RetriesOnlyWhatARetryMayCure) {
  EXPECT_TRUE(UpstreamError(503, "SlowDown", "").retryable);
  EXPECT_TRUE(UpstreamError(500, "InternalError", "").retryable);
  EXPECT_TRUE(UpstreamError(502, "", "").retryable);
  EXPECT_TRUE(UpstreamError(504, "", "").retryable);
  EXPECT_TRUE(UpstreamError(400, "RequestTimeout", "").retryable);
  EXPECT_FALSE(UpstreamError(400, "InvalidArgument", "").retryable);
  EXPECT_FALSE(UpstreamError(403, "AccessDenied", "").retryable);
  EXPECT_FALSE(UpstreamError(404, "NoSuchKey", "").retryable);
  EXPECT_FALSE(UpstreamError(412, "PreconditionFailed", "").retryable);
}

TEST(UpstreamErrorTest, MapsS3CodesToStrataCodes) {
  EXPECT_EQ(UpstreamError(404, "NoSuchKey", "").code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(UpstreamError(404, "", "").code, ErrorCode::kNoSuchKey);  // HEAD has no body
  EXPECT_EQ(UpstreamError(404, "NoSuchBucket", "").code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(UpstreamError(404, "NoSuchUpload", "").code, ErrorCode::kNoSuchUpload);
  EXPECT_EQ(UpstreamError(409, "BucketAlreadyOwnedByYou", "").code,
            ErrorCode::kBucketAlreadyOwnedByYou);
  EXPECT_EQ(UpstreamError(412, "", "").code, ErrorCode::kPreconditionFailed);
  EXPECT_EQ(UpstreamError(403, "SignatureDoesNotMatch", "").code, ErrorCode::kAccessDenied);
  EXPECT_EQ(UpstreamError(503, "SlowDown", "").code, ErrorCode::kUnavailable);
  auto other = UpstreamError(400, "InvalidArgument", "bad thing");
  EXPECT_EQ(other.code, ErrorCode::kInvalidRequest);
  EXPECT_NE(other.message.find("bad thing"), std::string::npos);
}

TEST(ErrorBodyTest, ReadsCodeAndMessageAndToleratesJunk) {
  auto [code, message] = ParseErrorBody(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>gone</Message>"
      "<Key>k</Key></Error>");
  EXPECT_EQ(code, "NoSuchKey");
  EXPECT_EQ(message, "gone");
  for (const char* junk : {"", "not xml", "<Error>", "<Other><Code>X</Code></Other>",
                           "<html><body>502 Bad Gateway</body></html>"}) {
    auto [c, m] = ParseErrorBody(junk);
    EXPECT_EQ(c, "") << junk;
  }
}

TEST(ListResponsesTest, ParsesAListingPage) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>tok</NextContinuationToken>"
      "<Contents><Key>a/1</Key><Size>12</Size><ETag>\"e\"</ETag>"
      "<LastModified>2026-01-01T00:00:00.000Z</LastModified>"
      "<StorageClass>STANDARD</StorageClass></Contents>"
      "<CommonPrefixes><Prefix>b/</Prefix></CommonPrefixes></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "a/1");
  EXPECT_EQ(page->objects[0].size, 12u);
  EXPECT_EQ(page->objects[0].etag, "\"e\"");
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"b/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok");
}

TEST(ListResponsesTest, RefusesNonsenseAsCorruption) {
  for (const char* junk :
       {"", "<ListBucketResult>", "<Error><Code>X</Code></Error>",
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>1x</Size></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"}) {
    auto page = ParseListObjectsV2(junk);
    EXPECT_FALSE(page.ok()) << junk;
    if (!page.ok()) {
      EXPECT_EQ(page.error().code, ErrorCode::kCorruption) << junk;
    }
  }
}

TEST(ListResponsesTest, ParsesBucketsAndRefusesNamelessOnes) {
  auto buckets = ParseListBuckets(
      "<ListAllMyBucketsResult><Owner><ID>x</ID></Owner><Buckets>"
      "<Bucket><Name>one</Name><CreationDate>2026-01-01T00:00:00Z</CreationDate></Bucket>"
      "<Bucket><Name>two</Name></Bucket></Buckets></ListAllMyBucketsResult>");
  ASSERT_TRUE(buckets.ok()) << buckets.error().message;
  ASSERT_EQ(buckets->size(), 2u);
  EXPECT_EQ((*buckets)[1].name, "two");
  EXPECT_FALSE(ParseListBuckets("<ListAllMyBucketsResult><Buckets><Bucket></Bucket></Buckets>"
                                "</ListAllMyBucketsResult>")
                   .ok());
}

TEST(MultipartResponsesTest, UploadIdCompletionAndItsHiddenErrors) {
  auto id = ParseUploadId(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>u-1</UploadId>"
      "</InitiateMultipartUploadResult>");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "u-1");
  EXPECT_FALSE(ParseUploadId("<InitiateMultipartUploadResult/>").ok());

  auto etag = ParseCompleteResult(
      "<CompleteMultipartUploadResult><ETag>\"abc-2\"</ETag></CompleteMultipartUploadResult>");
  ASSERT_TRUE(etag.ok());
  EXPECT_EQ(*etag, "\"abc-2\"");
  auto moto = ParseCompleteResult(
      "<CompleteMultipartUploadResponse><ETag>\"m-2\"</ETag></CompleteMultipartUploadResponse>");
  ASSERT_TRUE(moto.ok());
  EXPECT_EQ(*moto, "\"m-2\"");
  EXPECT_FALSE(ParseCompleteResult("<CompleteMultipartUploadResult/>").ok());
  // S3 may answer 200 and put the failure in the body.
  auto failed = ParseCompleteResult("<Error><Code>InternalError</Code></Error>");
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.error().retryable);
  auto refused = ParseCompleteResult("<Error><Code>InvalidPart</Code></Error>");
  ASSERT_FALSE(refused.ok());
  EXPECT_FALSE(refused.error().retryable);
}

TEST(VersioningResponsesTest, StatusIsOneOfThreeAndTheBodyNamesIt) {
  auto never = ParseVersioningStatus(
      "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>");
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(*never, "");
  auto enabled = ParseVersioningStatus(
      "<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>");
  ASSERT_TRUE(enabled.ok());
  EXPECT_EQ(*enabled, "Enabled");
  EXPECT_FALSE(ParseVersioningStatus("<VersioningConfiguration><Status>Maybe</Status>"
                                     "</VersioningConfiguration>")
                   .ok());
  auto moto = ParseVersioningStatus(
      "<GetBucketVersioningResponse xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>");
  ASSERT_TRUE(moto.ok());
  EXPECT_EQ(*moto, "");
  EXPECT_FALSE(ParseVersioningStatus("<Other/>").ok());
  EXPECT_FALSE(ParseVersioningStatus("not xml").ok());
  EXPECT_EQ(VersioningBody("Suspended"),
            "<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Status>Suspended</Status></VersioningConfiguration>");
}

TEST(MultipartResponsesTest, CompletionBodyNamesThePartsInOrder) {
  EXPECT_EQ(CompleteMultipartBody({"\"a\"", "\"b&\""}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>\"b&amp;\"</ETag></Part>"
            "</CompleteMultipartUpload>");
}

}  // namespace
}  // namespace strata::storage::upstream
