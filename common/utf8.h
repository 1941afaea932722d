// Strict UTF-8 (RFC 3629) and the characters XML 1.0 can carry: shared by the parsers
// of outside input (object keys, XML bodies) and the XML writer. S3 keys and S3's XML are
// UTF-8; bytes that are not would be stored, then echoed into listings and error bodies
// that no XML parser accepts. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace strata {

// Decodes the character starting at `pos` and advances `pos` past it. nullopt (and `pos`
// advanced by one byte) for a byte that does not start a well-formed sequence: a stray
// continuation byte, a truncated sequence, an overlong form, a surrogate (U+D800..DFFF)
// or a value above U+10FFFF.
std::optional<char32_t> DecodeUtf8(std::string_view s, std::size_t& pos);

// Whether all of `s` is well-formed UTF-8 in the sense of DecodeUtf8.
bool IsValidUtf8(std::string_view s);

// XML 1.0's Char production: tab, LF, CR, U+0020..D7FF, U+E000..FFFD, U+10000..10FFFF.
// NUL, the other C0 controls, U+FFFE and U+FFFF cannot appear in an XML 1.0 document,
// not even as character references.
bool IsXmlChar(char32_t c);

// Whether `s` is well-formed UTF-8 made only of XML 1.0 characters: text an XML 1.0
// document can carry as it is (after escaping markup).
bool IsXmlText(std::string_view s);

}  // namespace strata
