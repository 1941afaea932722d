#include "gateway/object_lock_xml.h"

#include <gtest/gtest.h>

#include <string>

#include "common/http_time.h"

namespace strata::gateway {
namespace {

ErrorCode CodeOfConfig(const std::string& body) {
  auto parsed = ParseObjectLockConfiguration(body);
  return parsed.ok() ? ErrorCode::kInternal : parsed.error().code;
}

TEST(ObjectLockXml, ConfigurationRoundTrips) {
  auto plain = ParseObjectLockConfiguration(
      "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>"
      "</ObjectLockConfiguration>");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(plain->enabled);
  EXPECT_TRUE(plain->default_mode.empty());
  for (const auto& config : {metadata::ObjectLockConfig{true, "GOVERNANCE", 30, 0},
                             metadata::ObjectLockConfig{true, "COMPLIANCE", 0, 2},
                             metadata::ObjectLockConfig{true, "", 0, 0}}) {
    auto again = ParseObjectLockConfiguration(ObjectLockConfigurationXml(config));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, config);
  }
}

TEST(ObjectLockXml, ConfigurationRefusesWhatS3Refuses) {
  auto with_rule = [](const std::string& retention) {
    return "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule>"
           "<DefaultRetention>" +
           retention + "</DefaultRetention></Rule></ObjectLockConfiguration>";
  };
  EXPECT_EQ(CodeOfConfig("<ObjectLockConfiguration/>"), ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig("<ObjectLockConfiguration><ObjectLockEnabled>Disabled"
                         "</ObjectLockEnabled></ObjectLockConfiguration>"),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>GOVERNANCE</Mode>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>")),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>FOREVER</Mode><Days>1</Days>")),
            ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig(with_rule("<Days>1</Days>")), ErrorCode::kMalformedXml);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>GOVERNANCE</Mode><Days>0</Days>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>GOVERNANCE</Mode><Days>-3</Days>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>GOVERNANCE</Mode><Days>x</Days>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>COMPLIANCE</Mode><Years>101</Years>")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CodeOfConfig(with_rule("<Mode>COMPLIANCE</Mode><Years>99999999999999999999</Years>")),
            ErrorCode::kInvalidArgument);
}

TEST(ObjectLockXml, RetentionAndLegalHold) {
  auto retention = ParseRetention(
      "<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-02T03:04:05.678Z"
      "</RetainUntilDate></Retention>");
  ASSERT_TRUE(retention.ok()) << retention.error().message;
  EXPECT_EQ(retention->mode, "COMPLIANCE");
  EXPECT_EQ(retention->until_ms, *ParseIso8601("2030-01-02T03:04:05.678Z"));
  auto again = ParseRetention(RetentionXml(*retention));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->until_ms, retention->until_ms);
  auto none = ParseRetention("<Retention/>");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->mode.empty());
  EXPECT_FALSE(ParseRetention("<Retention><Mode>COMPLIANCE</Mode></Retention>").ok());
  EXPECT_FALSE(ParseRetention("<Retention><Mode>X</Mode><RetainUntilDate>2030-01-02T03:04:05Z"
                              "</RetainUntilDate></Retention>")
                   .ok());
  auto bad_date = ParseRetention(
      "<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>tomorrow</RetainUntilDate></Retention>");
  ASSERT_FALSE(bad_date.ok());
  EXPECT_EQ(bad_date.error().code, ErrorCode::kInvalidArgument);

  EXPECT_EQ(ParseLegalHold("<LegalHold><Status>ON</Status></LegalHold>").value(), true);
  EXPECT_EQ(ParseLegalHold(LegalHoldXml(false)).value(), false);
  EXPECT_FALSE(ParseLegalHold("<LegalHold><Status>on</Status></LegalHold>").ok());
  EXPECT_FALSE(ParseLegalHold("<LegalHold/>").ok());
  EXPECT_FALSE(
      ParseLegalHold("<LegalHold><Status>ON</Status><Status>ON</Status></LegalHold>").ok());
}

TEST(ObjectLockXml, HeadersOfAWrite) {
  const std::int64_t now = *ParseIso8601("2026-12-07T00:00:00Z");
  auto none = ParseLockHeaders("", "", "", now);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->any());
  auto both = ParseLockHeaders("GOVERNANCE", "2027-01-01T00:00:00Z", "ON", now);
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(both->retention->mode, "GOVERNANCE");
  EXPECT_EQ(both->legal_hold, true);
  auto code_of = [&](std::string_view mode, std::string_view until, std::string_view hold) {
    auto parsed = ParseLockHeaders(mode, until, hold, now);
    return parsed.ok() ? ErrorCode::kInternal : parsed.error().code;
  };
  EXPECT_EQ(code_of("GOVERNANCE", "", ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("", "2027-01-01T00:00:00Z", ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("governance", "2027-01-01T00:00:00Z", ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("COMPLIANCE", "2026-01-01T00:00:00Z", ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("COMPLIANCE", "soon", ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of("", "", "YES"), ErrorCode::kInvalidArgument);
}

TEST(ObjectLockXml, DefaultRetentionCountsFromTheWrite) {
  EXPECT_TRUE(DefaultRetention(metadata::ObjectLockConfig{true, "", 0, 0}, 5).mode.empty());
  EXPECT_TRUE(
      DefaultRetention(metadata::ObjectLockConfig{false, "GOVERNANCE", 1, 0}, 5).mode.empty());
  auto days = DefaultRetention(metadata::ObjectLockConfig{true, "GOVERNANCE", 2, 0}, 1000);
  EXPECT_EQ(days.mode, "GOVERNANCE");
  EXPECT_EQ(days.until_ms, 1000 + 2 * 86'400'000LL);
  auto years = DefaultRetention(metadata::ObjectLockConfig{true, "COMPLIANCE", 0, 1}, 0);
  EXPECT_EQ(years.until_ms, 365 * 86'400'000LL);
}

}  // namespace
}  // namespace strata::gateway
