// Little-endian integers in byte strings: the on-disk chunk trailers, the peer
// transport's frames and the peers' messages store their fields this way, whatever the
// host's byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

// Appends the low `bytes` bytes of `value` (1 to 8), least significant first.
inline void PutLe(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// The `bytes`-byte (1 to 8) little-endian integer at `offset` of `in`, which must hold it.
inline std::uint64_t GetLe(std::string_view in, std::size_t offset, int bytes) {
  std::uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<unsigned char>(in[offset + static_cast<std::size_t>(i)]);
  }
  return value;
}

// Appends `s` with its length first, as a 4-byte little-endian integer.
inline void PutLeString(std::string& out, std::string_view s) {
  PutLe(out, s.size(), 4);
  out.append(s);
}

// Reads a byte string front to back (the peers' wire formats): every read checks what is
// left first and returns false, consuming nothing more, when it is not there.
struct LeCursor {
  std::string_view in;
  std::size_t offset = 0;

  std::size_t left() const { return in.size() - offset; }
  bool Int(std::uint64_t& value, int bytes) {
    if (left() < static_cast<std::size_t>(bytes)) {
      return false;
    }
    value = GetLe(in, offset, bytes);
    offset += static_cast<std::size_t>(bytes);
    return true;
  }
  // A string written by PutLeString, at most `limit` bytes long.
  bool Bytes(std::string_view& out, std::uint64_t limit) {
    std::uint64_t size = 0;
    if (!Int(size, 4) || size > left() || size > limit) {
      return false;
    }
    out = in.substr(offset, size);
    offset += size;
    return true;
  }
  bool String(std::string& out, std::uint64_t limit) {
    std::string_view view;
    if (!Bytes(view, limit)) {
      return false;
    }
    out.assign(view);
    return true;
  }
};

}  // namespace strata
