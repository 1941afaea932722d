// The byte paths of the local tier behind ObjectStore (private to storage/): a
// PendingWrite into a temporary file, and a reader over an object's extents.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "metadata/records.h"
#include "storage/checksum.h"
#include "storage/local/local_tier.h"
#include "storage/object_store.h"

namespace strata::storage {

// Hashes as it appends: MD5, CRC64NVME always, and the requested checksums.
class LocalPendingWrite final : public PendingWrite {
 public:
  LocalPendingWrite(BucketName bucket, std::unique_ptr<LocalTempFile> file,
                    const std::vector<ChecksumAlgorithm>& checksums);

  Result<void> Append(std::string_view data) override;
  std::uint64_t size() const override { return file_->size(); }
  std::string Md5Hex() override;
  std::string Md5Base64() override;
  std::optional<std::string> Checksum(ChecksumAlgorithm algorithm) override;

  // Algorithm name -> base64, the requested ones in request order, then CRC64NVME.
  std::vector<std::pair<std::string, std::string>> AllChecksums();

  const BucketName& bucket() const { return bucket_; }
  LocalTempFile& file() { return *file_; }
  bool failed() const { return failed_; }

 private:
  struct Extra {
    ChecksumAlgorithm algorithm;
    std::unique_ptr<Checksummer> checksummer;
    std::optional<std::string> value;
  };

  BucketName bucket_;
  std::unique_ptr<LocalTempFile> file_;  // unlinks the temporary file unless promoted
  Md5 md5_;
  std::uint64_t crc64_ = 0;
  std::vector<Extra> extra_;
  bool failed_ = false;
  bool finalized_ = false;
};

// Reads an object stored as consecutive extents (data files) on one local tier. Every
// extent is opened up front, so an overwrite or delete that unlinks the files while the
// object is being read cannot take bytes away from under the reader.
class ExtentReader final : public ObjectReader {
 public:
  // kNoSuchKey when a file is gone (the version was replaced since the record was read),
  // kCorruption when a file's size differs from its extent's.
  static Result<std::unique_ptr<ExtentReader>> Open(const LocalTier& tier,
                                                    const std::vector<metadata::Extent>& extents);

  std::uint64_t size() const override { return size_; }
  // Reads within one extent: may return fewer bytes than asked, 0 only at the end.
  Result<std::size_t> Read(std::uint64_t offset, std::span<char> buf) override;

 private:
  struct OpenExtent {
    UniqueFd fd;
    std::uint64_t start = 0;  // offset of its first byte in the object
    std::uint64_t size = 0;
    std::string path;
  };

  ExtentReader() = default;

  std::vector<OpenExtent> extents_;
  std::uint64_t size_ = 0;
};

// base64 of a CRC64NVME value as S3 sends it (8 bytes, big-endian).
std::string Crc64Base64(std::uint64_t crc);

}  // namespace strata::storage
