// Bucket policies (auth/policy.h): AWS's documented examples (the S3 user guide's "Examples
// of Amazon S3 bucket policies" and the IAM condition operators), evaluated as S3 does, and
// every way a policy is refused with S3's MalformedPolicy message.
#include "auth/policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/internal/glob.h"

namespace strata::auth {
namespace {

using internal::GlobMatch;

// The request's condition values, keys lower-cased.
using MapSource = MapConditionSource;

const std::vector<std::string> kAliceIds = {"arn:aws:iam::111122223333:user/alice", "111122223333"};
const PolicyPrincipal kAlice{kAliceIds, std::string_view()};
const std::vector<std::string> kBobIds = {"arn:aws:iam::444455556666:user/bob"};
const PolicyPrincipal kBob{kBobIds,
                           "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"};

BucketPolicy MustParse(const std::string& json, std::string_view bucket = "amzn-s3-demo-bucket") {
  auto policy = BucketPolicy::Parse(json, bucket);
  EXPECT_TRUE(policy.ok()) << policy.error().message << "\n" << json;
  return std::move(policy).value();
}

PolicyDecision Decide(const BucketPolicy& policy, std::string_view action,
                      std::string_view resource, const PolicyPrincipal* who,
                      const ConditionSource* conditions = nullptr) {
  return policy.Evaluate(PolicyRequest{action, resource, who, conditions});
}

constexpr std::string_view kObject = "arn:aws:s3:::amzn-s3-demo-bucket/photos/cat.jpg";
constexpr std::string_view kBucket = "arn:aws:s3:::amzn-s3-demo-bucket";

TEST(PolicyGlobTest, StarsAndQuestionMarks) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("a*", "a/b/c"));
  EXPECT_TRUE(GlobMatch("a*c", "abbbc"));
  EXPECT_FALSE(GlobMatch("a*c", "abbbd"));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("*a*b*c*", "xxaxxbxxcxx"));
  EXPECT_FALSE(GlobMatch("*a*b*c*", "xxaxxcxxbxx"));
  EXPECT_FALSE(GlobMatch("abc", "ABC"));
  EXPECT_TRUE(GlobMatch("s3:get*", "s3:GetObject", true));
  // Escaped patterns (expanded policy variables): a backslash makes the next one literal.
  EXPECT_TRUE(GlobMatch(R"(a\*b*)", "a*bcd", false, true));
  EXPECT_FALSE(GlobMatch(R"(a\*b*)", "axbcd", false, true));
  EXPECT_TRUE(GlobMatch(R"(a\\b)", R"(a\b)", false, true));
  EXPECT_FALSE(GlobMatch(R"(a\?)", "ab", false, true));
  std::string escaped;
  internal::AppendEscaped(escaped, R"(x*?\)");
  EXPECT_EQ(escaped, R"(x\*\?\\)");
  // A hostile pattern stays cheap: pattern x text at worst.
  EXPECT_FALSE(GlobMatch(std::string(1000, '*') + "b", std::string(20000, 'a')));
}

TEST(PolicyTest, PublicReadOfObjects) {
  auto policy = MustParse(R"({
    "Version": "2012-10-17",
    "Statement": [{
      "Sid": "PublicReadGetObject",
      "Effect": "Allow",
      "Principal": "*",
      "Action": ["s3:GetObject"],
      "Resource": ["arn:aws:s3:::amzn-s3-demo-bucket/*"]
    }]
  })");
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, nullptr), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::other/photos/cat.jpg", nullptr),
            PolicyDecision::kNone);
  EXPECT_TRUE(policy.IsPublic());
  EXPECT_EQ(policy.statement_count(), 1u);
}

TEST(PolicyTest, NamesConditionKeysByPrefix) {
  auto tagged = MustParse(R"({"Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"StringEquals": {"s3:ExistingObjectTag/Classification": "public"}}}]})");
  EXPECT_TRUE(tagged.NamesConditionKeys("s3:existingobjecttag/"));
  EXPECT_FALSE(tagged.NamesConditionKeys("aws:sourceip"));
  auto plain = MustParse(R"({"Statement": [{"Effect": "Allow", "Principal": "*",
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*"}]})");
  EXPECT_FALSE(plain.NamesConditionKeys("s3:existingobjecttag/"));
}

