#include "gateway/http_framing.h"

#include <boost/beast/core/string.hpp>
#include <charconv>
#include <cstdint>
#include <vector>

namespace strata::gateway {
namespace {

namespace http = boost::beast::http;

constexpr std::string_view kOws = " \t";

std::string_view Trim(std::string_view s) {
  auto first = s.find_first_not_of(kOws);
  if (first == std::string_view::npos) {
    return {};
  }
  auto last = s.find_last_not_of(kOws);
  return s.substr(first, last - first + 1);
}

// The elements of a #list field value (RFC 9110 5.6.1): comma-separated, empty elements
// ignored as recipients must.
void SplitList(std::string_view value, std::vector<std::string_view>& out) {
  while (true) {
    auto comma = value.find(',');
    auto element = Trim(value.substr(0, comma));
    if (!element.empty()) {
      out.push_back(element);
    }
    if (comma == std::string_view::npos) {
      return;
    }
    value.remove_prefix(comma + 1);
  }
}

FramingError Bad(std::string message) {
  return FramingError{400, "BadRequest", std::move(message)};
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// uri-host [ ":" port ] (RFC 9110 7.2, RFC 3986 3.2.2): a reg-name or IPv4 address of
// unreserved, sub-delims and %-escapes, or an IP-literal in brackets.
bool IsValidHost(std::string_view host) {
  std::string_view port;
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    if (close == std::string_view::npos || close == 1) {
      return false;
    }
    for (char c : host.substr(1, close - 1)) {
      bool hex = IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex && c != ':' && c != '.' && c != 'v' && c != 'V') {
        return false;
      }
    }
    auto rest = host.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return false;
      }
      port = rest.substr(1);
    }
  } else {
    auto colon = host.find(':');
    std::string_view name = host.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = host.substr(colon + 1);
    }
    static constexpr std::string_view kAllowed = "-._~!$&'()*+,;=%";
    for (char c : name) {
      bool alnum = IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      if (!alnum && kAllowed.find(c) == std::string_view::npos) {
        return false;
      }
    }
  }
  for (char c : port) {
    if (!IsDigit(c)) {
      return false;
    }
  }
  return port.size() <= 5;
}

}  // namespace

HeadScan ScanRequestHead(std::string_view bytes) {
  HeadScan scan;
  // Empty lines before the request line are ignored (RFC 9112 2.2), as Beast does.
  std::size_t pos = 0;
  while (pos < bytes.size() && (bytes[pos] == '\r' || bytes[pos] == '\n')) {
    ++pos;
  }
  bool request_line = true;
  while (pos < bytes.size()) {
    auto lf = bytes.find('\n', pos);
    if (lf == std::string_view::npos) {
      return scan;
    }
    std::string_view line = bytes.substr(pos, lf - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty()) {
      scan.complete = true;
      return scan;
    }
    if (!request_line && (line.front() == ' ' || line.front() == '\t')) {
      scan.obs_fold = true;
    }
    request_line = false;
    pos = lf + 1;
  }
  return scan;
}

std::optional<FramingError> CheckFraming(const http::request_header<http::fields>& req) {
  const unsigned version = req.version();
  if (version / 10 != 1) {
    return FramingError{505, "HttpVersionNotSupported",
                        "The HTTP version specified is not supported."};
  }
  std::size_t hosts = 0;
  std::string_view host;
  std::vector<std::string_view> codings;
  bool has_transfer_encoding = false;
  std::vector<std::string_view> lengths;
  bool has_content_length = false;
  for (const auto& field : req) {
    switch (field.name()) {
      case http::field::host:
        ++hosts;
        host = field.value();
        break;
      case http::field::transfer_encoding:
        has_transfer_encoding = true;
        SplitList(field.value(), codings);
        break;
      case http::field::content_length:
        has_content_length = true;
        SplitList(field.value(), lengths);
        break;
      default:
        break;
    }
  }
  // RFC 9112 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to
  // any request with more than one Host line or an invalid Host value.
  if (hosts > 1) {
    return Bad("The request has more than one Host header.");
  }
  if (hosts == 0 && version == 11) {
    return Bad("The request has no Host header.");
  }
  if (hosts == 1 && !IsValidHost(host)) {
    return Bad("The Host header is not a valid host[:port].");
  }
  if (has_transfer_encoding) {
    // RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
    if (version == 10) {
      return Bad("Transfer-Encoding is not allowed in an HTTP/1.0 request.");
    }
    // RFC 9112 6.3 item 3 lets a server process such a request by Transfer-Encoding;
    // refusing it is the choice that cannot disagree with a proxy in front.
    if (has_content_length) {
      return Bad("A request may not have both Transfer-Encoding and Content-Length.");
    }
    // RFC 9112 6.3 item 4: chunked not the final coding, the length is unknowable.
    if (codings.empty() || !boost::beast::iequals(codings.back(), "chunked")) {
      return Bad("The final Transfer-Encoding of a request must be chunked.");
    }
    // RFC 9112 7: chunked must not be applied more than once.
    for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
      if (boost::beast::iequals(codings[i], "chunked")) {
        return Bad("Transfer-Encoding applies chunked more than once.");
      }
    }
    // Other codings (gzip, deflate, ...) under chunked are framed safely but not decoded.
    if (codings.size() > 1) {
      return FramingError{501, "NotImplemented",
                          "A header you provided implies functionality that is not implemented: "
                          "Transfer-Encoding " +
                              std::string(codings.front())};
    }
  }
  if (has_content_length) {
    // RFC 9110 8.6: 1*DIGIT; a list of identical values may be taken as one, differing
    // ones are unrecoverable framing errors.
    if (lengths.empty()) {
      return Bad("The Content-Length header is empty.");
    }
    std::optional<std::uint64_t> first;
    for (auto value : lengths) {
      std::uint64_t n = 0;
      // 19 digits always fit in 64 bits; Beast's own limit refuses sizes past 6 GiB.
      bool digits = !value.empty() && value.size() <= 19;
      for (char c : value) {
        digits = digits && IsDigit(c);
      }
      if (!digits) {
        return Bad("The Content-Length header is not a valid number.");
      }
      (void)std::from_chars(value.data(), value.data() + value.size(), n);
      if (first && *first != n) {
        return Bad("The request has Content-Length values that differ.");
      }
      first = n;
    }
  }
  return std::nullopt;
}

}  // namespace strata::gateway
