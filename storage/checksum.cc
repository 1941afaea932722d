#include "storage/checksum.h"

#include <isa-l.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdint>

#include "storage/crc64nvme.h"

namespace strata::storage {
namespace {

template <std::size_t N>
std::string BigEndianBase64(std::uint64_t value) {
  std::array<char, N> bytes{};
  for (std::size_t i = 0; i < N; ++i) {
    bytes[i] = static_cast<char>((value >> (8 * (N - 1 - i))) & 0xff);
  }
  return Base64Encode(std::string_view(bytes.data(), N));
}

class Crc32Checksummer final : public Checksummer {
 public:
  void Update(std::string_view data) override {
    crc_ = crc32_gzip_refl(crc_, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  }
  std::string FinalBase64() override { return BigEndianBase64<4>(crc_); }

 private:
  std::uint32_t crc_ = 0;
};

class Crc32cChecksummer final : public Checksummer {
 public:
  void Update(std::string_view data) override {
    // crc32_iscsi takes an int length and neither inverts on entry nor on exit.
    while (!data.empty()) {
      const std::size_t n = std::min<std::size_t>(data.size(), 1U << 30);
      reg_ = crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<char*>(data.data())),
                         static_cast<int>(n), reg_);
      data.remove_prefix(n);
    }
  }
  std::string FinalBase64() override { return BigEndianBase64<4>(reg_ ^ 0xffffffffU); }

 private:
  std::uint32_t reg_ = 0xffffffffU;
};

class Crc64NvmeChecksummer final : public Checksummer {
 public:
  void Update(std::string_view data) override { crc_ = Crc64Nvme(crc_, data); }
  std::string FinalBase64() override { return BigEndianBase64<8>(crc_); }

 private:
  std::uint64_t crc_ = 0;
};

// Digest algorithms fetched once: from EVP_md5() and the like, OpenSSL 3 looks the
// algorithm up by name, under a lock, every time a digest starts (once per PUT). A null
// member means this OpenSSL lacks it; EvpDigest then fails as on any other OpenSSL error.
struct Algorithms {
  EVP_MD* md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
  EVP_MD* sha1 = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  EVP_MD* sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
};

const Algorithms& Fetched() {
  static const Algorithms algorithms;
  return algorithms;
}

// An EVP digest; on an OpenSSL failure (allocation) the digest comes out empty rather
// than wrong, so a comparison against it fails.
class EvpDigest {
 public:
  explicit EvpDigest(const EVP_MD* md) : ctx_(EVP_MD_CTX_new()) {
    ok_ = ctx_ != nullptr && md != nullptr && EVP_DigestInit_ex2(ctx_, md, nullptr) == 1;
  }
  ~EvpDigest() { EVP_MD_CTX_free(ctx_); }
  EvpDigest(const EvpDigest&) = delete;
  EvpDigest& operator=(const EvpDigest&) = delete;

  void Update(std::string_view data) {
    if (ok_ && !finished_) {
      ok_ = EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1;
    }
  }
  // The raw digest; idempotent.
  const std::string& Final() {
    if (!finished_) {
      finished_ = true;
      unsigned char out[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      if (ok_ && EVP_DigestFinal_ex(ctx_, out, &len) == 1) {
        digest_.assign(reinterpret_cast<const char*>(out), len);
      }
    }
    return digest_;
  }

 private:
  EVP_MD_CTX* ctx_;
  bool ok_ = false;
  bool finished_ = false;
  std::string digest_;
};

class EvpChecksummer final : public Checksummer {
 public:
  explicit EvpChecksummer(const EVP_MD* md) : digest_(md) {}
  void Update(std::string_view data) override { digest_.Update(data); }
  std::string FinalBase64() override { return Base64Encode(digest_.Final()); }

 private:
  EvpDigest digest_;
};

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

}  // namespace

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (upper == "CRC32") {
    return ChecksumAlgorithm::kCrc32;
  }
  if (upper == "CRC32C") {
    return ChecksumAlgorithm::kCrc32c;
  }
  if (upper == "CRC64NVME") {
    return ChecksumAlgorithm::kCrc64Nvme;
  }
  if (upper == "SHA1") {
    return ChecksumAlgorithm::kSha1;
  }
  if (upper == "SHA256") {
    return ChecksumAlgorithm::kSha256;
  }
  return std::nullopt;
}

std::string_view ChecksumName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return "CRC32";
    case ChecksumAlgorithm::kCrc32c:
      return "CRC32C";
    case ChecksumAlgorithm::kCrc64Nvme:
      return "CRC64NVME";
    case ChecksumAlgorithm::kSha1:
      return "SHA1";
    case ChecksumAlgorithm::kSha256:
      return "SHA256";
  }
  return "";
}

std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return "x-amz-checksum-crc32";
    case ChecksumAlgorithm::kCrc32c:
      return "x-amz-checksum-crc32c";
    case ChecksumAlgorithm::kCrc64Nvme:
      return "x-amz-checksum-crc64nvme";
    case ChecksumAlgorithm::kSha1:
      return "x-amz-checksum-sha1";
    case ChecksumAlgorithm::kSha256:
      return "x-amz-checksum-sha256";
  }
  return "";
}

std::unique_ptr<Checksummer> MakeChecksummer(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return std::make_unique<Crc32Checksummer>();
    case ChecksumAlgorithm::kCrc32c:
      return std::make_unique<Crc32cChecksummer>();
    case ChecksumAlgorithm::kCrc64Nvme:
      return std::make_unique<Crc64NvmeChecksummer>();
    case ChecksumAlgorithm::kSha1:
      return std::make_unique<EvpChecksummer>(Fetched().sha1);
    case ChecksumAlgorithm::kSha256:
      return std::make_unique<EvpChecksummer>(Fetched().sha256);
  }
  return nullptr;
}

struct Md5::State {
  EvpDigest digest{Fetched().md5};
};

Md5::Md5() : state_(std::make_unique<State>()) {}
Md5::~Md5() = default;

void Md5::Update(std::string_view data) { state_->digest.Update(data); }

std::string Md5::FinalHex() {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string& raw = state_->digest.Final();
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

std::string Md5::FinalBase64() { return Base64Encode(state_->digest.Final()); }

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                            static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(kBase64Alphabet[(v >> 6) & 63]);
    out.push_back(kBase64Alphabet[v & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.append("==");
  } else if (rest == 2) {
    const std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(kBase64Alphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  // Canonical, padded base64 only: length a multiple of 4, '=' only as the last one or
  // two characters, and unused bits of the last quantum zero.
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const auto c = static_cast<unsigned char>(text[i + j]);
      if (c == '=') {
        if (!last || j < 2) {
          return std::nullopt;
        }
        ++pad;
        v[j] = 0;
        continue;
      }
      if (pad > 0) {
        return std::nullopt;  // data after padding
      }
      v[j] = Base64Value(c);
      if (v[j] < 0) {
        return std::nullopt;
      }
    }
    const std::uint32_t q =
        (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
        (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    if ((pad == 1 && (q & 0xff) != 0) || (pad == 2 && (q & 0xffff) != 0)) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>((q >> 16) & 0xff));
    if (pad < 2) {
      out.push_back(static_cast<char>((q >> 8) & 0xff));
    }
    if (pad < 1) {
      out.push_back(static_cast<char>(q & 0xff));
    }
  }
  return out;
}

}  // namespace strata::storage
