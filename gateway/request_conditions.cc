#include "gateway/request_conditions.h"

#include <boost/beast/core/string.hpp>
#include <chrono>

#include "common/http_time.h"
#include "gateway/identity.h"
#include "gateway/tags.h"

namespace strata::gateway {

std::string_view AddressOf(std::string_view remote) {
  const auto colon = remote.rfind(':');
  if (colon == std::string_view::npos) {
    return remote;
  }
  std::string_view address = remote.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  return address;
}

std::optional<std::span<const std::string>> RequestConditions::One(std::string value) const {
  values_.assign(1, std::move(value));
  return std::span<const std::string>(values_);
}

std::optional<std::span<const std::string>> RequestConditions::Header(std::string_view name) const {
  if (!facts_.view.HasHeader(name)) {
    return std::nullopt;
  }
  return One(std::string(facts_.view.Header(name)));
}

std::optional<std::span<const std::string>> RequestConditions::Values(std::string_view key) const {
  const auto& auth = facts_.auth;
  if (key == "aws:sourceip") {
    return One(std::string(AddressOf(facts_.remote)));
  }
  if (key == "aws:securetransport") {
    return One(facts_.secure ? "true" : "false");
  }
  if (key == "aws:currenttime" || key == "aws:epochtime") {
    const std::int64_t ms = facts_.now_ms;
    if (key == "aws:epochtime") {
      return One(std::to_string(ms / 1000));
    }
    std::string iso = FormatIso8601(ms - ms % 1000);  // "...T10:00:00.000Z"
    iso.replace(iso.size() - 5, 4, "");               // "...T10:00:00Z"
    return One(std::move(iso));
  }
  if (key == "aws:principaltype") {
    return One(auth.anonymous ? "Anonymous" : "User");
  }
  if (key == "aws:username" || key == "aws:userid" || key == "aws:principalarn") {
    if (auth.anonymous) {
      return std::nullopt;
    }
    const std::string_view name = UserName(auth.principal);
    return One(key == "aws:principalarn" ? UserArn(name) : std::string(name));
  }
  if (key == "aws:referer" || key == "aws:useragent") {
    return Header(key == "aws:referer" ? "referer" : "user-agent");
  }
  if (key == "s3:prefix" || key == "s3:delimiter" || key == "s3:max-keys" ||
      key == "s3:versionid") {
    const std::string_view param = key == "s3:versionid" ? "versionId" : key.substr(3);
    if (auto value = facts_.target.Param(param)) {
      return One(std::string(*value));
    }
    return std::nullopt;
  }
  if (key.starts_with("s3:x-amz-")) {
    return Header(key.substr(3));
  }
  if (key == "s3:signatureversion" || key == "s3:authtype") {
    if (auth.anonymous) {
      return std::nullopt;
    }
    if (key == "s3:signatureversion") {
      return One(auth.signature_version == 2 ? "AWS" : "AWS4-HMAC-SHA256");
    }
    return One(facts_.view.HasHeader("authorization") ? "REST-HEADER" : "REST-QUERY-STRING");
  }
  constexpr std::string_view kExisting = "s3:existingobjecttag/";
  if (key.starts_with(kExisting)) {
    if (facts_.existing_tags == nullptr) {
      return std::nullopt;
    }
    for (const auto& [tag_key, tag_value] : *facts_.existing_tags) {
      if (boost::beast::iequals(tag_key, key.substr(kExisting.size()))) {
        return One(tag_value);
      }
    }
    return std::nullopt;
  }
  constexpr std::string_view kTag = "s3:requestobjecttag/";
  if (key.starts_with(kTag) || key == "s3:requestobjecttagkeys") {
    const std::string_view header = facts_.view.Header("x-amz-tagging");
    auto tags = ParseTaggingHeader(header);
    if (header.empty() || !tags.ok()) {
      return std::nullopt;  // a bad header is refused by the handler, with its own error
    }
    values_.clear();
    for (auto& [tag_key, tag_value] : *tags) {
      if (key == "s3:requestobjecttagkeys") {
        values_.push_back(std::move(tag_key));
      } else if (boost::beast::iequals(tag_key, key.substr(kTag.size()))) {
        values_.push_back(std::move(tag_value));
      }
    }
    if (values_.empty() && key != "s3:requestobjecttagkeys") {
      return std::nullopt;
    }
    return std::span<const std::string>(values_);
  }
  return std::nullopt;
}

}  // namespace strata::gateway
