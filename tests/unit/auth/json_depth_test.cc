// JsonNestingDepth: the bound both policy parsers check before parsing.
#include "auth/internal/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::auth::internal {
namespace {

TEST(JsonDepth, CountsObjectsAndArraysOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth(""), 0);
  EXPECT_EQ(JsonNestingDepth("42"), 0);
  EXPECT_EQ(JsonNestingDepth(R"({"a": 1})"), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": [[]]}], "c": {}})"), 5);
  // Brackets inside strings, escaped quotes included, do not count.
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[{{{", "b": "\"[[["})"), 1);
  EXPECT_EQ(JsonNestingDepth(R"(["\\", [1]])"), 2);
}

TEST(JsonDepth, ReadsAnyTextWithoutParsingIt) {
  EXPECT_EQ(JsonNestingDepth(std::string(1000000, '[')), 1000000);
  EXPECT_EQ(JsonNestingDepth("]]]["), 0);  // unbalanced: a count the parser then refuses
  EXPECT_EQ(JsonNestingDepth(R"(["unterminated \)"), 1);
}

}  // namespace
}  // namespace strata::auth::internal
