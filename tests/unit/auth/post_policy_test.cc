#include "auth/post_policy.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "auth/internal/crypto.h"
#include "common/http_time.h"

namespace strata::auth {
namespace {

// 2026-06-01T00:00:00Z, before every policy's expiration below but the expired one.
const std::int64_t kNow = *ParseIso8601("2026-06-01T00:00:00Z");

std::string Doc(const std::string& conditions,
                const std::string& expiration = "\"2026-12-30T12:00:00.000Z\"") {
  return "{\"expiration\": " + expiration + ", \"conditions\": [" + conditions + "]}";
}

PostPolicy MustParse(const std::string& json) {
  auto policy = PostPolicy::Parse(json);
  EXPECT_TRUE(policy.ok()) << json << ": " << policy.error().message;
  return policy.ok() ? std::move(*policy) : PostPolicy();
}

// The code of the refusal; nullopt when the document parses.
std::optional<ErrorCode> ParseCode(const std::string& json) {
  auto policy = PostPolicy::Parse(json);
  return policy.ok() ? std::nullopt : std::optional<ErrorCode>(policy.error().code);
}

std::string Base64(std::string_view s) {
  return internal::Base64Encode(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

TEST(PostPolicy, ParsesEveryConditionForm) {
  const auto policy = MustParse(
      Doc(R"({"bucket": "photos"}, {"ACL": "private"}, ["eq", "$Key", "a/b.jpg"],)"
          R"(["starts-with", "$Content-Type", "image/"], ["content-length-range", 1, "1024"])"));
  EXPECT_EQ(policy.expiration_ms(), *ParseIso8601("2026-12-30T12:00:00.000Z"));
  ASSERT_EQ(policy.conditions().size(), 5u);
  EXPECT_EQ(policy.conditions()[0].field, "bucket");
  EXPECT_EQ(policy.conditions()[1].field, "acl");  // field names are case-insensitive
  EXPECT_EQ(policy.conditions()[1].value, "private");
  EXPECT_EQ(policy.conditions()[2].kind, PostCondition::Kind::kEq);
  EXPECT_EQ(policy.conditions()[2].field, "key");
  EXPECT_EQ(policy.conditions()[2].text, R"(["eq", "$Key", "a/b.jpg"])");
  EXPECT_EQ(policy.conditions()[3].kind, PostCondition::Kind::kStartsWith);
  EXPECT_EQ(policy.conditions()[3].field, "content-type");
  ASSERT_TRUE(policy.length_range().has_value());
  EXPECT_EQ(policy.length_range()->min, 1u);
  EXPECT_EQ(policy.length_range()->max, 1024u);
  // An object of several fields is one condition each.
  EXPECT_EQ(MustParse(Doc(R"({"bucket": "photos", "acl": "private"})")).conditions().size(), 2u);
}

TEST(PostPolicy, LengthRangesIntersect) {
  EXPECT_FALSE(MustParse(Doc(R"({"key": "a"})")).length_range().has_value());
  const auto policy =
      MustParse(Doc(R"(["content-length-range", 10, 100], ["content-length-range", 0, 50])"));
  EXPECT_EQ(policy.length_range()->min, 10u);
  EXPECT_EQ(policy.length_range()->max, 50u);
}

TEST(PostPolicy, DecodesBase64AndRefusesWhatIsNot) {
  const std::string json = Doc(R"({"key": "a"})");
  auto policy = PostPolicy::Decode(Base64(json));
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->conditions().size(), 1u);
  // Wrapped at 76 columns, as some clients send it.
  std::string wrapped = Base64(json);
  wrapped.insert(20, "\r\n");
  EXPECT_TRUE(PostPolicy::Decode(wrapped).ok());
  for (const std::string& bad : {std::string("not base64!"), Base64(json).substr(1),
                                 std::string("eyJ=eyJ="), Base64("not json")}) {
    auto refused = PostPolicy::Decode(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidPolicyDocument) << bad;
  }
}

TEST(PostPolicy, MalformedDocumentsAreInvalidPolicyDocument) {
  const std::vector<std::string> bad = {
      "",
      "[]",
      "{\"conditions\": []}",                                         // no expiration
      R"({"expiration": "2026-12-30T12:00:00Z"})",                    // no conditions
      Doc("", "\"tomorrow\""),                                        // not ISO 8601
      Doc("", "12345"),                                               // not a string
      R"({"expiration": "2026-12-30T12:00:00Z", "conditions": {}})",  // not a list
      Doc("\"key\""),                                                 // neither list nor object
      Doc("{}"),                                                      // an empty object
      Doc(R"({"key": 5})"),                                           // a value not a string
      Doc(R"(["eq", "$key"])"),                                       // two elements
      Doc(R"(["eq", "key", "a"])"),                                   // no '$'
      Doc(R"(["eq", "$", "a"])"),                                     // no name
      Doc(R"(["matches", "$key", "a"])"),                             // unknown operator
      Doc(R"(["starts-with", "$key", 5])"),                           // a value not a string
      Doc(R"(["content-length-range", 10, 1])"),                      // min > max
      Doc(R"(["content-length-range", -1, 10])"),                     // negative
      Doc(R"(["content-length-range", 1.5, 10])"),                    // not an integer
      Doc(R"(["content-length-range", "1x", 10])"),                   // not digits
      Doc(R"([["eq"], "$key", "a"])"),                                // an operator not a string
      Doc(R"({"key": "a"},)"),                                        // not JSON
      Doc(R"(["eq", "$key", [[["a"]]]])"),                            // too deep
  };
  for (const auto& json : bad) {
    EXPECT_EQ(ParseCode(json), ErrorCode::kInvalidPolicyDocument) << json;
  }
}

TEST(PostPolicy, BoundsTheDocument) {
  std::string many;
  for (std::size_t i = 0; i <= kMaxPostPolicyConditions; ++i) {
    many += (i ? "," : "") + std::string(R"({"a": "b"})");
  }
  EXPECT_EQ(ParseCode(Doc(many)), ErrorCode::kInvalidPolicyDocument);
  EXPECT_EQ(ParseCode(Doc(R"({"key": ")" + std::string(kMaxPostPolicyBytes, 'a') + "\"}")),
            ErrorCode::kInvalidPolicyDocument);
  EXPECT_EQ(ParseCode(std::string(100000, '[')), ErrorCode::kInvalidPolicyDocument);
}

Result<void> Check(const std::string& conditions, std::vector<PostFormField> fields,
                   std::int64_t now = kNow) {
  return MustParse(Doc(conditions)).Check(fields, "photos", now);
}

std::string Message(const Result<void>& r) { return r.ok() ? "ok" : r.error().message; }

TEST(PostPolicyCheck, ExactAndEqMatch) {
  EXPECT_TRUE(Check(R"({"key": "a.jpg"}, {"bucket": "photos"})", {{"key", "a.jpg"}}).ok());
  EXPECT_TRUE(Check(R"(["eq", "$KEY", "a.jpg"])", {{"Key", "a.jpg"}}).ok());
  auto r = Check(R"(["eq", "$key", "a.jpg"])", {{"key", "A.jpg"}});  // values are exact
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(Message(r),
            R"(Invalid according to Policy: Policy Condition failed: ["eq", "$key", "a.jpg"])");
  // The bucket is the one posted to, not a field.
  r = Check(R"({"bucket": "other"}, {"key": "a"})", {{"key", "a"}});
  EXPECT_EQ(Message(r),
            R"(Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "other"])");
  // A field the form lacks is the empty string.
  EXPECT_FALSE(Check(R"({"key": "a"}, {"x-amz-meta-a": "1"})", {{"key", "a"}}).ok());
  EXPECT_TRUE(Check(R"({"key": "a"}, {"x-amz-meta-a": ""})", {{"key", "a"}}).ok());
}

TEST(PostPolicyCheck, StartsWith) {
  EXPECT_TRUE(Check(R"(["starts-with", "$key", "user/"])", {{"key", "user/x"}}).ok());
  EXPECT_FALSE(Check(R"(["starts-with", "$key", "user/"])", {{"key", "users/x"}}).ok());
  EXPECT_FALSE(Check(R"(["starts-with", "$key", "user/"])", {{"key", "User/x"}}).ok());
  // An empty prefix allows anything, the empty value too.
  EXPECT_TRUE(Check(R"(["starts-with", "$key", ""], ["starts-with", "$x-amz-meta-t", ""])",
                    {{"key", "anything"}, {"x-amz-meta-t", ""}})
                  .ok());
  // Content-Type: each entry of a list.
  const std::string image = R"({"key": "k"}, ["starts-with", "$Content-Type", "image/"])";
  EXPECT_TRUE(Check(image, {{"key", "k"}, {"Content-Type", "image/png, image/jpeg"}}).ok());
  EXPECT_FALSE(Check(image, {{"key", "k"}, {"Content-Type", "image/png,text/html"}}).ok());
}

TEST(PostPolicyCheck, ExtraFields) {
  auto r = Check(R"({"key": "a"})", {{"key", "a"}, {"X-Amz-Meta-Color", "red"}});
  EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(Message(r), "Invalid according to Policy: Extra input fields: X-Amz-Meta-Color");
  // What never needs a condition: the policy, the signatures, the key id, the file, and
  // x-ignore- fields.
  EXPECT_TRUE(Check(R"({"key": "a"})", {{"key", "a"},
                                        {"Policy", "..."},
                                        {"x-amz-signature", "..."},
                                        {"Signature", "..."},
                                        {"AWSAccessKeyId", "..."},
                                        {"file", "..."},
                                        {"x-ignore-note", "anything"}})
                  .ok());
  // A length range names no field.
  r = Check(R"(["content-length-range", 0, 10])", {{"key", "a"}});
  EXPECT_EQ(Message(r), "Invalid according to Policy: Extra input fields: key");
}

TEST(PostPolicyCheck, Expiry) {
  auto r = Check(R"({"key": "a"})", {{"key", "a"}}, *ParseIso8601("2026-12-30T12:00:00Z"));
  EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(Message(r), "Invalid according to Policy: Policy expired.");
  EXPECT_TRUE(
      Check(R"({"key": "a"})", {{"key", "a"}}, *ParseIso8601("2026-12-30T11:59:59.999Z")).ok());
}

TEST(PostPolicyCheck, AFieldSentTwiceIsRefused) {
  auto r = Check(R"(["starts-with", "$key", ""])", {{"key", "a"}, {"KEY", "b"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::auth
