#include "gateway/response_head.h"

#include <boost/beast/http/status.hpp>
#include <charconv>

namespace strata::gateway {

namespace http = boost::beast::http;

void FormatResponseHead(const http::response_header<>& header, std::string& out) {
  out.clear();
  out += header.version() == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  char code[8];
  auto end = std::to_chars(code, code + sizeof code, header.result_int()).ptr;
  out.append(code, end);
  out += ' ';
  auto reason = header.reason();
  out += reason.empty() ? http::obsolete_reason(header.result()) : reason;
  out += "\r\n";
  for (const auto& field : header) {
    out += field.name_string();
    out += ": ";
    out += field.value();
    out += "\r\n";
  }
  out += "\r\n";
}

}  // namespace strata::gateway
