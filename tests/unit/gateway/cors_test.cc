#include "gateway/cors.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

// The S3 user guide's example configuration.
constexpr const char* kExample = R"(<CORSConfiguration>
 <CORSRule>
   <AllowedOrigin>http://www.example1.com</AllowedOrigin>
   <AllowedMethod>PUT</AllowedMethod>
   <AllowedMethod>POST</AllowedMethod>
   <AllowedMethod>DELETE</AllowedMethod>
   <AllowedHeader>*</AllowedHeader>
 </CORSRule>
 <CORSRule>
   <AllowedOrigin>http://*.example2.com</AllowedOrigin>
   <AllowedMethod>PUT</AllowedMethod>
   <AllowedHeader>x-amz-*</AllowedHeader>
   <ExposeHeader>ETag</ExposeHeader>
   <ExposeHeader>x-amz-request-id</ExposeHeader>
   <MaxAgeSeconds>3000</MaxAgeSeconds>
 </CORSRule>
 <CORSRule>
   <ID>public-reads</ID>
   <AllowedOrigin>*</AllowedOrigin>
   <AllowedMethod>GET</AllowedMethod>
   <AllowedMethod>HEAD</AllowedMethod>
 </CORSRule>
</CORSConfiguration>)";

CorsConfiguration Example() {
  auto r = ParseCorsConfiguration(kExample);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : CorsConfiguration{};
}

TEST(Cors, ParsesS3sExample) {
  auto config = Example();
  ASSERT_EQ(config.rules.size(), 3u);
  EXPECT_EQ(config.rules[0].allowed_methods, (std::vector<std::string>{"PUT", "POST", "DELETE"}));
  EXPECT_EQ(config.rules[1].max_age_seconds, 3000);
  EXPECT_EQ(config.rules[1].expose_headers, (std::vector<std::string>{"ETag", "x-amz-request-id"}));
  EXPECT_EQ(config.rules[2].id, "public-reads");
  // The GET's document reads back the same.
  auto again = ParseCorsConfiguration(CorsConfigurationXml(config));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(CorsConfigurationXml(*again), CorsConfigurationXml(config));
}

TEST(Cors, MatchesTheFirstRuleThatAllowsAll) {
  const auto config = Example();
  auto match = [&](std::string_view origin, std::string_view method,
                   std::vector<std::string_view> headers = {}) {
    return MatchCorsRule(config, CorsRequest{origin, method, std::move(headers)});
  };
  EXPECT_EQ(match("http://www.example1.com", "PUT", {"content-type", "x-anything"}),
            &config.rules[0]);
  EXPECT_EQ(match("http://a.example2.com", "PUT", {"X-Amz-Date", "x-amz-meta-k"}),
            &config.rules[1]);
  EXPECT_EQ(match("http://a.example2.com", "PUT", {"content-type"}), nullptr);  // not x-amz-*
  EXPECT_EQ(match("http://example2.com", "PUT"), nullptr);  // the wildcard needs its dot
  EXPECT_EQ(match("http://a.example2.com", "GET"), &config.rules[2]);
  EXPECT_EQ(match("https://anywhere.org", "HEAD"), &config.rules[2]);
  EXPECT_EQ(match("https://anywhere.org", "DELETE"), nullptr);
  EXPECT_EQ(match("HTTP://WWW.EXAMPLE1.COM", "PUT"), nullptr);  // origins are case-sensitive
  EXPECT_EQ(match("http://www.example1.com", "put"), nullptr);  // so are methods
  EXPECT_EQ(match("", "GET"), nullptr);
}

TEST(Cors, ResponseHeaders) {
  const auto config = Example();
  CorsRequest preflight{"http://a.example2.com", "PUT", {"x-amz-date", "x-amz-acl"}};
  auto headers = CorsResponseHeaders(config.rules[1], preflight, true);
  EXPECT_EQ(headers, (std::vector<std::pair<std::string, std::string>>{
                         {"Access-Control-Allow-Origin", "http://a.example2.com"},
                         {"Access-Control-Allow-Methods", "PUT"},
                         {"Access-Control-Allow-Headers", "x-amz-date, x-amz-acl"},
                         {"Access-Control-Max-Age", "3000"},
                         {"Access-Control-Allow-Credentials", "true"}}));
  CorsRequest actual{"http://a.example2.com", "PUT", {}};
  headers = CorsResponseHeaders(config.rules[1], actual, false);
  EXPECT_EQ(headers, (std::vector<std::pair<std::string, std::string>>{
                         {"Access-Control-Allow-Origin", "http://a.example2.com"},
                         {"Access-Control-Allow-Methods", "PUT"},
                         {"Access-Control-Expose-Headers", "ETag, x-amz-request-id"},
                         {"Access-Control-Max-Age", "3000"},
                         {"Access-Control-Allow-Credentials", "true"}}));
  headers = CorsResponseHeaders(config.rules[2], CorsRequest{"https://x.org", "GET", {}}, false);
  EXPECT_EQ(headers, (std::vector<std::pair<std::string, std::string>>{
                         {"Access-Control-Allow-Origin", "*"},
                         {"Access-Control-Allow-Methods", "GET, HEAD"}}));
}

TEST(Cors, SplitsRequestedHeaders) {
  EXPECT_EQ(SplitHeaderList(" x-amz-date ,content-type,, \tx-amz-acl"),
            (std::vector<std::string_view>{"x-amz-date", "content-type", "x-amz-acl"}));
  EXPECT_TRUE(SplitHeaderList("").empty());
  EXPECT_TRUE(SplitHeaderList(" , ").empty());
}

TEST(Cors, RefusesWhatS3Refuses) {
  auto code = [](const std::string& body) {
    auto r = ParseCorsConfiguration(body);
    return r.ok() ? ErrorCode::kInternal : r.error().code;
  };
  auto rule = [](const std::string& inner) {
    return "<CORSConfiguration><CORSRule>" + inner + "</CORSRule></CORSConfiguration>";
  };
  const std::string ok = "<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>";
  EXPECT_EQ(code(rule(ok)), ErrorCode::kInternal);  // accepted
  EXPECT_EQ(code("<CORSConfiguration/>"), ErrorCode::kMalformedXml);
  EXPECT_EQ(code("not xml"), ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule("<AllowedMethod>GET</AllowedMethod>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule("<AllowedOrigin>*</AllowedOrigin>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule(ok + "<MaxAgeSeconds>-1</MaxAgeSeconds>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule(ok + "<MaxAgeSeconds>1</MaxAgeSeconds><MaxAgeSeconds>2</MaxAgeSeconds>")),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule(ok + "<Other>1</Other>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule(ok + "<ExposeHeader>a&#13;&#10;Set-Cookie: x</ExposeHeader>")),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(code(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>")),
            ErrorCode::kInvalidRequest);
  EXPECT_EQ(code(rule("<AllowedOrigin>http://*.*.com</AllowedOrigin>"
                      "<AllowedMethod>GET</AllowedMethod>")),
            ErrorCode::kInvalidRequest);
  EXPECT_EQ(code(rule(ok + "<AllowedHeader>x-*-*</AllowedHeader>")), ErrorCode::kInvalidRequest);
  std::string many = "<CORSConfiguration>";
  for (std::size_t i = 0; i <= kMaxCorsRules; ++i) {
    many += "<CORSRule>" + ok + "</CORSRule>";
  }
  EXPECT_EQ(code(many + "</CORSConfiguration>"), ErrorCode::kMalformedXml);
}

}  // namespace
}  // namespace strata::gateway
