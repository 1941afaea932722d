// Private to auth/: the wildcard match of IAM policies: `*` matches any run of characters
// (also none, also across '/' and ':'), `?` any one character. Iterative, linear in
// practice (one backtrack point), so a hostile pattern cannot make it quadratic beyond
// pattern x text. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace strata::auth::internal {

// Whether `text` matches `pattern`; `fold_case` compares ASCII letters case-insensitively
// (action names, StringEqualsIgnoreCase), else exactly (ARNs, StringLike). `escaped`: a
// backslash in `pattern` makes the next character literal (patterns with expanded policy
// variables, internal/policy_condition.h).
bool GlobMatch(std::string_view pattern, std::string_view text, bool fold_case = false,
               bool escaped = false);

// `text` with '\', '*' and '?' escaped for GlobMatch(..., escaped = true).
void AppendEscaped(std::string& out, std::string_view text);

// Whether `s` has a wildcard (* or ?).
bool HasWildcard(std::string_view s);

}  // namespace strata::auth::internal
