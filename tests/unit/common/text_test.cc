#include "common/text.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(Text, JsonEscape) {
  EXPECT_EQ(JsonEscape("plain/key.bin"), "plain/key.bin");
  EXPECT_EQ(JsonEscape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(JsonEscape(std::string("\n\x01", 2)), "\\u000a\\u0001");
  EXPECT_EQ(JsonEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes through
}

TEST(Text, HexDigitValue) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
  EXPECT_EQ(HexDigitValue('%'), -1);
}

TEST(Text, PercentDecode) {
  std::string out;
  ASSERT_TRUE(PercentDecode("a%20b%2Fc+d", out));
  EXPECT_EQ(out, "a b/c+d");
  ASSERT_TRUE(PercentDecode("a+b", out, /*plus_is_space=*/true));
  EXPECT_EQ(out, "a b");
  ASSERT_TRUE(PercentDecode("%00%ff", out));
  EXPECT_EQ(out, std::string("\0\xff", 2));
  for (const char* bad : {"%", "%2", "a%g0", "%%", "x%2"}) {
    EXPECT_FALSE(PercentDecode(bad, out)) << bad;
  }
}

}  // namespace
}  // namespace strata
