#include "storage/local/local_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

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
                                     const std::vector<ChecksumAlgorithm>& checksums)
    : bucket_(std::move(bucket)), file_(std::move(file)) {
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
  md5_.Update(data);
  crc64_ = Crc64Nvme(crc64_, data);
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
    return Crc64Base64(crc64_);
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
  out.emplace_back(std::string(ChecksumName(ChecksumAlgorithm::kCrc64Nvme)), Crc64Base64(crc64_));
  return out;
}

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
    if (static_cast<std::uint64_t>(st.st_size) != extent.size) {
      return Error(ErrorCode::kCorruption, "data file " + path + " has " +
                                               std::to_string(st.st_size) + " bytes, record " +
                                               std::to_string(extent.size));
    }
    if (extent.size == 0) {
      continue;
    }
    reader->extents_.push_back(
        {std::move(fd).value(), reader->size_, extent.size, std::move(path)});
    reader->size_ += extent.size;
  }
  return reader;
}

Result<std::size_t> ExtentReader::Read(std::uint64_t offset, std::span<char> buf) {
  if (offset >= size_ || buf.empty()) {
    return std::size_t{0};
  }
  // The last extent starting at or before offset.
  auto it = std::upper_bound(extents_.begin(), extents_.end(), offset,
                             [](std::uint64_t off, const OpenExtent& e) { return off < e.start; });
  const OpenExtent& extent = *std::prev(it);
  const std::uint64_t within = offset - extent.start;
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), extent.size - within));
  std::size_t done = 0;
  while (done < want) {
    const ssize_t n =
        ::pread(extent.fd.get(), buf.data() + done, want - done, static_cast<off_t>(within + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoError(errno, "read", extent.path);
    }
    if (n == 0) {
      return Error(ErrorCode::kCorruption,
                   "data file " + extent.path + " is shorter than its record");
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace strata::storage