TEST(PolicyTest, CrossAccountUserGrant) {
  auto policy = MustParse(R"({
    "Version": "2012-10-17",
    "Statement": {
      "Effect": "Allow",
      "Principal": {"AWS": ["arn:aws:iam::111122223333:user/alice"]},
      "Action": ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
      "Resource": ["arn:aws:s3:::amzn-s3-demo-bucket", "arn:aws:s3:::amzn-s3-demo-bucket/*"]
    }
  })");
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kAlice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kBob), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:DeleteObject", kObject, &kAlice), PolicyDecision::kNone);
  EXPECT_FALSE(policy.IsPublic());
  // An account names every user of it; a canonical id names one user.
  auto account = MustParse(R"({"Statement": {"Effect": "Allow",
    "Principal": {"AWS": "111122223333", "CanonicalUser":
      "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"},
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*"}})");
  EXPECT_EQ(Decide(account, "s3:GetObject", kObject, &kAlice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(account, "s3:GetObject", kObject, &kBob), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(account, "s3:GetObject", kObject, nullptr), PolicyDecision::kNone);
}

TEST(PolicyTest, AnExplicitDenyWins) {
  auto policy = MustParse(R"({
    "Statement": [
      {"Effect": "Allow", "Principal": "*", "Action": "s3:*",
       "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*"},
      {"Sid": "NoSecrets", "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
       "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/secret/*"}
    ]
  })");
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/secret/x", &kAlice),
            PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:PutObject", "arn:aws:s3:::amzn-s3-demo-bucket/secret/x", &kAlice),
            PolicyDecision::kAllow);
}

TEST(PolicyTest, ActionsAreCaseInsensitiveAndTakeWildcards) {
  auto policy = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": "*",
    "Action": "S3:get*", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*"}})");
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObjectTagging", kObject, nullptr), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr), PolicyDecision::kNone);
}

TEST(PolicyTest, RestrictToAddressesAndDenyTheRest) {
  // The user guide's "Managing access based on specific IP addresses".
  auto policy = MustParse(R"({
    "Version": "2012-10-17",
    "Id": "S3PolicyId1",
    "Statement": [{
      "Sid": "IPAllow",
      "Effect": "Deny",
      "Principal": "*",
      "Action": "s3:*",
      "Resource": ["arn:aws:s3:::amzn-s3-demo-bucket", "arn:aws:s3:::amzn-s3-demo-bucket/*"],
      "Condition": {
        "NotIpAddress": {"aws:SourceIp": ["192.0.2.0/24", "2001:DB8:1234:5678::/64"]}
      }
    }]
  })");
  MapSource inside{{"aws:sourceip", {"192.0.2.77"}}};
  MapSource outside{{"aws:sourceip", {"203.0.113.5"}}};
  MapSource v6_inside{{"aws:sourceip", {"2001:db8:1234:5678::9"}}};
  MapSource v6_outside{{"aws:sourceip", {"2001:db8:1234:5679::9"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &inside), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &outside), PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &v6_inside), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &v6_outside), PolicyDecision::kDeny);
  auto allow = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": "*",
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
    "Condition": {"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}}}})");
  EXPECT_EQ(Decide(allow, "s3:GetObject", kObject, nullptr, &inside), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(allow, "s3:GetObject", kObject, nullptr, &outside), PolicyDecision::kNone);
  EXPECT_EQ(Decide(allow, "s3:GetObject", kObject, nullptr), PolicyDecision::kNone);
  // Narrowed to addresses: not public.
  EXPECT_FALSE(allow.IsPublic());
  auto everywhere = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": "*",
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
    "Condition": {"IpAddress": {"aws:SourceIp": "0.0.0.0/0"}}}})");
  EXPECT_TRUE(everywhere.IsPublic());
  auto v6_range = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": "*",
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
    "Condition": {"IpAddress": {"aws:SourceIp": "2001:db8::/64"}}}})");
  EXPECT_FALSE(v6_range.IsPublic());
  auto v6_everywhere = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": "*",
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
    "Condition": {"IpAddress": {"aws:SourceIp": "::/0"}}}})");
  EXPECT_TRUE(v6_everywhere.IsPublic());
}

TEST(PolicyTest, HttpsOnly) {
  auto policy = MustParse(R"({"Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*"},
    {"Sid": "RestrictToTLSRequestsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
     "Resource": ["arn:aws:s3:::amzn-s3-demo-bucket", "arn:aws:s3:::amzn-s3-demo-bucket/*"],
     "Condition": {"Bool": {"aws:SecureTransport": false}}}]})");
  MapSource plain{{"aws:securetransport", {"false"}}};
  MapSource tls{{"aws:securetransport", {"true"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &plain), PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &tls), PolicyDecision::kAllow);
}

