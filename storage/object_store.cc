#include "storage/object_store.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <exception>
#include <new>
#include <utility>

#include "common/guard.h"
#include "storage/crc64nvme.h"
#include "storage/local/local_tier.h"

namespace strata::storage {
namespace {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Crc64Base64(std::uint64_t crc) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>((crc >> (8 * (7 - i))) & 0xff);
  }
  return Base64Encode(bytes);
}

class LocalPendingWrite final : public PendingWrite {
 public:
  LocalPendingWrite(BucketName bucket, std::unique_ptr<LocalTempFile> file,
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

  Result<void> Append(std::string_view data) override {
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

  std::uint64_t size() const override { return file_->size(); }

  std::string Md5Hex() override {
    finalized_ = true;
    return md5_.FinalHex();
  }
  std::string Md5Base64() override {
    finalized_ = true;
    return md5_.FinalBase64();
  }

  std::optional<std::string> Checksum(ChecksumAlgorithm algorithm) override {
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

  // Algorithm name -> base64, the requested ones in request order, then CRC64NVME.
  std::vector<std::pair<std::string, std::string>> AllChecksums() {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& e : extra_) {
      out.emplace_back(std::string(ChecksumName(e.algorithm)), *Checksum(e.algorithm));
    }
    out.emplace_back(std::string(ChecksumName(ChecksumAlgorithm::kCrc64Nvme)), Crc64Base64(crc64_));
    return out;
  }

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
  std::unique_ptr<LocalTempFile> file_;  // unlinks the temp file unless promoted
  Md5 md5_;
  std::uint64_t crc64_ = 0;
  std::vector<Extra> extra_;
  bool failed_ = false;
  bool finalized_ = false;
};

class LocalObjectReader final : public ObjectReader {
 public:
  LocalObjectReader(UniqueFd fd, std::uint64_t size, std::string path)
      : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}

  std::uint64_t size() const override { return size_; }

  Result<std::size_t> Read(std::uint64_t offset, std::span<char> buf) override {
    if (offset >= size_ || buf.empty()) {
      return std::size_t{0};
    }
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset));
    std::size_t done = 0;
    while (done < want) {
      const ssize_t n =
          ::pread(fd_.get(), buf.data() + done, want - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return ErrnoError(errno, "read", path_);
      }
      if (n == 0) {
        return Error(ErrorCode::kCorruption, "data file " + path_ + " is shorter than its record");
      }
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

 private:
  UniqueFd fd_;
  std::uint64_t size_;
  std::string path_;
};

// The ObjectStore on one local hot tier and the index.
class LocalObjectStore final : public ObjectStore {
 public:
  LocalObjectStore(std::unique_ptr<LocalTier> tier, metadata::Index& index)
      : tier_(std::move(tier)), index_(index) {}

  Result<metadata::BucketRecord> CreateBucket(const BucketName& name, const std::string& owner,
                                              const std::string& region) override {
    if (!IsValidBucketName(name.view())) {
      return Error(ErrorCode::kInvalidBucketName,
                   "The specified bucket is not valid: " + name.str());
    }
    return GuardExceptions("create bucket", [&]() -> Result<metadata::BucketRecord> {
      metadata::BucketRecord record{name, owner, NowMs(), region};
      auto created = index_.CreateBucket(record);
      if (created.ok()) {
        return record;
      }
      if (created.error().code != ErrorCode::kAlreadyExists) {
        return std::move(created).error();
      }
      auto existing = index_.GetBucket(name);
      if (existing.ok() && existing->owner == owner) {
        return Error(ErrorCode::kBucketAlreadyOwnedByYou,
                     "Your previous request to create the named bucket succeeded and you "
                     "already own it.");
      }
      return Error(ErrorCode::kBucketAlreadyExists, "The requested bucket name is not available.");
    });
  }

  Result<metadata::BucketRecord> GetBucket(const BucketName& name) override {
    auto bucket = index_.GetBucket(name);
    if (!bucket.ok() && bucket.error().code == ErrorCode::kNotFound) {
      return NoSuchBucket(name);
    }
    return bucket;
  }

  Result<void> DeleteBucket(const BucketName& name) override {
    auto deleted = index_.DeleteBucket(name);
    if (!deleted.ok() && deleted.error().code == ErrorCode::kNotFound) {
      return NoSuchBucket(name);
    }
    return deleted;
  }

  Result<std::vector<metadata::BucketRecord>> ListBuckets() override {
    return index_.ListBuckets();
  }

  Result<std::unique_ptr<PendingWrite>> BeginWrite(
      const BucketName& bucket, const std::vector<ChecksumAlgorithm>& checksums) override {
    return GuardExceptions("begin write", [&]() -> Result<std::unique_ptr<PendingWrite>> {
      auto exists = GetBucket(bucket);
      if (!exists.ok()) {
        return std::move(exists).error();
      }
      auto file = tier_->CreateTemp();
      if (!file.ok()) {
        return std::move(file).error();
      }
      return std::unique_ptr<PendingWrite>(
          std::make_unique<LocalPendingWrite>(bucket, std::move(file).value(), checksums));
    });
  }

