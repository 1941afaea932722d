#include "gateway/forward_wire.h"

#include <boost/beast/http/message.hpp>  // http::verb; verb.hpp alone misses <ostream>

#include "common/little_endian.h"

namespace strata::gateway {
namespace {

Error Malformed(std::string_view what) {
  return Error(ErrorCode::kCorruption, "forwarded head: " + std::string(what));
}

void PutString(std::string& out, std::string_view s) {
  PutLe(out, s.size(), 4);
  out.append(s);
}

void PutFields(std::string& out, const ForwardedFields& fields) {
  PutLe(out, fields.size(), 4);
  for (const auto& [name, value] : fields) {
    PutString(out, name);
    PutString(out, value);
  }
}

// Reads fields front to back; every read checks what is left first.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool Int(std::uint64_t& value, int bytes) {
    if (in_.size() < static_cast<std::size_t>(bytes)) {
      return false;
    }
    value = GetLe(in_, 0, bytes);
    in_.remove_prefix(static_cast<std::size_t>(bytes));
    return true;
  }
  bool String(std::string& out) {
    std::uint64_t size = 0;
    if (!Int(size, 4) || size > in_.size()) {
      return false;
    }
    out.assign(in_.substr(0, size));
    in_.remove_prefix(size);
    return true;
  }
  bool empty() const { return in_.empty(); }

 private:
  std::string_view in_;
};

bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') {
    return true;
  }
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
    return true;
  }
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

bool IsFieldValue(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// An origin-form target: a '/' and then visible ASCII only.
bool IsOriginTarget(std::string_view s) {
  if (s.empty() || s.front() != '/') {
    return false;
  }
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return false;
    }
  }
  return true;
}

Result<ForwardedFields> ReadFields(Reader& in) {
  std::uint64_t count = 0;
  if (!in.Int(count, 4)) {
    return Malformed("cut short");
  }
  if (count > kMaxForwardedFields) {
    return Malformed("too many fields");
  }
  ForwardedFields fields;
  fields.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name;
    std::string value;
    if (!in.String(name) || !in.String(value)) {
      return Malformed("cut short");
    }
    if (!IsToken(name) || !IsFieldValue(value)) {
      return Malformed("a field that HTTP does not allow");
    }
    fields.emplace_back(std::move(name), std::move(value));
  }
  return fields;
}

// The fields that end a head: nothing may follow them.
Result<ForwardedFields> ReadLastFields(Reader& in) {
  auto fields = ReadFields(in);
  if (fields.ok() && !in.empty()) {
    return Malformed("trailing bytes");
  }
  return fields;
}

}  // namespace

std::string EncodeRequestHead(const ForwardedRequestHead& head) {
  std::string out;
  out.push_back(static_cast<char>(kForwardFormat));
  PutString(out, head.method);
  PutString(out, head.target);
  PutString(out, head.remote);
  PutString(out, head.request_id);
  PutFields(out, head.fields);
  return out;
}

Result<ForwardedRequestHead> DecodeRequestHead(std::string_view bytes) {
  Reader in(bytes);
  std::uint64_t format = 0;
  if (!in.Int(format, 1) || format != kForwardFormat) {
    return Malformed("unknown format");
  }
  ForwardedRequestHead head;
  if (!in.String(head.method) || !in.String(head.target) || !in.String(head.remote) ||
      !in.String(head.request_id)) {
    return Malformed("cut short");
  }
  if (boost::beast::http::string_to_verb(head.method) == boost::beast::http::verb::unknown) {
    return Malformed("unknown method");
  }
  if (!IsOriginTarget(head.target)) {
    return Malformed("a target that is not a path");
  }
  if (!IsFieldValue(head.remote) || !IsFieldValue(head.request_id)) {
    return Malformed("a control character in the remote address or request id");
  }
  auto fields = ReadLastFields(in);
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  head.fields = std::move(fields).value();
  return head;
}

std::string EncodeResponseHead(const ForwardedResponseHead& head) {
  std::string out;
  out.push_back(static_cast<char>(kForwardFormat));
  PutLe(out, head.status, 2);
  PutLe(out, head.content_length, 8);
  PutLe(out, head.close ? 1 : 0, 1);
  PutFields(out, head.fields);
  return out;
}

Result<ForwardedResponseHead> DecodeResponseHead(std::string_view bytes) {
  Reader in(bytes);
  std::uint64_t format = 0;
  std::uint64_t status = 0;
  std::uint64_t length = 0;
  std::uint64_t flags = 0;
  if (!in.Int(format, 1) || format != kForwardFormat) {
    return Malformed("unknown format");
  }
  if (!in.Int(status, 2) || !in.Int(length, 8) || !in.Int(flags, 1)) {
    return Malformed("cut short");
  }
  if (status < 100 || status > 599) {
    return Malformed("a status outside 100-599");
  }
  if (flags > 1) {
    return Malformed("unknown flags");
  }
  ForwardedResponseHead head;
  head.status = static_cast<unsigned>(status);
  head.content_length = length;
  head.close = flags == 1;
  auto fields = ReadLastFields(in);
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  head.fields = std::move(fields).value();
  return head;
}

}  // namespace strata::gateway
