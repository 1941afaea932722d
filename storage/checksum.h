// Checksums S3 knows (CRC32, CRC32C, CRC64NVME, SHA1, SHA256) and MD5 for ETags, all
// computed incrementally over streamed bytes. CRC32/CRC32C use ISA-L; CRC64NVME has a
// carry-less-multiply folding implementation with a portable fallback (crc64nvme.h).
// A Checksummer is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace strata::storage {

enum class ChecksumAlgorithm { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };

// "CRC32", "crc32c", ... -> algorithm; nullopt for anything else.
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);
// "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256".
std::string_view ChecksumName(ChecksumAlgorithm algorithm);
// "x-amz-checksum-crc32", ...
std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm);

class Checksummer {
 public:
  virtual ~Checksummer() = default;
  virtual void Update(std::string_view data) = 0;
  // The digest, base64-encoded as S3 sends it. Call once, after the last Update.
  virtual std::string FinalBase64() = 0;
};

std::unique_ptr<Checksummer> MakeChecksummer(ChecksumAlgorithm algorithm);

// Incremental MD5 for ETags and Content-MD5.
class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;
  void Update(std::string_view data);
  std::string FinalHex();     // 32 lower-case hex digits
  std::string FinalBase64();  // as in Content-MD5

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string Base64Encode(std::string_view bytes);
// nullopt when `text` is not valid base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace strata::storage
