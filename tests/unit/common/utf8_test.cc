#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(Utf8, AcceptsWellFormed) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain/key.bin"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9"));           // U+00E9
  EXPECT_TRUE(IsValidUtf8("\xe2\x82\xac"));          // U+20AC
  EXPECT_TRUE(IsValidUtf8("\xed\x9f\xbf"));          // U+D7FF, just below the surrogates
  EXPECT_TRUE(IsValidUtf8("\xee\x80\x80"));          // U+E000, just above them
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));      // U+1F600
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));      // U+10FFFF, the last code point
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // NUL is UTF-8 (XML is stricter)
}

TEST(Utf8, RefusesMalformed) {
  EXPECT_FALSE(IsValidUtf8("\x80"));                      // stray continuation byte
  EXPECT_FALSE(IsValidUtf8("abc\xff"));                   // never valid
  EXPECT_FALSE(IsValidUtf8("\xc3"));                      // truncated
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));                  // truncated
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));                  // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));                  // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xc1\xbf"));                  // overlong
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));              // overlong '/' in three bytes
  EXPECT_FALSE(IsValidUtf8("\xe0\x9f\xbf"));              // overlong U+07FF
  EXPECT_FALSE(IsValidUtf8("\xf0\x80\x80\xaf"));          // overlong in four bytes
  EXPECT_FALSE(IsValidUtf8("\xf0\x8f\xbf\xbf"));          // overlong U+FFFF
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));              // U+D800, a surrogate
  EXPECT_FALSE(IsValidUtf8("\xed\xbf\xbf"));              // U+DFFF
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\xbd\xed\xb8\x80"));  // CESU-8 surrogate pair
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));          // U+110000
  EXPECT_FALSE(IsValidUtf8("\xf5\x80\x80\x80"));          // past the range
  EXPECT_FALSE(IsValidUtf8("\xf8\x88\x80\x80\x80"));      // five-byte form
}

TEST(Utf8, DecodeAdvances) {
  std::string s = "a\xc3\xa9\xff\xf0\x9f\x98\x80";
  std::size_t pos = 0;
  EXPECT_EQ(DecodeUtf8(s, pos), U'a');
  EXPECT_EQ(pos, 1u);
  EXPECT_EQ(DecodeUtf8(s, pos), U'\u00e9');
  EXPECT_EQ(pos, 3u);
  EXPECT_EQ(DecodeUtf8(s, pos), std::nullopt);  // one byte skipped
  EXPECT_EQ(pos, 4u);
  EXPECT_EQ(DecodeUtf8(s, pos), U'\U0001F600');
  EXPECT_EQ(pos, s.size());
}

TEST(Utf8, XmlChars) {
  EXPECT_TRUE(IsXmlChar('\t'));
  EXPECT_TRUE(IsXmlChar('\n'));
  EXPECT_TRUE(IsXmlChar('\r'));
  EXPECT_TRUE(IsXmlChar(' '));
  EXPECT_TRUE(IsXmlChar(0xFFFD));
  EXPECT_TRUE(IsXmlChar(0x10FFFF));
  EXPECT_FALSE(IsXmlChar(0));
  EXPECT_FALSE(IsXmlChar(0x01));
  EXPECT_FALSE(IsXmlChar(0x1F));
  EXPECT_FALSE(IsXmlChar(0xD800));
  EXPECT_FALSE(IsXmlChar(0xFFFE));
  EXPECT_FALSE(IsXmlChar(0xFFFF));

  EXPECT_TRUE(IsXmlText("a key/with \xc3\xa9 and\ttab"));
  EXPECT_FALSE(IsXmlText(std::string("nul\0", 4)));
  EXPECT_FALSE(IsXmlText("bell\x07"));
  EXPECT_FALSE(IsXmlText("\xef\xbf\xbe"));  // U+FFFE
  EXPECT_FALSE(IsXmlText("\xef\xbf\xbf"));  // U+FFFF
  EXPECT_FALSE(IsXmlText("bad\xff"));
}

}  // namespace
}  // namespace strata
