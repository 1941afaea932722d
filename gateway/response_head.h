// The status line and header fields of a response as the bytes sent on the wire, built
// into a string the session keeps, so a header and the first body bytes can go out in
// one write (one segment for a small object) instead of Beast's header serializer, which
// writes the header on its own.
#pragma once

#include <boost/beast/http/message.hpp>
#include <string>

namespace strata::gateway {

// Replaces `out` with "HTTP/1.1 <code> <reason>\r\n", each field as "Name: value\r\n",
// and the closing "\r\n".
void FormatResponseHead(const boost::beast::http::response_header<>& header, std::string& out);

}  // namespace strata::gateway
