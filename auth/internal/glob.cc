#include "auth/internal/glob.h"

#include <cstddef>

namespace strata::auth::internal {
namespace {

char Fold(char c, bool fold_case) {
  return fold_case && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool fold_case, bool escaped) {
  std::size_t p = 0;
  std::size_t t = 0;
  // The last '*' seen and where in `text` it was tried last: on a mismatch the star
  // takes one more character. One such point suffices for * and ? patterns.
  std::size_t star = std::string_view::npos;
  std::size_t star_text = 0;
  while (t < text.size()) {
    const bool literal = escaped && p + 1 < pattern.size() && pattern[p] == '\\';
    if (!literal && p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (literal && Fold(pattern[p + 1], fold_case) == Fold(text[t], fold_case)) {
      p += 2;
      ++t;
    } else if (!literal && p < pattern.size() &&
               (pattern[p] == '?' || Fold(pattern[p], fold_case) == Fold(text[t], fold_case))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

bool HasWildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

void AppendEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\' || c == '*' || c == '?') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
}

}  // namespace strata::auth::internal
