// The forwarded request and response heads (gateway/forward_wire.h): round trips, and
// every way a peer's bytes can be wrong refused.
#include "gateway/forward_wire.h"

#include <gtest/gtest.h>

#include <string>

#include "storage/read_cache.h"

namespace strata::gateway {
namespace {

ForwardedRequestHead SampleRequest() {
  ForwardedRequestHead head;
  head.method = "PUT";
  head.target = "/bucket/some%20key?partNumber=2&uploadId=abc";
  head.remote = "127.0.0.1:40000";
  head.request_id = "0123456789abcdef";
  head.fields = {{"Host", "127.0.0.1:9000"},
                 {"Authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/s3/..."},
                 {"x-amz-meta-empty", ""},
                 {"Content-Length", "5"}};
  return head;
}

ForwardedResponseHead SampleResponse() {
  ForwardedResponseHead head;
  head.status = 206;
  head.content_length = (std::uint64_t{1} << 40) + 7;
  head.close = true;
  head.fields = {{"ETag", "\"abc\""}, {"Content-Range", "bytes 0-6/100"}};
  return head;
}

TEST(ForwardWireTest, RequestHeadRoundTrips) {
  const auto head = SampleRequest();
  auto back = DecodeRequestHead(EncodeRequestHead(head));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->method, head.method);
  EXPECT_EQ(back->target, head.target);
  EXPECT_EQ(back->remote, head.remote);
  EXPECT_EQ(back->request_id, head.request_id);
  EXPECT_EQ(back->fields, head.fields);
}

TEST(ForwardWireTest, ResponseHeadRoundTrips) {
  const auto head = SampleResponse();
  auto back = DecodeResponseHead(EncodeResponseHead(head));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->status, 206u);
  EXPECT_EQ(back->content_length, head.content_length);
  EXPECT_TRUE(back->close);
  EXPECT_EQ(back->fields, head.fields);
}

TEST(ForwardWireTest, EveryCutIsRefused) {
  const std::string request = EncodeRequestHead(SampleRequest());
  for (std::size_t n = 0; n < request.size(); ++n) {
    EXPECT_FALSE(DecodeRequestHead(request.substr(0, n)).ok()) << n;
  }
  const std::string response = EncodeResponseHead(SampleResponse());
  for (std::size_t n = 0; n < response.size(); ++n) {
    EXPECT_FALSE(DecodeResponseHead(response.substr(0, n)).ok()) << n;
  }
}

TEST(ForwardWireTest, TrailingBytesAndOtherFormatsAreRefused) {
  EXPECT_FALSE(DecodeRequestHead(EncodeRequestHead(SampleRequest()) + "x").ok());
  EXPECT_FALSE(DecodeResponseHead(EncodeResponseHead(SampleResponse()) + "x").ok());
  std::string request = EncodeRequestHead(SampleRequest());
  request[0] = 3;
  EXPECT_FALSE(DecodeRequestHead(request).ok());
  request[0] = 0;
  EXPECT_FALSE(DecodeRequestHead(request).ok());
  // The response and the request heads are not each other's.
  EXPECT_FALSE(DecodeRequestHead(EncodeResponseHead(SampleResponse())).ok());
  EXPECT_FALSE(DecodeResponseHead(EncodeRequestHead(SampleRequest())).ok());
}

