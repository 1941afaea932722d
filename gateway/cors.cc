#include "gateway/cors.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <charconv>
#include <pugixml.hpp>

#include "common/text.h"
#include "gateway/xml.h"
#include "gateway/xml_load.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kMethods[] = {"GET", "PUT", "POST", "DELETE", "HEAD"};

// `text` matches `pattern`, which holds at most one '*' (any run of characters).
bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case) {
  auto equal = [ignore_case](std::string_view a, std::string_view b) {
    return ignore_case ? boost::beast::iequals(a, b) : a == b;
  };
  const auto star = pattern.find('*');
  if (star == std::string_view::npos) {
    return equal(pattern, text);
  }
  const std::string_view prefix = pattern.substr(0, star);
  const std::string_view suffix = pattern.substr(star + 1);
  return text.size() >= prefix.size() + suffix.size() &&
         equal(text.substr(0, prefix.size()), prefix) &&
         equal(text.substr(text.size() - suffix.size()), suffix);
}

bool AtMostOneWildcard(std::string_view s) { return std::count(s.begin(), s.end(), '*') <= 1; }

// What may go back into a response header: visible ASCII and spaces, nothing else (no
// CR or LF a decoded character reference could smuggle in).
bool HeaderSafe(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

bool HasElementChild(const pugi::xml_node& node) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_element) {
      return true;
    }
  }
  return false;
}

Result<CorsRule> ReadRule(const pugi::xml_node& node) {
  CorsRule rule;
  bool has_id = false;
  for (auto field : node.children()) {
    if (field.type() == pugi::node_pcdata || field.type() == pugi::node_cdata) {
      return MalformedXmlError();
    }
    if (field.type() != pugi::node_element) {
      continue;
    }
    if (HasElementChild(field)) {
      return MalformedXmlError();
    }
    const std::string_view name = field.name();
    std::string text = field.text().get();
    if (name != "ID" && !HeaderSafe(text)) {
      return MalformedXmlError();
    }
    if (name == "ID") {
      if (has_id || text.size() > 255) {
        return MalformedXmlError();
      }
      has_id = true;
      rule.id = std::move(text);
    } else if (name == "AllowedOrigin") {
      if (!AtMostOneWildcard(text)) {
        return Error(ErrorCode::kInvalidRequest,
                     "AllowedOrigin \"" + text + "\" can not have more than one wildcard.");
      }
      rule.allowed_origins.push_back(std::move(text));
    } else if (name == "AllowedMethod") {
      if (std::find(std::begin(kMethods), std::end(kMethods), text) == std::end(kMethods)) {
        return Error(ErrorCode::kInvalidRequest,
                     "Found unsupported HTTP method in CORS config. Unsupported method is " + text);
      }
      rule.allowed_methods.push_back(std::move(text));
    } else if (name == "AllowedHeader") {
      if (!AtMostOneWildcard(text)) {
        return Error(ErrorCode::kInvalidRequest,
                     "AllowedHeader \"" + text + "\" can not have more than one wildcard.");
      }
      rule.allowed_headers.push_back(std::move(text));
    } else if (name == "ExposeHeader") {
      rule.expose_headers.push_back(std::move(text));
    } else if (name == "MaxAgeSeconds") {
      std::int64_t seconds = -1;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
      if (rule.max_age_seconds || ec != std::errc() || end != text.data() + text.size() ||
          seconds < 0) {
        return MalformedXmlError();
      }
      rule.max_age_seconds = seconds;
    } else {
      return MalformedXmlError();
    }
  }
  if (rule.allowed_origins.empty() || rule.allowed_methods.empty()) {
    return MalformedXmlError();
  }
  return rule;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

}  // namespace

Result<CorsConfiguration> ParseCorsConfiguration(std::string_view body) {
  if (body.size() > kMaxCorsBody) {
    return MalformedXmlError();
  }
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "CORSConfiguration");
  if (!root) {
    return MalformedXmlError();
  }
  CorsConfiguration config;
  for (auto node : root.children()) {
    if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
      return MalformedXmlError();
    }
    if (node.type() != pugi::node_element) {
      continue;
    }
    if (std::string_view(node.name()) != "CORSRule" || config.rules.size() == kMaxCorsRules) {
      return MalformedXmlError();
    }
    auto rule = ReadRule(node);
    if (!rule.ok()) {
      return std::move(rule).error();
    }
    config.rules.push_back(std::move(rule).value());
  }
  if (config.rules.empty()) {
    return MalformedXmlError();
  }
  return config;
}

std::string CorsConfigurationXml(const CorsConfiguration& config) {
  XmlWriter xml("CORSConfiguration");
  for (const auto& rule : config.rules) {
    xml.Open("CORSRule");
    if (!rule.id.empty()) {
      xml.Element("ID", rule.id);
    }
    for (const auto& v : rule.allowed_headers) {
      xml.Element("AllowedHeader", v);
    }
    for (const auto& v : rule.allowed_methods) {
      xml.Element("AllowedMethod", v);
    }
    for (const auto& v : rule.allowed_origins) {
      xml.Element("AllowedOrigin", v);
    }
    for (const auto& v : rule.expose_headers) {
      xml.Element("ExposeHeader", v);
    }
    if (rule.max_age_seconds) {
      xml.Element("MaxAgeSeconds", std::to_string(*rule.max_age_seconds));
    }
    xml.Close();
  }
  return xml.Finish();
}

const CorsRule* MatchCorsRule(const CorsConfiguration& config, const CorsRequest& request) {
  if (request.origin.empty() || request.method.empty()) {
    return nullptr;
  }
  for (const auto& rule : config.rules) {
    const bool origin = std::any_of(
        rule.allowed_origins.begin(), rule.allowed_origins.end(),
        [&](const std::string& allowed) { return WildcardMatch(allowed, request.origin, false); });
    const bool method = std::find(rule.allowed_methods.begin(), rule.allowed_methods.end(),
                                  request.method) != rule.allowed_methods.end();
    const bool headers =
        std::all_of(request.headers.begin(), request.headers.end(), [&](std::string_view header) {
          return std::any_of(
              rule.allowed_headers.begin(), rule.allowed_headers.end(),
              [&](const std::string& allowed) { return WildcardMatch(allowed, header, true); });
        });
    if (origin && method && headers) {
      return &rule;
    }
  }
  return nullptr;
}

std::vector<std::string_view> SplitHeaderList(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = TrimBlanks(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> CorsResponseHeaders(const CorsRule& rule,
                                                                     const CorsRequest& request,
                                                                     bool preflight) {
  const bool any_origin = std::find(rule.allowed_origins.begin(), rule.allowed_origins.end(),
                                    "*") != rule.allowed_origins.end();
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("Access-Control-Allow-Origin", any_origin ? "*" : std::string(request.origin));
  out.emplace_back("Access-Control-Allow-Methods", Joined(rule.allowed_methods));
  if (preflight && !request.headers.empty()) {
    std::string headers;
    for (auto h : request.headers) {
      headers += (headers.empty() ? "" : ", ") + std::string(h);
    }
    out.emplace_back("Access-Control-Allow-Headers", std::move(headers));
  }
  if (!preflight && !rule.expose_headers.empty()) {
    out.emplace_back("Access-Control-Expose-Headers", Joined(rule.expose_headers));
  }
  if (rule.max_age_seconds) {
    out.emplace_back("Access-Control-Max-Age", std::to_string(*rule.max_age_seconds));
  }
  if (!any_origin) {
    out.emplace_back("Access-Control-Allow-Credentials", "true");
  }
  return out;
}

}  // namespace strata::gateway
