#include "common/shared_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace strata {
namespace {

TEST(SharedTextTest, ReadsAndComparesAsItsString) {
  SharedText empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.str(), "");
  EXPECT_EQ(SharedText(""), empty);  // an empty text holds nothing
  EXPECT_TRUE(SharedText("").SharesWith(empty));
  SharedText policy = std::string(R"({"Statement": []})");
  EXPECT_FALSE(policy.empty());
  EXPECT_EQ(policy.size(), 17u);
  EXPECT_EQ(policy, R"({"Statement": []})");
  EXPECT_EQ(policy, std::string(R"({"Statement": []})"));
  EXPECT_EQ(policy, SharedText(R"({"Statement": []})"));  // equal text, not shared
  EXPECT_FALSE(policy.SharesWith(SharedText(R"({"Statement": []})")));
  EXPECT_FALSE(policy == "{}");
  const std::string& as_string = policy;
  EXPECT_EQ(as_string, R"({"Statement": []})");
  std::ostringstream out;
  out << policy;
  EXPECT_EQ(out.str(), R"({"Statement": []})");
}

TEST(SharedTextTest, CopiesShareAndAssignmentNeverChangesThem) {
  SharedText original("one");
  SharedText copy = original;
  EXPECT_TRUE(copy.SharesWith(original));
  original = std::string("two");
  EXPECT_EQ(copy, "one");
  EXPECT_EQ(original, "two");
  EXPECT_FALSE(copy.SharesWith(original));
  original.clear();
  EXPECT_TRUE(original.empty());
  EXPECT_EQ(copy, "one");
}

}  // namespace
}  // namespace strata
