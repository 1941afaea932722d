// Private to auth/: thin wrappers over OpenSSL's digests and MACs, hex and base64.
// Nothing here allocates per call beyond the returned strings; Sha256 keeps one
// EVP_MD_CTX for its lifetime so a streaming decoder reuses it chunk after chunk, and the
// one-shot Sha256Of and HmacSha256 use one such context per thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace strata::auth::internal {

using Digest32 = std::array<std::uint8_t, 32>;
using Digest20 = std::array<std::uint8_t, 20>;

// Incremental SHA-256. Reset() starts a new digest on the same context.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Reset();
  void Update(std::string_view data);
  Digest32 Final();  // Also resets, ready for the next digest.

 private:
  EVP_MD_CTX* ctx_;
};

Digest32 Sha256Of(std::string_view data);
Digest32 HmacSha256(std::string_view key, std::string_view data);
Digest20 HmacSha1(std::string_view key, std::string_view data);

std::string HexLower(const std::uint8_t* data, std::size_t n);
template <std::size_t N>
std::string HexLower(const std::array<std::uint8_t, N>& d) {
  return HexLower(d.data(), d.size());
}
std::string Base64Encode(const std::uint8_t* data, std::size_t n);
// Standard base64 with its padding (a POST form's policy); ASCII whitespace anywhere is
// skipped, as clients that wrap the text at 76 columns send it. nullopt for any other
// character, a length that is not a multiple of 4, or '=' other than the last one or two.
std::optional<std::string> Base64Decode(std::string_view text);

inline std::string_view AsView(const Digest32& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

// Constant-time equality of two strings of the same length; false when the lengths differ
// (lengths of signatures are public).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// hex(SHA-256("")): the empty-payload digest, used by chunk string-to-sign.
inline constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace strata::auth::internal
