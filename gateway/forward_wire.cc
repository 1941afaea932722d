#include "gateway/forward_wire.h"

#include <boost/beast/http/message.hpp>  // http::verb; verb.hpp alone misses <ostream>
#include <limits>

#include "common/little_endian.h"
#include "storage/read_cache.h"

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

// Visible ASCII only (no space, no control character).
bool IsVisibleAscii(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return false;
    }
  }
  return true;
}

// An origin-form target: a '/' and then visible ASCII only.
bool IsOriginTarget(std::string_view s) {
  return !s.empty() && s.front() == '/' && IsVisibleAscii(s);
}

// A read cache's tag (storage/read_cache.h): visible ASCII, at most kMaxReadCacheTag.
bool IsCacheTag(std::string_view s) {
  return s.size() <= storage::kMaxReadCacheTag && IsVisibleAscii(s);
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
  const bool cache = head.takes_cache || !head.cached_tag.empty() || head.secure;
  std::string out;
  out.push_back(static_cast<char>(cache ? kForwardCacheFormat : kForwardFormat));
  PutString(out, head.method);
  PutString(out, head.target);
  PutString(out, head.remote);
  PutString(out, head.request_id);
  if (cache) {
    PutLe(out, (head.takes_cache ? 1 : 0) | (head.secure ? 2 : 0), 1);
    PutString(out, head.cached_tag);
  }
  PutFields(out, head.fields);
  return out;
}

Result<ForwardedRequestHead> DecodeRequestHead(std::string_view bytes) {
  Reader in(bytes);
  std::uint64_t format = 0;
  if (!in.Int(format, 1) || (format != kForwardFormat && format != kForwardCacheFormat)) {
    return Malformed("unknown format");
  }
  ForwardedRequestHead head;
  if (!in.String(head.method) || !in.String(head.target) || !in.String(head.remote) ||
      !in.String(head.request_id)) {
    return Malformed("cut short");
  }
  if (format == kForwardCacheFormat) {
    std::uint64_t flags = 0;
    if (!in.Int(flags, 1) || !in.String(head.cached_tag)) {
      return Malformed("cut short");
    }
    if (flags > 3) {
      return Malformed("unknown flags");
    }
    head.takes_cache = (flags & 1) != 0;
    head.secure = (flags & 2) != 0;
    if (!IsCacheTag(head.cached_tag)) {
      return Malformed("a cache tag that is too long or not text");
    }
    if (!head.takes_cache && head.cached_tag.empty() && !head.secure) {
      return Malformed("format 2 without its fields");  // that is format 1
    }
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
  const bool cache = head.from_cache || !head.cache_tag.empty();
  std::string out;
  out.push_back(static_cast<char>(cache ? kForwardCacheFormat : kForwardFormat));
  PutLe(out, head.status, 2);
  PutLe(out, head.content_length, 8);
  PutLe(out, (head.close ? 1 : 0) | (head.from_cache ? 2 : 0), 1);
  if (cache) {
    PutLe(out, head.cache_first, 8);
    PutString(out, head.cache_tag);
    PutLe(out, head.cache_crc, 8);
  }
  PutFields(out, head.fields);
  return out;
}

Result<ForwardedResponseHead> DecodeResponseHead(std::string_view bytes) {
  Reader in(bytes);
  std::uint64_t format = 0;
  std::uint64_t status = 0;
  std::uint64_t length = 0;
  std::uint64_t flags = 0;
  if (!in.Int(format, 1) || (format != kForwardFormat && format != kForwardCacheFormat)) {
    return Malformed("unknown format");
  }
  if (!in.Int(status, 2) || !in.Int(length, 8) || !in.Int(flags, 1)) {
    return Malformed("cut short");
  }
  if (status < 100 || status > 599) {
    return Malformed("a status outside 100-599");
  }
  if (flags > (format == kForwardCacheFormat ? 3u : 1u)) {
    return Malformed("unknown flags");
  }
  ForwardedResponseHead head;
  head.status = static_cast<unsigned>(status);
  head.content_length = length;
  head.close = (flags & 1) != 0;
  head.from_cache = (flags & 2) != 0;
  if (format == kForwardCacheFormat) {
    if (!in.Int(head.cache_first, 8) || !in.String(head.cache_tag) || !in.Int(head.cache_crc, 8)) {
      return Malformed("cut short");
    }
    if (!IsCacheTag(head.cache_tag)) {
      return Malformed("a cache tag that is too long or not text");
    }
    if (head.cache_first > std::numeric_limits<std::uint64_t>::max() - head.content_length) {
      return Malformed("a cached range past the end of any object");
    }
    // What the encoder never writes: one encoding per head.
    if ((!head.from_cache && (head.cache_first != 0 || head.cache_tag.empty())) ||
        (head.cache_tag.empty() && head.cache_crc != 0)) {
      return Malformed("format 2 with fields that do not go together");
    }
  }
  auto fields = ReadLastFields(in);
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  head.fields = std::move(fields).value();
  return head;
}

}  // namespace strata::gateway