TEST(PolicyTest, ListingsLimitedToAPrefix) {
  auto policy = MustParse(R"({"Statement": [{
    "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:user/alice"},
    "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket",
    "Condition": {"StringLike": {"s3:prefix": ["home/alice/*", "shared/"]},
                  "NumericLessThanEquals": {"s3:max-keys": "100"}}}]})");
  MapSource own{{"s3:prefix", {"home/alice/photos/"}}, {"s3:max-keys", {"50"}}};
  MapSource shared{{"s3:prefix", {"shared/"}}, {"s3:max-keys", {"100"}}};
  MapSource others{{"s3:prefix", {"home/bob/"}}, {"s3:max-keys", {"50"}}};
  MapSource too_many{{"s3:prefix", {"shared/"}}, {"s3:max-keys", {"1000"}}};
  MapSource no_prefix{{"s3:max-keys", {"50"}}};
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &own), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &shared), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &others), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &too_many), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &no_prefix), PolicyDecision::kNone);
}

TEST(PolicyTest, ObjectTagsAndTheirSetOperators) {
  auto policy = MustParse(R"({"Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"StringEquals": {"s3:ExistingObjectTag/environment": "production"}}},
    {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"ForAllValues:StringLike": {"s3:RequestObjectTagKeys": ["team", "cost-*"]},
                   "ForAnyValue:StringEquals": {"s3:RequestObjectTagKeys": "team"}}}]})");
  MapSource production{{"s3:existingobjecttag/environment", {"production"}}};
  MapSource staging{{"s3:existingobjecttag/environment", {"staging"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &production), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &staging), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr), PolicyDecision::kNone);
  MapSource good{{"s3:requestobjecttagkeys", {"team", "cost-center"}}};
  MapSource stray{{"s3:requestobjecttagkeys", {"team", "owner"}}};
  MapSource no_team{{"s3:requestobjecttagkeys", {"cost-center"}}};
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr, &good), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr, &stray), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr, &no_team), PolicyDecision::kNone);
  // ForAllValues holds for a request without the key; ForAnyValue does not.
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr), PolicyDecision::kNone);
}

TEST(PolicyTest, NegatedOperatorsIfExistsAndNull) {
  auto policy = MustParse(R"({"Statement": [
    {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"StringNotEquals": {"s3:x-amz-server-side-encryption": "AES256"}}},
    {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"StringNotEqualsIfExists": {"aws:Referer": "https://example.com/"}}},
    {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"Null": {"s3:VersionId": "true"}}}]})");
  MapSource aes{{"s3:x-amz-server-side-encryption", {"AES256"}}};
  MapSource kms{{"s3:x-amz-server-side-encryption", {"aws:kms"}}};
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kAlice, &aes), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kAlice, &kms), PolicyDecision::kDeny);
  // A negated operator holds for a request without the key: no header, denied.
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kAlice), PolicyDecision::kDeny);
  MapSource from_site{{"aws:referer", {"https://example.com/"}}};
  MapSource elsewhere{{"aws:referer", {"https://evil.example/"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &from_site), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice, &elsewhere), PolicyDecision::kDeny);
  // ...IfExists holds for a request without the key (AWS: "evaluate the condition element
  // as true"), so this Deny applies to a GET without a Referer too.
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kAlice), PolicyDecision::kDeny);
  MapSource versioned{{"s3:versionid", {"3HL4kqtJvjVBH40Nrjfkd"}}};
  EXPECT_EQ(Decide(policy, "s3:DeleteObject", kObject, &kAlice), PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:DeleteObject", kObject, &kAlice, &versioned), PolicyDecision::kNone);
}