TEST(ForwardWireTest, WhatHttpDoesNotAllowIsRefused) {
  auto refused = [](auto edit) {
    auto head = SampleRequest();
    edit(head);
    return !DecodeRequestHead(EncodeRequestHead(head)).ok();
  };
  EXPECT_TRUE(refused([](auto& h) { h.method = "FETCH"; }));
  EXPECT_TRUE(refused([](auto& h) { h.method = ""; }));
  EXPECT_TRUE(refused([](auto& h) { h.target = "bucket/key"; }));
  EXPECT_TRUE(refused([](auto& h) { h.target = "http://x/bucket"; }));
  EXPECT_TRUE(refused([](auto& h) { h.target = "/a b"; }));
  EXPECT_TRUE(refused([](auto& h) { h.target = "/a\r\nHost: x"; }));
  EXPECT_TRUE(refused([](auto& h) { h.target = std::string("/a\0", 3); }));
  EXPECT_TRUE(refused([](auto& h) { h.fields.emplace_back("Bad Name", "v"); }));
  EXPECT_TRUE(refused([](auto& h) { h.fields.emplace_back("", "v"); }));
  EXPECT_TRUE(refused([](auto& h) { h.fields.emplace_back("X-Split", "a\r\nX-Smuggled: 1"); }));
  EXPECT_TRUE(refused([](auto& h) { h.fields.emplace_back("X-Nul", std::string("a\0b", 3)); }));
  EXPECT_TRUE(refused([](auto& h) { h.request_id = "id\n"; }));
  EXPECT_TRUE(refused([](auto& h) { h.fields.assign(kMaxForwardedFields + 1, {"X-Many", "v"}); }));
  EXPECT_FALSE(refused([](auto& h) { h.fields.assign(kMaxForwardedFields, {"X-Many", "v"}); }));

  auto status_refused = [](unsigned status) {
    auto head = SampleResponse();
    head.status = status;
    return !DecodeResponseHead(EncodeResponseHead(head)).ok();
  };
  EXPECT_TRUE(status_refused(99));
  EXPECT_TRUE(status_refused(600));
  EXPECT_FALSE(status_refused(100));
  EXPECT_FALSE(status_refused(599));
  std::string flags = EncodeResponseHead(SampleResponse());
  flags[11] = 2;  // format 1, status 2, length 8: the flags byte
  EXPECT_FALSE(DecodeResponseHead(flags).ok());
}

TEST(ForwardWireTest, TheReadCachesFieldsRoundTripInFormat2) {
  auto request = SampleRequest();
  request.method = "GET";
  EXPECT_EQ(EncodeRequestHead(request)[0], kForwardFormat);  // what earlier builds read
  request.takes_cache = true;
  EXPECT_EQ(EncodeRequestHead(request)[0], kForwardCacheFormat);
  request.cached_tag = "3HL4kqtJvjVBH40Nrjfkd:00ff00ff00ff00ff";
  auto back = DecodeRequestHead(EncodeRequestHead(request));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->takes_cache);
  EXPECT_FALSE(back->secure);
  EXPECT_EQ(back->cached_tag, request.cached_tag);
  EXPECT_EQ(back->fields, request.fields);
  EXPECT_EQ(back->target, request.target);

  auto response = SampleResponse();
  EXPECT_EQ(EncodeResponseHead(response)[0], kForwardFormat);
  response.from_cache = true;
  response.cache_first = 12345;
  auto from_cache = DecodeResponseHead(EncodeResponseHead(response));
  ASSERT_TRUE(from_cache.ok()) << from_cache.error().message;
  EXPECT_TRUE(from_cache->from_cache);
  EXPECT_TRUE(from_cache->close);
  EXPECT_EQ(from_cache->cache_first, 12345u);
  EXPECT_EQ(from_cache->content_length, response.content_length);
  EXPECT_TRUE(from_cache->cache_tag.empty());

  auto offer = SampleResponse();
  offer.status = 200;
  offer.close = false;
  offer.cache_tag = "null:0123456789abcdef";
  offer.cache_crc = 0xfedcba9876543210;
  auto offered = DecodeResponseHead(EncodeResponseHead(offer));
  ASSERT_TRUE(offered.ok()) << offered.error().message;
  EXPECT_FALSE(offered->from_cache);
  EXPECT_FALSE(offered->close);
  EXPECT_EQ(offered->cache_tag, offer.cache_tag);
  EXPECT_EQ(offered->cache_crc, offer.cache_crc);
  EXPECT_EQ(offered->fields, offer.fields);

  for (const std::string& bytes :
       {EncodeRequestHead(request), EncodeResponseHead(response), EncodeResponseHead(offer)}) {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(DecodeRequestHead(bytes.substr(0, n)).ok() ||
                   DecodeResponseHead(bytes.substr(0, n)).ok())
          << n;
    }
  }
}

