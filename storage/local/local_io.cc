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

Result<void> LocalPendingWrite::CheckAppendable() const {
  if (failed_) {
    return Error(ErrorCode::kInternal, "write already failed");
  }
  if (finalized_) {
    return Error(ErrorCode::kInternal, "append after digests were taken");
  }
  return Ok();
}

void LocalPendingWrite::Hash(std::string_view data) {
  md5_.Update(data);  // CRC64NVME: the file computes it, per chunk and whole
  for (auto& e : extra_) {
    e.checksummer->Update(data);
  }
}

Result<void> LocalPendingWrite::Append(std::string_view data) {
  STRATA_RETURN_IF_ERROR(CheckAppendable());
  auto written = file_->Append(data);
  if (!written.ok()) {
    failed_ = true;
    return written;
  }
  Hash(data);
  return Ok();
}

boost::asio::awaitable<Result<void>> LocalPendingWrite::AppendAsync(std::string_view data) {
  auto appendable = CheckAppendable();
  if (!appendable.ok()) {
    co_return appendable;
  }
  auto written = co_await file_->AppendAsync(data);
  if (!written.ok()) {
    failed_ = true;
    co_return written;
  }
  Hash(data);
  co_return Ok();
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

Result<std::unique_ptr<ExtentReader>> ExtentReader::Open(
    const LocalTier& tier, const std::vector<metadata::Extent>& extents) {
  std::unique_ptr<ExtentReader> reader(new ExtentReader());
  reader->extents_.reserve(extents.size());
  for (const auto& extent : extents) {
    auto opened = tier.OpenData(extent.location);
    if (!opened.ok()) {
      if (opened.error().code == ErrorCode::kNotFound) {
        // Overwritten or deleted since the record was read.
        return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
      }
      return std::move(opened).error();
    }
    std::shared_ptr<const OpenDataFile> file = std::move(opened).value();
    const std::string& path = file->path;
    std::optional<ChunkFooter> footer;
    if (file->size != extent.size) {  // equal: a file from before the trailer, unverified
      if (file->size < extent.size + kFooterSize) {
        spdlog::error("storage: data file {} has {} bytes, its record {} and a trailer", path,
                      file->size, extent.size);
        return Error(ErrorCode::kCorruption, "data file " + path + " has " +
                                                 std::to_string(file->size) + " bytes, record " +
                                                 std::to_string(extent.size));
      }
      auto decoded = DecodeFooter(file->tail, file->size, path);
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
    reader->extents_.push_back({std::move(file), AsyncFile(), reader->size_, extent.size, footer});
    reader->size_ += extent.size;
  }
  return reader;
}

void ExtentReader::PlanCrcs(Step& step, const ChunkFooter& footer) const {
  if (crcs_extent_ == step.e && step.index >= crcs_first_ &&
      step.index - crcs_first_ < crcs_.size()) {
    return;
  }
  step.load_crcs = true;
  step.crcs_first = step.index - step.index % kCrcWindow;
  step.crcs_count = std::min(kCrcWindow, footer.chunk_count - step.crcs_first);
  step.with_footer = step.crcs_first == 0 && step.crcs_count == footer.chunk_count;
}

Result<void> ExtentReader::SetCrcs(const Step& step, std::string_view bytes) {
  const OpenExtent& extent = extents_[step.e];
  const ChunkFooter& footer = *extent.footer;
  crcs_extent_ = kNone;
  if (!step.with_footer) {
    crcs_ = DecodeCrcRun(bytes);
  } else {
    // The footer was read again with the CRCs: it must still be the one the open-file cache
    // read at open (a flip in its trailer_crc would otherwise go unseen while the file
    // stays cached; the other fields are covered by the trailer CRC below). Free: the
    // bytes are here already.
    const std::string_view on_disk = bytes.substr(footer.chunk_count * 8);
    auto crcs = on_disk != extent.file->tail
                    ? Result<std::vector<std::uint64_t>>(Error(
                          ErrorCode::kCorruption, "data file " + extent.file->path +
                                                      ": its footer changed since it was opened"))
                    : DecodeChunkCrcs(bytes.substr(0, footer.chunk_count * 8), on_disk, footer,
                                      extent.file->path);
    if (!crcs.ok()) {
      if (crcs.error().code == ErrorCode::kCorruption) {
        CountChecksumMismatch();
        spdlog::error("storage: {}", crcs.error().message);
      }
      return std::move(crcs).error();
    }
    crcs_ = std::move(crcs).value();
  }
  crcs_first_ = step.crcs_first;
  crcs_extent_ = step.e;
  return Ok();
}

ExtentReader::Step ExtentReader::Plan(std::uint64_t offset, std::span<char> buf) {
  Step step;
  if (offset >= size_ || buf.empty()) {
    step.answer = 0;
    return step;
  }
  // The last extent starting at or before offset.
  auto it = std::upper_bound(extents_.begin(), extents_.end(), offset,
                             [](std::uint64_t off, const OpenExtent& e) { return off < e.start; });
  step.e = static_cast<std::size_t>(std::prev(it) - extents_.begin());
  const OpenExtent& extent = extents_[step.e];
  const std::uint64_t within = offset - extent.start;
  if (!extent.footer) {
    step.file_offset = within;
    step.dst = buf.data();
    step.len = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), extent.size - within));
    return step;
  }
  const ChunkFooter& footer = *extent.footer;
  const std::uint64_t chunk_size = footer.chunk_size;
  step.index = within / chunk_size;
  const std::uint64_t chunk_start = step.index * chunk_size;
  const auto in_chunk = static_cast<std::size_t>(within - chunk_start);
  if (chunk_extent_ == step.e && chunk_index_ == step.index) {
    step.answer = CopyFromChunk(in_chunk, buf);
    return step;
  }
  PlanCrcs(step, footer);
  const std::uint64_t window_end =
      step.load_crcs ? step.crcs_first + step.crcs_count : crcs_first_ + crcs_.size();
  step.verify = true;
  step.file_offset = chunk_start;
  if (in_chunk == 0) {
    // Whole chunks that fit the caller's buffer (the extent's last one may be short),
    // read and verified there: no copy.
    std::uint64_t len = 0;
    for (std::uint64_t i = step.index; i < window_end; ++i) {
      const std::uint64_t next = std::min(chunk_size, extent.size - i * chunk_size);
      if (len + next > buf.size()) {
        break;
      }
      len += next;
      ++step.chunks;
    }
    if (step.chunks > 0) {
      step.dst = buf.data();
      step.len = static_cast<std::size_t>(len);
      return step;
    }
  }
  step.chunks = 1;
  step.len = static_cast<std::size_t>(std::min(chunk_size, extent.size - chunk_start));
  chunk_extent_ = kNone;
  if (chunk_.size() < step.len) {
    chunk_.resize(step.len);  // at most one chunk, kept for the reader's lifetime
  }
  step.dst = chunk_.data();
  step.into_chunk = true;
  step.out = buf;
  step.in_chunk = in_chunk;
  return step;
}

