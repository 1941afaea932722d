// Bearer tokens for scrapers: parsing the header and the constant-time comparison.
#include "auth/bearer_token.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::auth {
namespace {

TEST(BearerToken, ParsesTheScheme) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer abc"), "abc");
  EXPECT_EQ(BearerToken("  BEARER   abc  "), "abc");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken("Bearerabc"), "");
  EXPECT_EQ(BearerToken("Basic dXNlcjpwYXNz"), "");
  EXPECT_EQ(BearerToken("AWS4-HMAC-SHA256 Credential=a/b/c/d/e"), "");
  EXPECT_EQ(BearerToken(""), "");
}

TEST(BearerTokenMatches, ExactMatchOnly) {
  const std::string token = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(BearerTokenMatches(token, token));
  EXPECT_FALSE(BearerTokenMatches(token + "0", token));
  EXPECT_FALSE(BearerTokenMatches(token.substr(1), token));
  EXPECT_FALSE(BearerTokenMatches("1123456789abcdef0123456789abcdef", token));
  EXPECT_FALSE(BearerTokenMatches("", token));
  // No token configured: nothing matches, not even an empty one.
  EXPECT_FALSE(BearerTokenMatches("", ""));
  EXPECT_FALSE(BearerTokenMatches(token, ""));
}

}  // namespace
}  // namespace strata::auth