TEST(ForwardWireTest, TheTlsFlagRoundTripsInFormat2) {
  auto request = SampleRequest();
  request.secure = true;
  EXPECT_EQ(EncodeRequestHead(request)[0], kForwardCacheFormat);
  auto back = DecodeRequestHead(EncodeRequestHead(request));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->secure);
  EXPECT_FALSE(back->takes_cache);
  EXPECT_TRUE(back->cached_tag.empty());
  request.takes_cache = true;
  back = DecodeRequestHead(EncodeRequestHead(request));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->secure && back->takes_cache);
}

TEST(ForwardWireTest, BadReadCacheFieldsAreRefused) {
  auto request_refused = [](auto edit) {
    auto head = SampleRequest();
    head.takes_cache = true;
    edit(head);
    return !DecodeRequestHead(EncodeRequestHead(head)).ok();
  };
  EXPECT_FALSE(request_refused([](auto&) {}));
  EXPECT_TRUE(request_refused([](auto& h) { h.cached_tag = "a tag"; }));
  EXPECT_TRUE(request_refused([](auto& h) { h.cached_tag = "tag\r\n"; }));
  EXPECT_TRUE(request_refused(
      [](auto& h) { h.cached_tag = std::string(storage::kMaxReadCacheTag + 1, 't'); }));
  EXPECT_FALSE(
      request_refused([](auto& h) { h.cached_tag = std::string(storage::kMaxReadCacheTag, 't'); }));
  // Format 2 without its fields, and unknown flags.
  std::string bare = EncodeRequestHead(SampleRequest());
  const std::size_t after_id = bare.find("0123456789abcdef") + 16;  // the request id's end
  bare.insert(after_id, std::string("\0\0\0\0\0", 5));              // flags 0, an empty tag
  bare[0] = 2;
  EXPECT_FALSE(DecodeRequestHead(bare).ok());
  bare[after_id] = 1;
  EXPECT_TRUE(DecodeRequestHead(bare).ok());
  bare[after_id] = 2;  // TLS alone
  auto tls = DecodeRequestHead(bare);
  ASSERT_TRUE(tls.ok());
  EXPECT_TRUE(tls->secure);
  EXPECT_FALSE(tls->takes_cache);
  bare[after_id] = 4;
  EXPECT_FALSE(DecodeRequestHead(bare).ok());

  auto response_refused = [](auto edit) {
    auto head = SampleResponse();
    head.from_cache = true;
    edit(head);
    return !DecodeResponseHead(EncodeResponseHead(head)).ok();
  };
  EXPECT_FALSE(response_refused([](auto&) {}));
  EXPECT_TRUE(response_refused([](auto& h) { h.cache_first = ~std::uint64_t{0}; }));
  EXPECT_TRUE(response_refused([](auto& h) { h.cache_crc = 1; }));  // a CRC without a tag
  EXPECT_TRUE(response_refused([](auto& h) {
    h.from_cache = false;
    h.cache_first = 1;
    h.cache_tag = "t";
  }));
  EXPECT_TRUE(response_refused([](auto& h) { h.cache_tag = "bad tag"; }));
  std::string flags = EncodeResponseHead(SampleResponse());
  flags[0] = 2;
  flags[11] = 4;
  EXPECT_FALSE(DecodeResponseHead(flags).ok());
}

TEST(ForwardWireTest, ALengthPastTheEndIsRefusedWithoutReadingIt) {
  std::string request = EncodeRequestHead(SampleRequest());
  // The method's length (bytes 1-4) claims 4 GiB - 1.
  request[1] = request[2] = request[3] = request[4] = static_cast<char>(0xff);
  EXPECT_FALSE(DecodeRequestHead(request).ok());
  std::string response = EncodeResponseHead(SampleResponse());
  // The field count (bytes 12-15) claims 4 Gi fields.
  response[12] = response[13] = response[14] = response[15] = static_cast<char>(0xff);
  EXPECT_FALSE(DecodeResponseHead(response).ok());
}

}  // namespace
}  // namespace strata::gateway
