#include "auth/internal/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace strata::auth::internal {
namespace {

// OpenSSL 3 looks an algorithm up by name each time a digest starts from EVP_sha256():
// a hash table under a lock, a large share of a small request's signature check. The
// algorithm fetched once skips that.
const EVP_MD* FetchedSha256() {
  static EVP_MD* const md = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched == nullptr) {
      std::abort();  // No SHA-256 in this OpenSSL: nothing can be verified.
    }
    return fetched;
  }();
  return md;
}

// Each thread's own context for one-shot digests.
Sha256& ThreadSha256() {
  thread_local Sha256 sha;
  return sha;
}

constexpr std::size_t kSha256Block = 64;

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) {
    std::abort();  // Out of memory at construction: nothing sensible to report.
  }
  Reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::Reset() { EVP_DigestInit_ex2(ctx_, FetchedSha256(), nullptr); }

void Sha256::Update(std::string_view data) {
  if (!data.empty()) {
    EVP_DigestUpdate(ctx_, data.data(), data.size());
  }
}

Digest32 Sha256::Final() {
  Digest32 out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, out.data(), &len);
  Reset();
  return out;
}

Digest32 Sha256Of(std::string_view data) {
  Sha256& sha = ThreadSha256();
  sha.Update(data);
  return sha.Final();
}

// RFC 2104 over the thread's SHA-256 context: OpenSSL's HMAC() builds and looks up a MAC
// object on every call, which cost more than the hashing for SigV4's short inputs.
Digest32 HmacSha256(std::string_view key, std::string_view data) {
  Digest32 hashed_key;
  if (key.size() > kSha256Block) {
    hashed_key = Sha256Of(key);
    key = AsView(hashed_key);
  }
  std::array<char, kSha256Block> pad;
  for (std::size_t i = 0; i < kSha256Block; ++i) {
    pad[i] = static_cast<char>((i < key.size() ? key[i] : 0) ^ 0x36);
  }
  Sha256& sha = ThreadSha256();
  sha.Update(std::string_view(pad.data(), pad.size()));
  sha.Update(data);
  const Digest32 inner = sha.Final();
  for (char& c : pad) {
    c = static_cast<char>(c ^ 0x36 ^ 0x5c);
  }
  sha.Update(std::string_view(pad.data(), pad.size()));
  sha.Update(AsView(inner));
  return sha.Final();
}

Digest20 HmacSha1(std::string_view key, std::string_view data) {
  Digest20 out{};
  unsigned int len = 0;
  HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

std::string HexLower(const std::uint8_t* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

std::string Base64Encode(const std::uint8_t* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(len < 0 ? 0 : static_cast<std::size_t>(len));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t quantum = 0;
  int filled = 0;   // sextets in `quantum`
  int padding = 0;  // '=' seen
  for (char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      continue;
    } else if (c == '=') {
      // Only the last one or two characters of a quantum, and nothing after them.
      if (filled < 2 || ++padding > 2) {
        return std::nullopt;
      }
      quantum <<= 6;
      ++filled;
    } else {
      return std::nullopt;
    }
    if (v >= 0) {
      if (padding > 0) {
        return std::nullopt;
      }
      quantum = (quantum << 6) | static_cast<std::uint32_t>(v);
      ++filled;
    }
    if (filled == 4) {
      out.push_back(static_cast<char>((quantum >> 16) & 0xff));
      if (padding < 2) {
        out.push_back(static_cast<char>((quantum >> 8) & 0xff));
      }
      if (padding < 1) {
        out.push_back(static_cast<char>(quantum & 0xff));
      }
      quantum = 0;
      filled = 0;
    }
  }
  if (filled != 0) {
    return std::nullopt;
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  if (a.empty()) {
    return true;
  }
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace strata::auth::internal