TEST(PolicyTest, DatesNumbersArnsAndCaseInsensitiveStrings) {
  auto policy = MustParse(R"({"Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
     "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2026-01-01T00:00:00Z"},
                   "DateLessThan": {"aws:EpochTime": 1893456000},
                   "ArnLike": {"aws:SourceArn": "arn:aws:cloudfront::*:distribution/*"},
                   "StringEqualsIgnoreCase": {"aws:UserAgent": "Trainer/1.0"}}}]})");
  MapSource now{{"aws:currenttime", {"2026-12-07T01:00:00Z"}},
                {"aws:epochtime", {"1796605200"}},
                {"aws:sourcearn", {"arn:aws:cloudfront::111122223333:distribution/E1"}},
                {"aws:useragent", {"trainer/1.0"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &now), PolicyDecision::kAllow);
  MapSource early{{"aws:currenttime", {"2025-12-31T23:59:59Z"}},
                  {"aws:epochtime", {"1796605200"}},
                  {"aws:sourcearn", {"arn:aws:cloudfront::111122223333:distribution/E1"}},
                  {"aws:useragent", {"trainer/1.0"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &early), PolicyDecision::kNone);
  MapSource wrong_arn{{"aws:currenttime", {"2026-12-07T01:00:00Z"}},
                      {"aws:epochtime", {"1796605200"}},
                      {"aws:sourcearn", {"arn:aws:s3:::other"}},
                      {"aws:useragent", {"trainer/1.0"}}};
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, nullptr, &wrong_arn), PolicyDecision::kNone);
  // A source ARN with a wildcard is no fixed value: S3 calls the policy public.
  EXPECT_TRUE(policy.IsPublic());
  auto fixed = MustParse(R"({"Statement": {"Effect": "Allow", "Principal": {"AWS": "*"},
    "Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
    "Condition": {"ArnEquals": {"aws:SourceArn": "arn:aws:cloudfront::111122223333:distribution/E1"}}}})");
  EXPECT_FALSE(fixed.IsPublic());
}

TEST(PolicyTest, NotPrincipalNotActionAndNotResource) {
  auto policy = MustParse(R"({"Statement": [
    {"Effect": "Deny", "NotPrincipal": {"AWS": "arn:aws:iam::111122223333:user/alice"},
     "NotAction": ["s3:GetObject", "s3:ListBucket"],
     "NotResource": "arn:aws:s3:::amzn-s3-demo-bucket/public/*"}]})");
  // Everyone but alice is denied every action but reads, outside public/.
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kBob), PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, nullptr), PolicyDecision::kDeny);
  EXPECT_EQ(Decide(policy, "s3:PutObject", kObject, &kAlice), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", kObject, &kBob), PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:PutObject", "arn:aws:s3:::amzn-s3-demo-bucket/public/a", &kBob),
            PolicyDecision::kNone);
  EXPECT_FALSE(policy.IsPublic());
}

