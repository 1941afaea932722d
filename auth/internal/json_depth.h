// How deeply a JSON text nests, read without parsing it: the policy parsers (bucket
// policies, POST Object's policy document) refuse a document nested past their bound
// before it reaches nlohmann's recursive parser, so a million '[' cannot exhaust the stack.
#pragma once

#include <string_view>

namespace strata::auth::internal {

// The deepest nesting of objects and arrays in `text` (0 for a scalar), counting brackets
// outside strings. Exact for valid JSON; for any other text, a count the parser then refuses.
int JsonNestingDepth(std::string_view text);

}  // namespace strata::auth::internal
