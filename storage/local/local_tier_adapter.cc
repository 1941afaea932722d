#include "storage/local/local_tier_adapter.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <utility>
#include <vector>

#include "storage/local/async_file.h"
#include "storage/local/local_io.h"
#include "storage/local/open_files.h"

namespace strata::storage {
namespace {

// A range of one data file, through an ExtentReader (which verifies every chunk).
class LocalRangeReader final : public TierReader {
 public:
  LocalRangeReader(std::unique_ptr<ExtentReader> reader, std::uint64_t start, std::uint64_t size,
                   std::uint64_t length)
      : reader_(std::move(reader)), start_(start), size_(size) {
    info_.size = length;
  }

  std::uint64_t size() const override { return size_; }
  const TierObjectInfo& info() const override { return info_; }

  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    if (offset >= size_ || buf.empty()) {
      co_return std::size_t{0};
    }
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset));
    co_return co_await reader_->ReadAsync(start_ + offset, buf.first(n));
  }

 private:
  std::unique_ptr<ExtentReader> reader_;
  std::uint64_t start_;
  std::uint64_t size_;
  TierObjectInfo info_;
};

class LocalWrite final : public TierWrite {
 public:
  LocalWrite(LocalTier& tier, std::unique_ptr<LocalTempFile> file,
             std::optional<std::uint64_t> expected)
      : tier_(tier), file_(std::move(file)), expected_(expected) {}

  // Destroying file_ unpromoted frees (or unlinks) it: nothing is left behind.

  TierTask<void> Append(std::string_view data) override {
    if (failed_ || committed_) {
      co_return Error(ErrorCode::kInternal, "append to a failed or committed write");
    }
    auto appended = co_await file_->AppendAsync(data);
    if (!appended.ok()) {
      failed_ = true;
    }
    co_return appended;
  }

  TierTask<TierObject> Commit() override {
    if (failed_ || committed_) {
      co_return Error(ErrorCode::kInternal, "commit of a failed or committed write");
    }
    if (expected_ && *expected_ != file_->size()) {
      failed_ = true;
      co_return Error(ErrorCode::kIncompleteBody,
                      "tier " + tier_.name() + ": " + std::to_string(file_->size()) +
                          " bytes written, " + std::to_string(*expected_) + " declared");
    }
    auto promoted = tier_.Promote(*file_);
    if (!promoted.ok()) {
      failed_ = true;
      co_return std::move(promoted).error();
    }
    committed_ = true;
    co_return TierObject{file_->id(), file_->size(), file_->crc64(), {}, {}};
  }

 private:
  LocalTier& tier_;
  std::unique_ptr<LocalTempFile> file_;
  std::optional<std::uint64_t> expected_;
  bool failed_ = false;
  bool committed_ = false;
};

// The object bytes of a data file: its footer's data length, or (no trailer) its size.
// nullopt when it is gone.
Result<std::optional<std::uint64_t>> DataLength(const LocalTier& tier, std::string_view id) {
  auto fd = tier.OpenForRead(id);
  if (!fd.ok()) {
    if (fd.error().code == ErrorCode::kNotFound) {
      return std::optional<std::uint64_t>();
    }
    return std::move(fd).error();
  }
  const std::string path = tier.DataPath(id);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoError(errno, "stat", path);
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < kFooterSize) {
    return std::optional<std::uint64_t>(size);
  }
  std::string tail(kFooterSize, '\0');
  STRATA_RETURN_IF_ERROR(PreadExact(fd->get(), std::span<char>(tail), size - kFooterSize, path));
  auto footer = DecodeFooter(tail, size, path);
  return std::optional<std::uint64_t>(footer.ok() ? footer->data_length : size);
}

}  // namespace

TierTask<std::unique_ptr<TierReader>> LocalTierAdapter::Open(std::string location,
                                                             TierOpenOptions options) {
  const TierRange range = options.range;
  auto file = tier_.OpenData(location);
  if (!file.ok()) {
    co_return std::move(file).error();
  }
  auto footer = DecodeFooter((*file)->tail, (*file)->size, (*file)->path);
  if (!footer.ok()) {
    co_return std::move(footer).error();
  }
  const std::uint64_t length = footer->data_length;
  if (range.offset > length) {
    co_return Error(ErrorCode::kInvalidRange, "range starts at " + std::to_string(range.offset) +
                                                  ", the object has " + std::to_string(length) +
                                                  " bytes");
  }
  const std::uint64_t size = std::min(range.length.value_or(length), length - range.offset);
  const std::vector<metadata::Extent> extents = {{location, length}};
  auto reader = ExtentReader::Open(tier_, extents);
  if (!reader.ok()) {
    if (reader.error().code == ErrorCode::kNoSuchKey) {
      co_return Error(ErrorCode::kNotFound, "data file " + location + " is gone");
    }
    co_return std::move(reader).error();
  }
  co_return std::unique_ptr<TierReader>(
      std::make_unique<LocalRangeReader>(std::move(reader).value(), range.offset, size, length));
}

TierTask<std::unique_ptr<TierWrite>> LocalTierAdapter::BeginWrite(TierWriteOptions options) {
  auto file = tier_.CreateTemp();
  if (!file.ok()) {
    co_return std::move(file).error();
  }
  co_return std::unique_ptr<TierWrite>(
      std::make_unique<LocalWrite>(tier_, std::move(file).value(), options.size));
}

TierTask<TierRemoved> LocalTierAdapter::Remove(std::string location, std::string /*version_id*/) {
  auto removed = tier_.Remove(location);
  if (!removed.ok()) {
    co_return std::move(removed).error();
  }
  co_return TierRemoved{};
}

TierTask<TierUsage> LocalTierAdapter::Usage() {
  std::vector<std::string> ids;
  auto listed = tier_.ForEachDataFile(
      [&ids](std::string_view id, std::chrono::system_clock::time_point) { ids.emplace_back(id); });
  if (!listed.ok()) {
    co_return std::move(listed).error();
  }
  TierUsage usage;
  for (const std::string& id : ids) {
    auto length = DataLength(tier_, id);
    if (!length.ok()) {
      co_return std::move(length).error();
    }
    if (*length) {
      ++usage.objects;
      usage.bytes += **length;
    }
  }
  co_return usage;
}

}  // namespace strata::storage