TEST(PolicyTest, PolicyVariables) {
  // The IAM user guide's home folders: each user lists and uses only their own.
  auto policy = MustParse(R"({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket",
     "Condition": {"StringLike": {"s3:prefix": ["home/${aws:username}/*"]}}},
    {"Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:PutObject"],
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/home/${aws:username}/*"},
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/guest/${aws:username, 'nobody'}/${*}"}]})");
  MapSource alice{{"aws:username", {"alice"}}, {"s3:prefix", {"home/alice/photos/"}}};
  MapSource alice_snooping{{"aws:username", {"alice"}}, {"s3:prefix", {"home/bob/"}}};
  MapSource starry{{"aws:username", {"a*"}}};
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &alice), PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:ListBucket", kBucket, &kAlice, &alice_snooping),
            PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:PutObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/alice/x", &kAlice,
                   &alice),
            PolicyDecision::kAllow);
  EXPECT_EQ(Decide(policy, "s3:PutObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/bob/x", &kAlice,
                   &alice),
            PolicyDecision::kNone);
  // A substituted value is matched literally: a user named "a*" is not every user a-.
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/alice/x", &kAlice,
                   &starry),
            PolicyDecision::kNone);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/a*/x", &kAlice,
                   &starry),
            PolicyDecision::kAllow);
  // Without the key, a variable matches nothing; with a default, the default.
  EXPECT_EQ(Decide(policy, "s3:PutObject", "arn:aws:s3:::amzn-s3-demo-bucket/home//x", nullptr),
            PolicyDecision::kNone);
  EXPECT_EQ(
      Decide(policy, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/guest/nobody/*", nullptr),
      PolicyDecision::kAllow);
  // ${*} is a literal '*'.
  EXPECT_EQ(
      Decide(policy, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/guest/nobody/x", nullptr),
      PolicyDecision::kNone);
  // Version 2008-10-17 has no variables: "${aws:username}" is text.
  auto old = MustParse(R"({"Version": "2008-10-17", "Statement": {"Effect": "Allow",
    "Principal": "*", "Action": "s3:GetObject",
    "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/home/${aws:username}/*"}})");
  EXPECT_EQ(
      Decide(old, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/alice/x", &kAlice, &alice),
      PolicyDecision::kNone);
  EXPECT_EQ(Decide(old, "s3:GetObject", "arn:aws:s3:::amzn-s3-demo-bucket/home/${aws:username}/x",
                   &kAlice, &alice),
            PolicyDecision::kAllow);
}

TEST(PolicyTest, ItKeepsItsText) {
  const std::string text =
      R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",)"
      R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::amzn-s3-demo-bucket/*"}]})";
  EXPECT_EQ(MustParse(text).text(), text);
}

// The message of the MalformedPolicy the policy gets.
std::string Refusal(const std::string& json, std::string_view bucket = "amzn-s3-demo-bucket") {
  auto policy = BucketPolicy::Parse(json, bucket);
  if (policy.ok()) {
    return "(accepted)";
  }
  EXPECT_EQ(policy.error().code, ErrorCode::kMalformedPolicy) << json;
  return policy.error().message;
}

// A one-statement policy with `statement`'s members.
std::string With(const std::string& members) {
  return R"({"Version": "2012-10-17", "Statement": [{)" + members + "}]}";
}
const std::string kGood = R"("Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", )"
                          R"("Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")";

TEST(PolicyMalformedTest, NotJsonOrTooLarge) {
  EXPECT_EQ(Refusal("not json"), "Policies must be valid JSON and the first byte must be '{'");
  EXPECT_EQ(Refusal(""), "Policies must be valid JSON and the first byte must be '{'");
  EXPECT_EQ(Refusal("[]"), "Policies must be valid JSON and the first byte must be '{'");
  EXPECT_EQ(Refusal("{\"Statement\": "), "This policy contains invalid Json");
  EXPECT_EQ(Refusal(With(kGood) + "x"), "This policy contains invalid Json");
  EXPECT_EQ(Refusal("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"),
            "This policy contains invalid Json");
  std::string big = With(kGood);
  big.insert(1, std::string(kMaxPolicyBytes, ' '));
  EXPECT_EQ(Refusal(big), "Policies must be no larger than 20480 bytes");
}

TEST(PolicyMalformedTest, MissingOrUnknownElements) {
  EXPECT_EQ(Refusal(R"({"Version": "2012-10-17"})"), "Missing required field Statement");
  EXPECT_EQ(Refusal(R"({"Statement": []})"), "Missing required field Statement");
  EXPECT_EQ(Refusal(R"({"Version": "2012-10-18", "Statement": [{)" + kGood + "}]}"),
            "The policy must contain a valid version string");
  EXPECT_EQ(Refusal(R"({"Statement": [{)" + kGood + R"(}], "Extra": 1})"), "Unknown field Extra");
  EXPECT_EQ(Refusal(With(kGood + R"(, "Effects": "Allow")")), "Unknown field Effects");
  EXPECT_EQ(Refusal(With(R"("Principal": "*", "Action": "s3:GetObject",
                             "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Missing required field Effect");
  EXPECT_EQ(Refusal(With(R"("Effect": "Allow", "Action": "s3:GetObject",
                             "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Missing required field Principal");
  EXPECT_EQ(Refusal(With(R"("Effect": "Allow", "Principal": "*",
                             "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Missing required field Action");
  EXPECT_EQ(Refusal(With(R"("Effect": "Allow", "Principal": "*", "Action": "s3:GetObject")")),
            "Missing required field Resource");
  EXPECT_EQ(Refusal(With(R"("Effect": "Maybe", "Principal": "*", "Action": "s3:GetObject",
                             "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Invalid effect: Maybe");
  EXPECT_EQ(
      Refusal(R"({"Statement": [{"Sid": "a", )" + kGood + R"(}, {"Sid": "a", )" + kGood + "}]}"),
      "Statement IDs (SID) in a single policy must be unique");
}

TEST(PolicyMalformedTest, BadPrincipals) {
  for (const char* principal :
       {R"("alice")", R"({"AWS": "alice"})", R"({"AWS": []})", R"({"Federated": "x"})",
        R"({"CanonicalUser": "not-hex"})", R"({"AWS": "arn:aws:iam::12:user/a"})", R"({})", "3"}) {
    EXPECT_EQ(Refusal(With(std::string(R"("Effect": "Allow", "Principal": )") + principal +
                           R"(, "Action": "s3:GetObject",
                              "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
              "Invalid principal in policy")
        << principal;
  }
  EXPECT_EQ(Refusal(With(kGood + R"(, "NotPrincipal": "*")")), "Invalid principal in policy");
  EXPECT_EQ(Refusal(With(R"("Effect": "Allow", "Principal": {"AWS": "arn:aws:iam:::user/alice"},
                             "Action": "s3:GetObject",
                             "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "(accepted)");
}

TEST(PolicyMalformedTest, BadActionsAndResources) {
  const std::string head = R"("Effect": "Allow", "Principal": "*", )";
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObjekt",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Policy has invalid action");
  EXPECT_EQ(Refusal(With(head + R"("Action": "iam:PassRole",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Policy has invalid action");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:Nothing*",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Policy has invalid action");
  EXPECT_EQ(Refusal(With(head + R"("Action": [],
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Policy has invalid action");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObject",
                                  "Resource": "arn:aws:s3:::another-bucket/*")")),
            "Policy has invalid resource");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObject", "Resource": "*")")),
            "Policy has invalid resource");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObject",
                                  "Resource": "arn:aws:iam::111122223333:user/alice")")),
            "Policy has invalid resource");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObject",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket")")),
            "Action does not apply to any resource(s) in statement");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:ListBucket",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*")")),
            "Action does not apply to any resource(s) in statement");
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:ListAllMyBuckets",
                                  "Resource": "arn:aws:s3:::amzn-s3-demo-bucket")")),
            "Action does not apply to any resource(s) in statement");
  // Wildcards in the bucket's part may name it, and its objects.
  EXPECT_EQ(Refusal(With(head + R"("Action": "s3:GetObject", "Resource": "arn:aws:s3:::amzn-*")")),
            "(accepted)");
}

TEST(PolicyMalformedTest, BadConditions) {
  auto with_condition = [](const std::string& condition) {
    return Refusal(With(kGood + R"(, "Condition": )" + condition));
  };
  EXPECT_EQ(with_condition(R"({"StringEqualz": {"s3:prefix": "a"}})"),
            "Invalid Condition type : StringEqualz");
  EXPECT_EQ(with_condition(R"({"ForSomeValues:StringEquals": {"s3:prefix": "a"}})"),
            "Invalid Condition type : ForSomeValues:StringEquals");
  EXPECT_EQ(with_condition(R"({"NullIfExists": {"s3:prefix": "true"}})"),
            "Invalid Condition type : NullIfExists");
  EXPECT_EQ(with_condition(R"({"StringEquals": {"s3:prefixx": "a"}})"),
            "Policy has an invalid condition key");
  EXPECT_EQ(with_condition(R"({"StringEquals": {"prefix": "a"}})"),
            "Policy has an invalid condition key");
  EXPECT_EQ(with_condition(R"({"IpAddress": {"aws:SourceIp": "192.0.2.0/33"}})"),
            "Invalid value for condition aws:sourceip");
  EXPECT_EQ(with_condition(R"({"IpAddress": {"aws:SourceIp": "not-an-ip"}})"),
            "Invalid value for condition aws:sourceip");
  EXPECT_EQ(with_condition(R"({"NumericLessThan": {"s3:max-keys": "ten"}})"),
            "Invalid value for condition s3:max-keys");
  EXPECT_EQ(with_condition(R"({"DateLessThan": {"aws:CurrentTime": "tomorrow"}})"),
            "Invalid value for condition aws:currenttime");
  EXPECT_EQ(with_condition(R"({"Bool": {"aws:SecureTransport": "yes"}})"),
            "Invalid value for condition aws:securetransport");
  EXPECT_EQ(with_condition(R"({"StringEquals": {"s3:prefix": {"a": 1}}})"),
            "Invalid value for condition s3:prefix");
  EXPECT_EQ(with_condition(R"("StringEquals")"), "Condition must be an object");
  // Global keys strata does not fill in are accepted: they read as absent.
  EXPECT_EQ(with_condition(R"({"StringEquals": {"aws:PrincipalOrgID": "o-1"}})"), "(accepted)");
  EXPECT_EQ(with_condition(R"({"StringEquals": {"s3:ExistingObjectTag/team": "ml"}})"),
            "(accepted)");
}

}  // namespace
}  // namespace strata::auth
