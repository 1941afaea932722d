#include "common/utf8.h"

namespace strata {

std::optional<char32_t> DecodeUtf8(std::string_view s, std::size_t& pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  // RFC 3629's table: the lead byte fixes the length and narrows the second byte's range,
  // which is what excludes overlongs (E0, F0), surrogates (ED) and values past U+10FFFF
  // (F4); C0, C1 and F5..FF never start a sequence.
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  char32_t value = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0F;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    ++pos;
    return std::nullopt;
  }
  if (s.size() - pos < length) {
    ++pos;
    return std::nullopt;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char c = byte(pos + i);
    if (c < (i == 1 ? low : 0x80) || c > (i == 1 ? high : 0xBF)) {
      ++pos;
      return std::nullopt;
    }
    value = (value << 6) | (c & 0x3F);
  }
  pos += length;
  return value;
}

bool IsValidUtf8(std::string_view s) {
  for (std::size_t pos = 0; pos < s.size();) {
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;  // the common case, without the decoder's bookkeeping
      continue;
    }
    if (!DecodeUtf8(s, pos)) {
      return false;
    }
  }
  return true;
}

bool IsXmlChar(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

bool IsXmlText(std::string_view s) {
  for (std::size_t pos = 0; pos < s.size();) {
    auto c = DecodeUtf8(s, pos);
    if (!c || !IsXmlChar(*c)) {
      return false;
    }
  }
  return true;
}

}  // namespace strata
