// LocalTier::VerifyTrailer: the scrubber's check of a data file's trailer as the disk
// holds it (see local_tier.h).
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "storage/crc64nvme.h"
#include "storage/local/async_file.h"
#include "storage/local/chunk_trailer.h"
#include "storage/local/local_tier.h"
#include "storage/local/open_files.h"

namespace strata::storage {
namespace {

// The CRCs are hashed in runs of this many bytes, so a 5 GiB file's 640 KiB of them
// never sit in memory at once.
constexpr std::size_t kCrcRun = 64 * 1024;

}  // namespace

Result<void> LocalTier::VerifyTrailer(std::string_view id, std::uint64_t extent_size) const {
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  const std::string path = DataPath(id);
  auto fd = OpenReadOnly(path);
  if (!fd.ok()) {
    return std::move(fd).error();
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoError(errno, "stat", path);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == extent_size) {
    return Ok();  // from before the trailer: nothing to check
  }
  auto damaged = [&](std::string message) -> Result<void> {
    // Out of the cache: the next open reads this footer and fails on it.
    open_files_->Erase(id);
    CountChecksumMismatch();
    spdlog::error("storage: {}", message);
    return Error(ErrorCode::kCorruption, std::move(message));
  };
  if (size < extent_size + kFooterSize) {
    return damaged("data file " + path + " has " + std::to_string(size) + " bytes, its record " +
                   std::to_string(extent_size) + " and a trailer");
  }
  std::string footer_bytes(kFooterSize, '\0');
  STRATA_RETURN_IF_ERROR(
      PreadExact(fd->get(), std::span<char>(footer_bytes), size - kFooterSize, path));
  auto footer = DecodeFooter(footer_bytes, size, path);
  if (!footer.ok()) {
    return damaged(footer.error().message);
  }
  if (footer->data_length != extent_size) {
    return damaged("data file " + path + " holds " + std::to_string(footer->data_length) +
                   " bytes, record " + std::to_string(extent_size));
  }
  std::uint64_t crc = 0;
  std::vector<char> run(kCrcRun);
  const std::uint64_t crcs_end = footer->crcs_offset() + footer->chunk_count * 8;
  for (std::uint64_t at = footer->crcs_offset(); at < crcs_end;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(run.size(), crcs_end - at));
    STRATA_RETURN_IF_ERROR(PreadExact(fd->get(), std::span<char>(run.data(), n), at, path));
    crc = Crc64Nvme(crc, run.data(), n);
    at += n;
  }
  crc = Crc64Nvme(crc, footer_bytes.data(), kFooterSize - 8);
  if (crc != footer->trailer_crc) {
    return damaged("data file " + path + ": chunk trailer fails its CRC64NVME");
  }
  // The disk is sound. A cached footer that differs from it (the file was rewritten into
  // another well-formed one) is not trusted either: the next open reads the disk's.
  if (auto cached = open_files_->Find(id);
      cached != nullptr && (cached->size != size || cached->tail != footer_bytes)) {
    open_files_->Erase(id);
  }
  return Ok();
}

}  // namespace strata::storage
