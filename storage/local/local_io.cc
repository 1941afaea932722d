#include "storage/local/local_io.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/crc64nvme.h"

namespace strata::storage {

std::string Crc64Base64(std::uint64_t crc) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>((crc >> (8 * (7 - i))) & 0xff);
  }
  return Base64Encode(bytes);
}

LocalPendingWrite::LocalPendingWrite(BucketName bucket, std::unique_ptr<LocalTempFile> file,
                                     const std::vector<ChecksumAlgorithm>& checksums,
                                     VersionId version_id)
    : bucket_(std::move(bucket)), version_id_(std::move(version_id)), file_(std::move(file)) {
  for (auto algorithm : checksums) {
    if (algorithm == ChecksumAlgorithm::kCrc64Nvme) {
      continue;  // always computed
    }
    const bool seen = std::any_of(extra_.begin(), extra_.end(),
                                  [&](const Extra& e) { return e.algorithm == algorithm; });
    if (!seen) {
      extra_.push_back({algorithm, MakeChecksummer(algorithm), std::nullopt});
    }
  }
}

Result<void> LocalPendingWrite::Append(std::string_view data) {
  if (failed_) {
    return Error(ErrorCode::kInternal, "write already failed");
  }
  if (finalized_) {
    return Error(ErrorCode::kInternal, "append after digests were taken");
  }
  auto written = file_->Append(data);
  if (!written.ok()) {
    failed_ = true;
    return written;
  }
  md5_.Update(data);  // CRC64NVME: the file computes it, per chunk and whole
  for (auto& e : extra_) {
    e.checksummer->Update(data);
  }
  return Ok();
}

std::string LocalPendingWrite::Md5Hex() {
  finalized_ = true;
  return md5_.FinalHex();
}

std::string LocalPendingWrite::Md5Base64() {
  finalized_ = true;
  return md5_.FinalBase64();
}

std::optional<std::string> LocalPendingWrite::Checksum(ChecksumAlgorithm algorithm) {
  if (algorithm == ChecksumAlgorithm::kCrc64Nvme) {
    return Crc64Base64(file_->crc64());
  }
  for (auto& e : extra_) {
    if (e.algorithm == algorithm) {
      finalized_ = true;
      if (!e.value) {
        e.value = e.checksummer->FinalBase64();
      }
      return e.value;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> LocalPendingWrite::AllChecksums() {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& e : extra_) {
    out.emplace_back(std::string(ChecksumName(e.algorithm)), *Checksum(e.algorithm));
  }
  out.emplace_back(std::string(ChecksumName(ChecksumAlgorithm::kCrc64Nvme)),
                   Crc64Base64(file_->crc64()));
  return out;
}

namespace {

// Reads exactly `len` bytes at `offset`; a file that ends before is kCorruption.
Result<void> PreadAll(int fd, char* dst, std::size_t len, std::uint64_t offset,
                      const std::string& path) {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd, dst + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoError(errno, "read", path);
    }
    if (n == 0) {
      return Error(ErrorCode::kCorruption, "data file " + path + " is shorter than its record");
    }
    done += static_cast<std::size_t>(n);
  }
  return Ok();
}

}  // namespace

Result<std::unique_ptr<ExtentReader>> ExtentReader::Open(
    const LocalTier& tier, const std::vector<metadata::Extent>& extents) {
  std::unique_ptr<ExtentReader> reader(new ExtentReader());
  reader->extents_.reserve(extents.size());
  for (const auto& extent : extents) {
    auto fd = tier.OpenForRead(extent.location);
    if (!fd.ok()) {
      if (fd.error().code == ErrorCode::kNotFound) {
        // Overwritten or deleted since the record was read.
        return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
      }
      return std::move(fd).error();
    }
    std::string path = tier.DataPath(extent.location);
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) {
      return ErrnoError(errno, "stat", path);
    }
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    std::optional<ChunkFooter> footer;
    if (file_size != extent.size) {  // equal: a file from before the trailer, unverified
      if (file_size < extent.size + kFooterSize) {
        spdlog::error("storage: data file {} has {} bytes, its record {} and a trailer", path,
                      file_size, extent.size);
        return Error(ErrorCode::kCorruption, "data file " + path + " has " +
                                                 std::to_string(file_size) + " bytes, record " +
                                                 std::to_string(extent.size));
      }
      std::string bytes(kFooterSize, '\0');
      STRATA_RETURN_IF_ERROR(
          PreadAll(fd->get(), bytes.data(), bytes.size(), file_size - kFooterSize, path));
      auto decoded = DecodeFooter(bytes, file_size, path);
      if (decoded.ok() && decoded->data_length != extent.size) {
        decoded = Error(ErrorCode::kCorruption,
                        "data file " + path + " holds " + std::to_string(decoded->data_length) +
                            " bytes, record " + std::to_string(extent.size));
      }
      if (!decoded.ok()) {
        spdlog::error("storage: {}", decoded.error().message);
        return std::move(decoded).error();
      }
      footer = *decoded;
    }
    if (extent.size == 0) {
      continue;
    }
    reader->extents_.push_back(
        {std::move(fd).value(), reader->size_, extent.size, std::move(path), footer});
    reader->size_ += extent.size;
  }
  return reader;
}

