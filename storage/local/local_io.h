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
#include "storage/local/async_file.h"
#include "storage/local/chunk_trailer.h"
#include "storage/local/local_tier.h"
#include "storage/local/open_files.h"
#include "storage/object_store.h"

namespace strata::storage {

// Hashes as it appends: MD5, CRC64NVME always, and the requested checksums.
class LocalPendingWrite final : public PendingWrite {
 public:
  // `version_id`: the id the version gets when committed, chosen by the store from the
  // bucket's versioning state when the write begins.
  LocalPendingWrite(BucketName bucket, std::unique_ptr<LocalTempFile> file,
                    const std::vector<ChecksumAlgorithm>& checksums,
                    VersionId version_id = VersionId("null"));

  Result<void> Append(std::string_view data) override;
  boost::asio::awaitable<Result<void>> AppendAsync(std::string_view data) override;
  std::uint64_t size() const override { return file_->size(); }
  std::string Md5Hex() override;
  std::string Md5Base64() override;
  std::optional<std::string> Checksum(ChecksumAlgorithm algorithm) override;

  // Algorithm name -> base64, the requested ones in request order, then CRC64NVME.
  std::vector<std::pair<std::string, std::string>> AllChecksums();

  const BucketName& bucket() const { return bucket_; }
  const VersionId& version_id() const { return version_id_; }
  LocalTempFile& file() { return *file_; }
  bool failed() const { return failed_; }

 private:
  // Whether an append may start; kInternal after a failure or once digests were taken.
  Result<void> CheckAppendable() const;
  // The digests MD5 and the requested checksums (the file hashes CRC64NVME itself).
  void Hash(std::string_view data);

  struct Extra {
    ChecksumAlgorithm algorithm;
    std::unique_ptr<Checksummer> checksummer;
    std::optional<std::string> value;
  };

  BucketName bucket_;
  VersionId version_id_;
  std::unique_ptr<LocalTempFile> file_;  // unlinks the temporary file unless promoted
  Md5 md5_;
  std::vector<Extra> extra_;
  bool failed_ = false;
  bool finalized_ = false;
};

// Reads an object stored as consecutive extents (data files) on one local tier. Every
// extent is opened up front, so an overwrite or delete that unlinks the files while the
// object is being read cannot take bytes away from under the reader.
//
// Every chunk (storage/local/chunk_trailer.h) is verified against its CRC64NVME before
// any of its bytes is returned. A read that starts on a chunk boundary takes as many whole
// chunks as fit the caller's buffer in one file read and verifies them there; a read
// smaller than a chunk, or starting inside one, goes through the reader's own copy of one
// chunk (the last one verified, so sequential small reads hash it once). Chunk CRCs are
// loaded by windows of kCrcWindow (a file with more chunks never costs the reader more
// than 8 KiB of them); a file whose CRCs fit one window is checked against the trailer's
// own CRC as well. Files without a trailer (written before it existed) are read
// unverified.
class ExtentReader final : public ObjectReader {
 public:
  // kNoSuchKey when a file is gone (the version was replaced since the record was read),
  // kCorruption when a file's trailer is damaged or disagrees with its extent's size.
  static Result<std::unique_ptr<ExtentReader>> Open(const LocalTier& tier,
                                                    const std::vector<metadata::Extent>& extents);

  std::uint64_t size() const override { return size_; }
  // Reads within one CRC window of one extent: may return fewer bytes than asked, 0 only
  // at the end. kCorruption, naming the data file, when the chunk (or the extent's chunk
  // CRCs) fails its CRC64NVME; that is logged and counted (ChecksumMismatches()).
  Result<std::size_t> Read(std::uint64_t offset, std::span<char> buf) override;
  // Read, its file reads through the data path. Same verification and errors.
  boost::asio::awaitable<Result<std::size_t>> ReadAsync(std::uint64_t offset,
                                                        std::span<char> buf) override;

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  // Chunk CRCs loaded at a time: 8 KiB of them, 64 MiB of data at 64 KiB chunks.
  static constexpr std::uint64_t kCrcWindow = 1024;

  struct OpenExtent {
    std::shared_ptr<const OpenDataFile> file;  // shared with the tier's open-file cache
    AsyncFile async;          // borrows file's fd; declared after it, so released first
    std::uint64_t start = 0;  // offset of its first byte in the object
    std::uint64_t size = 0;
    std::optional<ChunkFooter> footer;  // nullopt: a file without trailer, unverified
  };

  // What one Read does, worked out before any file I/O so that the synchronous and the
  // asynchronous reads share every decision and every check; only the file reads differ.
  struct Step {
    std::size_t e = 0;                  // the extent
    std::optional<std::size_t> answer;  // answered without file I/O (end, cached chunk)
    // Load the chunk CRCs [crcs_first, crcs_first + crcs_count) of extent e first, from
    // trailer bytes; with_footer: all of them plus the footer, to check the trailer CRC.
    bool load_crcs = false;
    bool with_footer = false;
    std::uint64_t crcs_first = 0;
    std::uint64_t crcs_count = 0;
    bool verify = false;      // the read is `chunks` chunks from `index`, verified before use
    bool into_chunk = false;  // read into chunk_, then copy out of it
    std::uint64_t index = 0;
    std::uint64_t chunks = 0;
    std::uint64_t file_offset = 0;  // the read: `len` bytes at this offset into `dst`
    char* dst = nullptr;
    std::size_t len = 0;
    std::span<char> out;       // the caller's buffer, for into_chunk
    std::size_t in_chunk = 0;  // offset of the request within the chunk

    std::uint64_t crcs_offset(const ChunkFooter& f) const {
      return f.crcs_offset() + 8 * crcs_first;
    }
    std::size_t crcs_bytes() const { return 8 * crcs_count + (with_footer ? kFooterSize : 0); }
  };

  ExtentReader() = default;

  Step Plan(std::uint64_t offset, std::span<char> buf);
  // Which CRCs `step` needs loaded for its chunk (none when the window holds it).
  void PlanCrcs(Step& step, const ChunkFooter& footer) const;
  // Makes crcs_ the step's window of chunk CRCs from the trailer bytes read for it.
  Result<void> SetCrcs(const Step& step, std::string_view bytes);
  // After the step's file read: verifies the chunks, keeps a chunk_ read, copies out of it.
  Result<std::size_t> Finish(const Step& step);
  std::size_t CopyFromChunk(std::size_t in_chunk, std::span<char> out) const;

  std::vector<OpenExtent> extents_;
  std::uint64_t size_ = 0;
  std::size_t crcs_extent_ = kNone;  // crcs_ holds extent crcs_extent_'s chunks
  std::uint64_t crcs_first_ = 0;     // from this one on
  std::vector<std::uint64_t> crcs_;
  std::size_t chunk_extent_ = kNone;  // the verified chunk in chunk_, if any
  std::uint64_t chunk_index_ = 0;
  std::vector<char> chunk_;
  std::size_t chunk_len_ = 0;  // bytes of the chunk in chunk_
};

// base64 of a CRC64NVME value as S3 sends it (8 bytes, big-endian).
std::string Crc64Base64(std::uint64_t crc);

}  // namespace strata::storage
