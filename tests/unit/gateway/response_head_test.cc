#include "gateway/response_head.h"

#include <gtest/gtest.h>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>
#include <string>

namespace strata::gateway {
namespace {

namespace http = boost::beast::http;

// What Beast's own serializer writes for the same header.
std::string BeastHead(const http::response_header<>& header) {
  std::ostringstream out;
  out << header;
  return out.str();
}

TEST(ResponseHead, MatchesBeastsSerializer) {
  http::response_header<> header;
  header.version(11);
  header.result(http::status::partial_content);
  header.set(http::field::server, "strata");
  header.set("x-amz-request-id", "0123456789ABCDEF");
  header.set(http::field::etag, "\"5d41402abc4b2a76b9719d911017c592\"");
  header.set(http::field::content_range, "bytes 0-9/100");
  header.set("x-amz-meta-empty", "");
  header.set(http::field::content_length, "10");
  std::string head;
  FormatResponseHead(header, head);
  EXPECT_EQ(head, BeastHead(header));
  EXPECT_TRUE(head.starts_with("HTTP/1.1 206 Partial Content\r\nServer: strata\r\n"));
  EXPECT_TRUE(head.ends_with("Content-Length: 10\r\n\r\n"));
}

TEST(ResponseHead, KeepsAGivenReasonAndReplacesTheOldText) {
  http::response_header<> header;
  header.version(11);
  header.result(http::status::not_found);
  std::string head = "left over from the last response";
  FormatResponseHead(header, head);
  EXPECT_EQ(head, "HTTP/1.1 404 Not Found\r\n\r\n");
  header.reason("Gone Fishing");
  FormatResponseHead(header, head);
  EXPECT_EQ(head, "HTTP/1.1 404 Gone Fishing\r\n\r\n");
  EXPECT_EQ(head, BeastHead(header));
}

}  // namespace
}  // namespace strata::gateway
