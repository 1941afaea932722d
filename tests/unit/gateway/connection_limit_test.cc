#include "gateway/connection_limit.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

TEST(ConnectionLimit, HalfTheDescriptorsLessAReserve) {
  EXPECT_EQ(DefaultMaxConnections(1024), 448u);
  EXPECT_EQ(DefaultMaxConnections(65536), 32704u);
  EXPECT_EQ(DefaultMaxConnections(0), (std::size_t{1} << 18) - 64);
}

TEST(ConnectionLimit, NeverBelowTheFloor) {
  EXPECT_EQ(DefaultMaxConnections(64), 16u);
  EXPECT_EQ(DefaultMaxConnections(1), 16u);
}

TEST(ConnectionLimit, RefusalIsAWellFormedResponse) {
  std::string response(RefusalResponse());
  auto end = response.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos);
  auto body = response.substr(end + 4);
  EXPECT_NE(response.find("Content-Length: " + std::to_string(body.size()) + "\r\n"),
            std::string::npos);
  EXPECT_EQ(response.rfind("HTTP/1.1 503 ", 0), 0u);
  EXPECT_NE(body.find("<Code>SlowDown</Code>"), std::string::npos);
}

}  // namespace
}  // namespace strata::gateway