Result<void> ExtentReader::LoadCrcs(std::size_t e) {
  if (crcs_extent_ == e) {
    return Ok();
  }
  const OpenExtent& extent = extents_[e];
  const ChunkFooter& footer = *extent.footer;
  std::string trailer(footer.trailer_size(), '\0');
  STRATA_RETURN_IF_ERROR(
      PreadAll(extent.fd.get(), trailer.data(), trailer.size(), footer.crcs_offset(), extent.path));
  const std::string_view view(trailer);
  auto crcs = DecodeChunkCrcs(view.substr(0, footer.chunk_count * 8),
                              view.substr(footer.chunk_count * 8), footer, extent.path);
  if (!crcs.ok()) {
    if (crcs.error().code == ErrorCode::kCorruption) {
      CountChecksumMismatch();
      spdlog::error("storage: {}", crcs.error().message);
    }
    return std::move(crcs).error();
  }
  crcs_extent_ = kNone;
  crcs_ = std::move(crcs).value();
  crcs_extent_ = e;
  return Ok();
}

Result<void> ExtentReader::ReadChunk(std::size_t e, std::uint64_t index, char* dst,
                                     std::size_t len) {
  const OpenExtent& extent = extents_[e];
  const std::uint64_t offset = index * extent.footer->chunk_size;
  STRATA_RETURN_IF_ERROR(LoadCrcs(e));
  STRATA_RETURN_IF_ERROR(PreadAll(extent.fd.get(), dst, len, offset, extent.path));
  const std::uint64_t crc = Crc64Nvme(0, dst, len);
  if (crc != crcs_[index]) {
    CountChecksumMismatch();
    spdlog::error(
        "storage: CRC64NVME mismatch in data file {} chunk {} (bytes {}-{}): stored {:016x}, "
        "read {:016x}",
        extent.path, index, offset, offset + len - 1, crcs_[index], crc);
    return Error(ErrorCode::kCorruption, "data file " + extent.path + ": chunk " +
                                             std::to_string(index) + " fails its CRC64NVME");
  }
  return Ok();
}

Result<std::size_t> ExtentReader::Read(std::uint64_t offset, std::span<char> buf) {
  if (offset >= size_ || buf.empty()) {
    return std::size_t{0};
  }
  // The last extent starting at or before offset.
  auto it = std::upper_bound(extents_.begin(), extents_.end(), offset,
                             [](std::uint64_t off, const OpenExtent& e) { return off < e.start; });
  const auto e = static_cast<std::size_t>(std::prev(it) - extents_.begin());
  const OpenExtent& extent = extents_[e];
  const std::uint64_t within = offset - extent.start;
  if (!extent.footer) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), extent.size - within));
    STRATA_RETURN_IF_ERROR(PreadAll(extent.fd.get(), buf.data(), want, within, extent.path));
    return want;
  }
  const std::uint64_t chunk_size = extent.footer->chunk_size;
  const std::uint64_t index = within / chunk_size;
  const std::uint64_t chunk_start = index * chunk_size;
  const auto chunk_len =
      static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, extent.size - chunk_start));
  const auto in_chunk = static_cast<std::size_t>(within - chunk_start);
  if (chunk_extent_ != e || chunk_index_ != index) {
    if (in_chunk == 0 && buf.size() >= chunk_len) {
      // A whole chunk wanted: verify it in the caller's buffer, no copy.
      STRATA_RETURN_IF_ERROR(ReadChunk(e, index, buf.data(), chunk_len));
      return chunk_len;
    }
    chunk_extent_ = kNone;
    if (chunk_.size() < chunk_len) {
      chunk_.resize(chunk_len);  // at most one chunk, kept for the reader's lifetime
    }
    STRATA_RETURN_IF_ERROR(ReadChunk(e, index, chunk_.data(), chunk_len));
    chunk_extent_ = e;
    chunk_index_ = index;
  }
  const std::size_t want = std::min(buf.size(), chunk_len - in_chunk);
  std::memcpy(buf.data(), chunk_.data() + in_chunk, want);
  return want;
}

}  // namespace strata::storage
