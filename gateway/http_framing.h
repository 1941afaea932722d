// HTTP/1.1 message framing rules (RFC 9112 sections 2.2, 3.2, 5.2 and 6) that Beast's
// parser does not enforce. A request whose body length two parties could read
// differently (a proxy and strata) is how requests are smuggled: such a request is
// answered 400 and the connection closed, never framed by a guess. Pure functions, no
// I/O; any thread.
#pragma once

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace strata::gateway {

// Why a request head is refused: the status, S3's <Code> and a message for the client.
// The connection always closes after it (the rest of the stream cannot be framed).
struct FramingError {
  unsigned status = 400;
  std::string code = "BadRequest";
  std::string message;
};

// What the raw bytes of a request head, as received, say before Beast parses them.
struct HeadScan {
  bool complete = false;  // the empty line ending the header section is in `bytes`
  bool obs_fold = false;  // a field line (or the line after the request line) starts
                          // with SP or HTAB: obsolete line folding, which Beast would
                          // silently join into the previous field's value
};

// Scans `bytes`, the start of a request head, up to the end of its header section.
HeadScan ScanRequestHead(std::string_view bytes);

// Checks a parsed request head: Host (exactly one, well formed, in HTTP/1.1),
// Transfer-Encoding (chunked, last and once; never with Content-Length or in HTTP/1.0)
// and Content-Length (digits only; repeated values must agree). nullopt: framed safely.
std::optional<FramingError> CheckFraming(
    const boost::beast::http::request_header<boost::beast::http::fields>& req);

}  // namespace strata::gateway
