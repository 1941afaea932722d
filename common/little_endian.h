// Little-endian integers in byte strings: the on-disk chunk trailers and the peer
// transport's frames store their fields this way, whatever the host's byte order.
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

}  // namespace strata
