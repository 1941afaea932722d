#include "gateway/tags.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::gateway {
namespace {

using metadata::Tags;

ErrorCode CodeOf(const Result<void>& r) { return r.ok() ? ErrorCode::kInternal : r.error().code; }

TEST(Tags, AcceptsS3Characters) {
  EXPECT_TRUE(ValidateTags({{"Project", "blue"},
                            {"a b_c.d:e/f=g+h-i@j", ""},
                            {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac"},
                            {"emoji", "\xf0\x9f\x98\x80"}},
                           TagOwner::kObject)
                  .ok());
  EXPECT_TRUE(ValidateTags({}, TagOwner::kObject).ok());
}

TEST(Tags, Limits) {
  Tags ten;
  for (int i = 0; i < 10; ++i) {
    ten.emplace_back("k" + std::to_string(i), "v");
  }
  EXPECT_TRUE(ValidateTags(ten, TagOwner::kObject).ok());
  Tags eleven = ten;
  eleven.emplace_back("k10", "v");
  EXPECT_EQ(CodeOf(ValidateTags(eleven, TagOwner::kObject)), ErrorCode::kTooManyTags);
  EXPECT_TRUE(ValidateTags(eleven, TagOwner::kBucket).ok());
  Tags fifty_one;
  for (int i = 0; i < 51; ++i) {
    fifty_one.emplace_back("k" + std::to_string(i), "v");
  }
  EXPECT_EQ(CodeOf(ValidateTags(fifty_one, TagOwner::kBucket)), ErrorCode::kTooManyTags);
  fifty_one.pop_back();
  EXPECT_TRUE(ValidateTags(fifty_one, TagOwner::kBucket).ok());

  // Lengths count characters, not bytes: 128 two-byte characters are a valid key.
  std::string key128;
  for (int i = 0; i < 128; ++i) {
    key128 += "\xc3\xa9";
  }
  EXPECT_TRUE(ValidateTags({{key128, std::string(256, 'v')}}, TagOwner::kObject).ok());
  EXPECT_EQ(CodeOf(ValidateTags({{key128 + "a", "v"}}, TagOwner::kObject)), ErrorCode::kInvalidTag);
  EXPECT_EQ(CodeOf(ValidateTags({{"k", std::string(257, 'v')}}, TagOwner::kObject)),
            ErrorCode::kInvalidTag);
}

TEST(Tags, RejectsBadTags) {
  for (const Tags& tags : std::initializer_list<Tags>{
           {{"", "v"}},                              // empty key
           {{"a", "1"}, {"a", "2"}},                 // duplicate key
           {{"aws:createdBy", "me"}},                // reserved prefix
           {{"k?", "v"}},                            // outside the pattern
           {{"k", "a,b"}},                           //
           {{"k", "line\nbreak"}},                   // control character
           {{"k", std::string("\xff\xfe", 2)}},      // not UTF-8
           {{"k", std::string("\xc3", 1)}},          // truncated sequence
           {{"k", std::string("\xc0\xaf", 2)}},      // overlong
           {{"k", std::string("\xed\xa0\x80", 3)}},  // surrogate
           {{std::string("k\0", 2), "v"}},           // NUL
       }) {
    auto r = ValidateTags(tags, TagOwner::kObject);
    ASSERT_FALSE(r.ok()) << tags[0].first << "=" << tags[0].second;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidTag);
  }
}

TEST(Tags, Header) {
  auto tags = ParseTaggingHeader("a=1&b=two%20words&c&d=x+y&e%3Df=%2B");
  ASSERT_TRUE(tags.ok()) << tags.error().message;
  EXPECT_EQ(*tags, (Tags{{"a", "1"}, {"b", "two words"}, {"c", ""}, {"d", "x y"}, {"e=f", "+"}}));
  auto none = ParseTaggingHeader("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  EXPECT_EQ(ParseTaggingHeader("a=1&a=2").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseTaggingHeader("a=%zz").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseTaggingHeader("a=%2").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseTaggingHeader("=v").error().code, ErrorCode::kInvalidTag);
  EXPECT_EQ(ParseTaggingHeader("k=a%2Cb").error().code, ErrorCode::kInvalidTag);
  EXPECT_EQ(ParseTaggingHeader("k=%26").error().code, ErrorCode::kInvalidTag);  // "&"
  std::string eleven;
  for (int i = 0; i < 11; ++i) {
    eleven += (i ? "&k" : "k") + std::to_string(i) + "=v";
  }
  EXPECT_EQ(ParseTaggingHeader(eleven).error().code, ErrorCode::kTooManyTags);
}

}  // namespace
}  // namespace strata::gateway
