#include "gateway/http_framing.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace strata::gateway {
namespace {

namespace http = boost::beast::http;
using Fields = std::initializer_list<std::pair<http::field, std::string>>;

http::request_header<> Head(Fields fields, unsigned version = 11) {
  http::request_header<> h;
  h.method(http::verb::put);
  h.target("/b/k");
  h.version(version);
  for (const auto& [name, value] : fields) {
    h.insert(name, value);
  }
  return h;
}

// The status a head is refused with; 0 when it is framed safely.
unsigned Refused(Fields fields, unsigned version = 11) {
  auto error = CheckFraming(Head(fields, version));
  return error ? error->status : 0;
}

constexpr auto kHost = http::field::host;
constexpr auto kTe = http::field::transfer_encoding;
constexpr auto kCl = http::field::content_length;

TEST(HttpFraming, PlainRequestsPass) {
  EXPECT_EQ(Refused({{kHost, "127.0.0.1:9000"}}), 0u);
  EXPECT_EQ(Refused({{kHost, "b.s3.example.com"}, {kCl, "5"}}), 0u);
  EXPECT_EQ(Refused({{kHost, "[::1]:9000"}, {kTe, "chunked"}}), 0u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "Chunked"}}), 0u);
  // Identical Content-Length values (a list or repeated lines) may be taken as one.
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "5, 5"}}), 0u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "5"}, {kCl, "5"}}), 0u);
  // HTTP/1.0 may leave Host out.
  EXPECT_EQ(Refused({}, 10), 0u);
}

TEST(HttpFraming, FinalCodingMustBeChunked) {
  for (const char* te : {"chunked, identity", "identity", "xchunked", "chunked;q=1", "gzip",
                         "chunked, gzip", "", " , "}) {
    auto error = CheckFraming(Head({{kHost, "h"}, {kTe, te}}));
    ASSERT_TRUE(error) << te;
    EXPECT_EQ(error->status, 400u) << te;
    EXPECT_EQ(error->code, "BadRequest") << te;
  }
  // Spread over two lines, the codings are one list.
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "chunked"}, {kTe, "identity"}}), 400u);
}

TEST(HttpFraming, ChunkedOnlyOnce) {
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "chunked, chunked"}}), 400u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "chunked"}, {kTe, "chunked"}}), 400u);
}

TEST(HttpFraming, OtherCodingsUnderChunkedAreNotImplemented) {
  auto error = CheckFraming(Head({{kHost, "h"}, {kTe, "gzip, chunked"}}));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->status, 501u);
  EXPECT_EQ(error->code, "NotImplemented");
}

TEST(HttpFraming, TransferEncodingWithContentLength) {
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "chunked"}, {kCl, "5"}}), 400u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "5"}, {kTe, "chunked"}}), 400u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "identity"}, {kCl, "5"}}), 400u);
}

TEST(HttpFraming, TransferEncodingInHttp10) {
  EXPECT_EQ(Refused({{kTe, "chunked"}}, 10), 400u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kTe, "chunked"}, {kCl, "3"}}, 10), 400u);
}

TEST(HttpFraming, ContentLength) {
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "5"}, {kCl, "6"}}), 400u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "5, 6"}}), 400u);
  for (const char* cl : {"", "-1", "+5", "5 5", "0x10", "1e3", "12345678901234567890", ","}) {
    EXPECT_EQ(Refused({{kHost, "h"}, {kCl, cl}}), 400u) << cl;
  }
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "007"}}), 0u);
  EXPECT_EQ(Refused({{kHost, "h"}, {kCl, "7"}, {kCl, "007"}}), 0u);
}

TEST(HttpFraming, Host) {
  EXPECT_EQ(Refused({}), 400u);
  EXPECT_EQ(Refused({{kHost, "a"}, {kHost, "a"}}), 400u);
  EXPECT_EQ(Refused({{kHost, "a"}, {kHost, "b"}}, 10), 400u);
  for (const char* host :
       {"a b", "a/b", "a@b", "h:x", "h:123456", "[::1", "[::1]x", "[]", "a\"b"}) {
    EXPECT_EQ(Refused({{kHost, host}}), 400u) << host;
  }
}

TEST(HttpFraming, Version) {
  auto error = CheckFraming(Head({{kHost, "h"}}, 20));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->status, 505u);
}

TEST(HttpFraming, ScanFindsTheEndOfTheHead) {
  EXPECT_FALSE(ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\n").complete);
  EXPECT_FALSE(ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\n\r").complete);
  auto scan = ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(scan.complete);
  EXPECT_FALSE(scan.obs_fold);
  EXPECT_TRUE(ScanRequestHead("GET / HTTP/1.1\nHost: h\n\n").complete);
  EXPECT_TRUE(ScanRequestHead("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").complete);
}

TEST(HttpFraming, ScanFindsObsFold) {
  EXPECT_TRUE(ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n").obs_fold);
  EXPECT_TRUE(ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\t2\r\n\r\n").obs_fold);
  // Whitespace between the request line and the first field (RFC 9112 2.2).
  EXPECT_TRUE(ScanRequestHead("GET / HTTP/1.1\r\n Host: h\r\n\r\n").obs_fold);
  // What follows the head (a body, a pipelined request) is not looked at.
  EXPECT_FALSE(ScanRequestHead("GET / HTTP/1.1\r\nHost: h\r\n\r\n x\r\n y\r\n").obs_fold);
}

}  // namespace
}  // namespace strata::gateway
