// Small text helpers that several modules' parsers of outside input share.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace strata {

// `s` without the spaces and tabs at either end.
std::string_view TrimBlanks(std::string_view s);

// The value of a hexadecimal digit (either case), or -1.
int HexDigitValue(char c);

// Percent-decodes `in` into `out` (cleared first). '+' becomes ' ' only when
// plus_is_space (form-encoded query strings); S3 paths keep it. False on a malformed
// escape, with `out` unspecified.
bool PercentDecode(std::string_view in, std::string& out, bool plus_is_space = false);

// `s` escaped for the inside of a JSON string: quotes, backslashes and control
// characters (as \u00XX); other bytes pass as they are.
std::string JsonEscape(std::string_view s);

}  // namespace strata
