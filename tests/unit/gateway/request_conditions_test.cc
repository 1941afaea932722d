#include "gateway/request_conditions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::gateway {
namespace {

// 2026-12-07T10:00:00.250Z
constexpr std::int64_t kNowMs = 1796637600250;

struct Request {
  explicit Request(std::string target_text,
                   std::vector<std::pair<std::string, std::string>> header_list = {})
      : target(*ParseS3Target(target_text, "localhost", "")), headers(std::move(header_list)) {
    for (const auto& [name, value] : headers) {
      view.headers.emplace_back(name, value);
    }
  }
  std::vector<std::string> Values(std::string_view key, bool secure = false) {
    const RequestFacts facts{target, view, auth, "127.0.0.9:41234", secure, kNowMs, existing};
    RequestConditions conditions(facts);
    auto values = conditions.Values(key);
    if (!values) {
      return {"<absent>"};
    }
    return std::vector<std::string>(values->begin(), values->end());
  }

  S3Target target;
  std::vector<std::pair<std::string, std::string>> headers;
  auth::RequestView view;
  auth::AuthResult auth;
  const metadata::Tags* existing = nullptr;
};

using V = std::vector<std::string>;
const V kAbsent = {"<absent>"};

TEST(RequestConditions, TheConnectionAndTheMoment) {
  Request r("/data/k");
  r.auth.principal.access_key = "bob";
  EXPECT_EQ(r.Values("aws:sourceip"), V{"127.0.0.9"});
  EXPECT_EQ(r.Values("aws:securetransport"), V{"false"});
  EXPECT_EQ(r.Values("aws:securetransport", true), V{"true"});
  EXPECT_EQ(r.Values("aws:currenttime"), V{"2026-12-07T10:00:00Z"});
  EXPECT_EQ(r.Values("aws:epochtime"), V{"1796637600"});
}

TEST(RequestConditions, TheCaller) {
  Request r("/data/k");
  r.auth.principal.access_key = "bob";
  r.auth.signature_version = 4;
  EXPECT_EQ(r.Values("aws:username"), V{"bob"});
  EXPECT_EQ(r.Values("aws:userid"), V{"bob"});
  EXPECT_EQ(r.Values("aws:principalarn"), V{"arn:aws:iam:::user/bob"});
  EXPECT_EQ(r.Values("aws:principaltype"), V{"User"});
  EXPECT_EQ(r.Values("s3:signatureversion"), V{"AWS4-HMAC-SHA256"});
  EXPECT_EQ(r.Values("s3:authtype"), V{"REST-QUERY-STRING"});  // no Authorization header
  r.auth.signature_version = 2;
  EXPECT_EQ(r.Values("s3:signatureversion"), V{"AWS"});

  Request signed_header("/data/k", {{"Authorization", "AWS4-HMAC-SHA256 ..."}});
  signed_header.auth.principal.access_key = "bob";
  EXPECT_EQ(signed_header.Values("s3:authtype"), V{"REST-HEADER"});

  Request anonymous("/data/k");
  anonymous.auth.anonymous = true;
  EXPECT_EQ(anonymous.Values("aws:principaltype"), V{"Anonymous"});
  for (const char* key :
       {"aws:username", "aws:userid", "aws:principalarn", "s3:signatureversion", "s3:authtype"}) {
    EXPECT_EQ(anonymous.Values(key), kAbsent) << key;
  }
}

TEST(RequestConditions, TheQueryAndTheHeaders) {
  Request list("/data?list-type=2&prefix=home%2Fbob%2F&delimiter=%2F&max-keys=10",
               {{"Referer", "https://example.com/page"},
                {"User-Agent", "aws-cli/2"},
                {"X-Amz-Acl", "public-read"},
                {"x-amz-server-side-encryption", "AES256"},
                {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}});
  EXPECT_EQ(list.Values("s3:prefix"), V{"home/bob/"});
  EXPECT_EQ(list.Values("s3:delimiter"), V{"/"});
  EXPECT_EQ(list.Values("s3:max-keys"), V{"10"});
  EXPECT_EQ(list.Values("s3:versionid"), kAbsent);
  EXPECT_EQ(list.Values("aws:referer"), V{"https://example.com/page"});
  EXPECT_EQ(list.Values("aws:useragent"), V{"aws-cli/2"});
  EXPECT_EQ(list.Values("s3:x-amz-acl"), V{"public-read"});
  EXPECT_EQ(list.Values("s3:x-amz-server-side-encryption"), V{"AES256"});
  EXPECT_EQ(list.Values("s3:x-amz-content-sha256"), V{"UNSIGNED-PAYLOAD"});
  EXPECT_EQ(list.Values("s3:x-amz-grant-read"), kAbsent);
  EXPECT_EQ(list.Values("aws:unknownkey"), kAbsent);

  Request version("/data/k?versionId=3HL4kqtJ");
  EXPECT_EQ(version.Values("s3:versionid"), V{"3HL4kqtJ"});
  EXPECT_EQ(version.Values("s3:prefix"), kAbsent);
  Request plain("/data/k");
  EXPECT_EQ(plain.Values("aws:referer"), kAbsent);
}

TEST(RequestConditions, TheTagsOfTheRequest) {
  Request r("/data/k", {{"x-amz-tagging", "Team=ml&stage=dev&Empty"}});
  EXPECT_EQ(r.Values("s3:requestobjecttag/team"), V{"ml"});
  EXPECT_EQ(r.Values("s3:requestobjecttag/stage"), V{"dev"});
  EXPECT_EQ(r.Values("s3:requestobjecttag/empty"), V{""});
  EXPECT_EQ(r.Values("s3:requestobjecttag/other"), kAbsent);
  EXPECT_EQ(r.Values("s3:requestobjecttagkeys"), (V{"Team", "stage", "Empty"}));
  Request none("/data/k");
  EXPECT_EQ(none.Values("s3:requestobjecttagkeys"), kAbsent);
  EXPECT_EQ(none.Values("s3:requestobjecttag/team"), kAbsent);
  Request bad("/data/k", {{"x-amz-tagging", "a=%zz"}});
  EXPECT_EQ(bad.Values("s3:requestobjecttagkeys"), kAbsent);
}

TEST(RequestConditions, TheTagsOfTheVersionAddressed) {
  Request r("/data/k");
  EXPECT_EQ(r.Values("s3:existingobjecttag/team"), kAbsent);  // not read
  const metadata::Tags tags = {{"Team", "ml"}, {"empty", ""}};
  r.existing = &tags;
  EXPECT_EQ(r.Values("s3:existingobjecttag/team"), V{"ml"});
  EXPECT_EQ(r.Values("s3:existingobjecttag/empty"), V{""});
  EXPECT_EQ(r.Values("s3:existingobjecttag/other"), kAbsent);
}

TEST(RequestConditions, AddressOfARemote) {
  EXPECT_EQ(AddressOf("127.0.0.1:5555"), "127.0.0.1");
  EXPECT_EQ(AddressOf("::1:5555"), "::1");
  EXPECT_EQ(AddressOf("[::1]:80"), "::1");
  EXPECT_EQ(AddressOf("?"), "?");
}

}  // namespace
}  // namespace strata::gateway
