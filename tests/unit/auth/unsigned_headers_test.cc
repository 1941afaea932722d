// UnsignedAmzHeaders: which x-amz-* headers a SigV4 signature leaves out.
#include "auth/internal/unsigned_headers.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::auth::internal {
namespace {

using Headers = std::vector<std::pair<std::string_view, std::string_view>>;
using Names = std::vector<std::string>;

TEST(UnsignedAmzHeaders, EverySignedIsNone) {
  Headers h = {{"Host", "h"},
               {"X-Amz-Date", "20130524T000000Z"},
               {"x-amz-meta-a", "1"},
               {"User-Agent", "curl"}};
  EXPECT_TRUE(UnsignedAmzHeaders(h, {"host", "x-amz-date", "x-amz-meta-a"}).empty());
}

TEST(UnsignedAmzHeaders, OnlyAmzHeadersCount) {
  // Other headers may go unsigned (user-agent, content-type, range: S3 does not insist).
  Headers h = {{"host", "h"},          {"content-type", "text/plain"},
               {"range", "bytes=0-1"}, {"x-amzn-trace-id", "Root=1"},
               {"x-amz", "short"},     {"amz-x-meta", "v"}};
  EXPECT_TRUE(UnsignedAmzHeaders(h, {"host"}).empty());
}

TEST(UnsignedAmzHeaders, ListsUnsignedInRequestOrderLowerCasedOnce) {
  Headers h = {{"host", "h"},
               {"X-Amz-Copy-Source", "/other/secret"},
               {"x-amz-date", "20130524T000000Z"},
               {"x-amz-meta-b", "1"},
               {"X-AMZ-META-B", "2"},
               {"x-amz-tagging", "k=v"}};
  EXPECT_EQ(UnsignedAmzHeaders(h, {"host", "x-amz-date"}),
            (Names{"x-amz-copy-source", "x-amz-meta-b", "x-amz-tagging"}));
  EXPECT_EQ(UnsignedAmzHeaders(h, {"host"}),
            (Names{"x-amz-copy-source", "x-amz-date", "x-amz-meta-b", "x-amz-tagging"}));
}

TEST(UnsignedAmzHeaders, ContentSha256IsExempt) {
  // The payload hash is the canonical request's last line: signed without being named.
  Headers h = {{"host", "h"}, {"X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD"}};
  EXPECT_TRUE(UnsignedAmzHeaders(h, {"host"}).empty());
}

TEST(UnsignedAmzHeaders, SignedNamesMatchWholeNames) {
  Headers h = {{"host", "h"}, {"x-amz-meta-ab", "1"}, {"x-amz-meta-a", "2"}};
  EXPECT_EQ(UnsignedAmzHeaders(h, {"host", "x-amz-meta-a"}), (Names{"x-amz-meta-ab"}));
}

TEST(JoinHeaderNames, AsS3Lists) {
  EXPECT_EQ(JoinHeaderNames({}), "");
  EXPECT_EQ(JoinHeaderNames({"x-amz-meta-a"}), "x-amz-meta-a");
  EXPECT_EQ(JoinHeaderNames({"x-amz-meta-a", "x-amz-tagging"}), "x-amz-meta-a, x-amz-tagging");
}

}  // namespace
}  // namespace strata::auth::internal