std::size_t ExtentReader::CopyFromChunk(std::size_t in_chunk, std::span<char> out) const {
  const std::size_t want = std::min(out.size(), chunk_len_ - in_chunk);
  std::memcpy(out.data(), chunk_.data() + in_chunk, want);
  return want;
}

Result<std::size_t> ExtentReader::Finish(const Step& step) {
  if (!step.verify) {
    return step.len;
  }
  const OpenExtent& extent = extents_[step.e];
  const std::uint64_t chunk_size = extent.footer->chunk_size;
  for (std::uint64_t i = 0; i < step.chunks; ++i) {
    const std::uint64_t index = step.index + i;
    const std::uint64_t at = i * chunk_size;
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, step.len - at));
    const std::uint64_t crc = Crc64Nvme(0, step.dst + at, len);
    const std::uint64_t stored = crcs_[index - crcs_first_];
    if (crc != stored) {
      CountChecksumMismatch();
      spdlog::error(
          "storage: CRC64NVME mismatch in data file {} chunk {} (bytes {}-{}): stored {:016x}, "
          "read {:016x}",
          extent.file->path, index, step.file_offset + at, step.file_offset + at + len - 1, stored,
          crc);
      return Error(ErrorCode::kCorruption, "data file " + extent.file->path + ": chunk " +
                                               std::to_string(index) + " fails its CRC64NVME");
    }
  }
  if (!step.into_chunk) {
    return step.len;
  }
  chunk_extent_ = step.e;
  chunk_index_ = step.index;
  chunk_len_ = step.len;
  return CopyFromChunk(step.in_chunk, step.out);
}

Result<std::size_t> ExtentReader::Read(std::uint64_t offset, std::span<char> buf) {
  const Step step = Plan(offset, buf);
  if (step.answer) {
    return *step.answer;
  }
  const OpenExtent& extent = extents_[step.e];
  if (step.load_crcs) {
    std::string trailer(step.crcs_bytes(), '\0');
    STRATA_RETURN_IF_ERROR(PreadExact(extent.file->fd.get(),
                                      std::span<char>(trailer.data(), trailer.size()),
                                      step.crcs_offset(*extent.footer), extent.file->path));
    STRATA_RETURN_IF_ERROR(SetCrcs(step, trailer));
  }
  STRATA_RETURN_IF_ERROR(PreadExact(extent.file->fd.get(), std::span<char>(step.dst, step.len),
                                    step.file_offset, extent.file->path));
  return Finish(step);
}

boost::asio::awaitable<Result<std::size_t>> ExtentReader::ReadAsync(std::uint64_t offset,
                                                                    std::span<char> buf) {
  const Step step = Plan(offset, buf);
  if (step.answer) {
    co_return *step.answer;
  }
  OpenExtent& extent = extents_[step.e];
  if (step.load_crcs) {
    std::string trailer(step.crcs_bytes(), '\0');
    auto read = co_await extent.async.ReadExact(
        extent.file->fd.get(), std::span<char>(trailer.data(), trailer.size()),
        step.crcs_offset(*extent.footer), extent.file->path);
    if (!read.ok()) {
      co_return read.error();
    }
    auto set = SetCrcs(step, trailer);
    if (!set.ok()) {
      co_return set.error();
    }
  }
  auto read =
      co_await extent.async.ReadExact(extent.file->fd.get(), std::span<char>(step.dst, step.len),
                                      step.file_offset, extent.file->path);
  if (!read.ok()) {
    co_return read.error();
  }
  co_return Finish(step);
}

}  // namespace strata::storage