  using ObjectStore::CommitWrite;
  Result<metadata::ObjectRecord> CommitWrite(std::unique_ptr<PendingWrite> write,
                                             metadata::ObjectRecord record,
                                             const metadata::WriteCondition& condition) override {
    return GuardExceptions("commit write", [&]() -> Result<metadata::ObjectRecord> {
      auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
      if (pending == nullptr) {
        return Error(ErrorCode::kInternal, "CommitWrite of a foreign PendingWrite");
      }
      if (pending->failed()) {
        return Error(ErrorCode::kInternal, "CommitWrite of a failed write");
      }
      if (record.bucket.empty()) {
        record.bucket = pending->bucket();
      } else if (record.bucket != pending->bucket()) {
        return Error(ErrorCode::kInternal, "CommitWrite into another bucket than BeginWrite's");
      }
      record.size = pending->size();
      record.etag = pending->Md5Hex();
      record.last_modified_ms = NowMs();
      record.version_id = VersionId("null");
      record.checksums = pending->AllChecksums();
      LocalTempFile& file = pending->file();
      record.placements = {metadata::Placement{tier_->name(), file.id()}};

      STRATA_RETURN_IF_ERROR(tier_->Promote(file));
      auto replaced = index_.PutObject(record, condition);
      if (!replaced.ok()) {
        RemoveQuietly(file.id());
        return std::move(replaced).error();
      }
      if (replaced->has_value()) {
        RemoveData(**replaced, file.id());
      }
      return record;
    });
  }

  Result<metadata::ObjectRecord> HeadObject(const BucketName& bucket,
                                            const ObjectKey& key) override {
    auto record = index_.GetObject(bucket, key);
    if (!record.ok() && record.error().code == ErrorCode::kNotFound) {
      auto b = GetBucket(bucket);
      if (!b.ok()) {
        return std::move(b).error();
      }
      return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
    }
    return record;
  }

  Result<std::unique_ptr<ObjectReader>> OpenObject(const metadata::ObjectRecord& record) override {
    return GuardExceptions("open object", [&]() -> Result<std::unique_ptr<ObjectReader>> {
      const metadata::Placement* placement = nullptr;
      for (const auto& p : record.placements) {
        if (p.tier == tier_->name()) {
          placement = &p;
          break;
        }
      }
      if (placement == nullptr) {
        return Error(ErrorCode::kUnavailable, "object has no copy on tier " + tier_->name());
      }
      auto fd = tier_->OpenForRead(placement->location);
      if (!fd.ok()) {
        if (fd.error().code == ErrorCode::kNotFound) {
          // Overwritten or deleted since the record was read.
          return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
        }
        return std::move(fd).error();
      }
      struct stat st {};
      const std::string path = tier_->DataPath(placement->location);
      if (::fstat(fd->get(), &st) != 0) {
        return ErrnoError(errno, "stat", path);
      }
      if (static_cast<std::uint64_t>(st.st_size) != record.size) {
        return Error(ErrorCode::kCorruption, "data file " + path + " has " +
                                                 std::to_string(st.st_size) + " bytes, record " +
                                                 std::to_string(record.size));
      }
      return std::unique_ptr<ObjectReader>(
          std::make_unique<LocalObjectReader>(std::move(fd).value(), record.size, path));
    });
  }

  Result<void> DeleteObject(const BucketName& bucket, const ObjectKey& key) override {
    return GuardExceptions("delete object", [&]() -> Result<void> {
      auto removed = index_.DeleteObject(bucket, key);
      if (!removed.ok()) {
        return std::move(removed).error();
      }
      if (removed->has_value()) {
        RemoveData(**removed, "");
      }
      return Ok();
    });
  }

 private:
  static Error NoSuchBucket(const BucketName& name) {
    return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist: " + name.str());
  }

  // Frees the bytes of a version no longer in the index. A failure only leaks a file
  // (found later by the scrubber), so it is logged, not returned.
  void RemoveData(const metadata::ObjectRecord& old, const std::string& keep) {
    for (const auto& p : old.placements) {
      if (p.tier == tier_->name() && p.location != keep) {
        RemoveQuietly(p.location);
      }
    }
  }

  void RemoveQuietly(const std::string& id) {
    auto removed = tier_->Remove(id);
    if (!removed.ok()) {
      spdlog::warn("storage: could not remove data file {} on tier {}: {}", id, tier_->name(),
                   removed.error().message);
    }
  }

  std::unique_ptr<LocalTier> tier_;
  metadata::Index& index_;
};

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool LooksLikeIpv4(std::string_view name) {
  int parts = 0;
  while (true) {
    const auto dot = name.find('.');
    if (!IsDigits(name.substr(0, dot))) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) {
      break;
    }
    name.remove_prefix(dot + 1);
  }
  return parts == 4;
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const Config& config,
                                                       metadata::Index& index) {
  return GuardExceptions("open object store", [&]() -> Result<std::unique_ptr<ObjectStore>> {
    const TierConfig* hot = config.HotTier();
    if (hot == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "no hot tier: map STANDARD to a local tier");
    }
    if (hot->kind != TierKind::kLocal) {
      return Error(ErrorCode::kNotImplemented,
                   "tier " + hot->name + ": only local hot tiers are supported");
    }
    auto tier = LocalTier::Open(hot->name, hot->path, config.server.fsync);
    if (!tier.ok()) {
      return std::move(tier).error();
    }
    return std::unique_ptr<ObjectStore>(
        std::make_unique<LocalObjectStore>(std::move(tier).value(), index));
  });
}

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return false;
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) {
    return false;
  }
  if (name.find("..") != std::string_view::npos || LooksLikeIpv4(name)) {
    return false;
  }
  // Prefixes and suffixes S3 reserves (access point aliases, Object Lambda, directory
  // buckets, punycode, ...).
  for (std::string_view prefix : {"xn--", "sthree-", "amzn-s3-demo-"}) {
    if (name.starts_with(prefix)) {
      return false;
    }
  }
  for (std::string_view suffix : {"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"}) {
    if (name.ends_with(suffix)) {
      return false;
    }
  }
  return true;
}

}  // namespace strata::storage
