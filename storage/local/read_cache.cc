// ReadCache over a local tier of its own (storage/read_cache.h).
#include "storage/read_cache.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <list>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "storage/cache_policy.h"
#include "storage/checksum.h"
#include "storage/local/local_io.h"
#include "storage/local/local_tier.h"

namespace strata::storage {
namespace {

std::string MapKey(const BucketName& bucket, const ObjectKey& key) {
  std::string out;
  out.reserve(bucket.view().size() + 1 + key.view().size());
  out.append(bucket.view());
  out.push_back('\0');
  out.append(key.view());
  return out;
}

// The record's CRC64NVME as stored (base64), or empty.
std::string_view Crc64Of(const metadata::ObjectRecord& record) {
  for (const auto& [name, value] : record.checksums) {
    if (name == "CRC64NVME") {
      return value;
    }
  }
  return {};
}

class LocalReadCache;

class LocalReadCacheFill final : public ReadCacheFill {
 public:
  LocalReadCacheFill(LocalReadCache& cache, std::string map_key, std::string tag,
                     std::uint64_t size, std::unique_ptr<LocalTempFile> file)
      : cache_(cache),
        map_key_(std::move(map_key)),
        tag_(std::move(tag)),
        size_(size),
        file_(std::move(file)) {}
  ~LocalReadCacheFill() override;

  boost::asio::awaitable<Result<void>> Append(std::string_view bytes) override;
  bool Commit(std::uint64_t crc) override;

 private:
  LocalReadCache& cache_;
  std::string map_key_;
  std::string tag_;
  std::uint64_t size_;
  std::unique_ptr<LocalTempFile> file_;  // unlinked unless promoted
  bool failed_ = false;
  bool done_ = false;  // committed or refused: the fill's mark is gone
};

class LocalReadCache final : public ReadCache {
 public:
  LocalReadCache(const ReadCacheOptions& options, std::unique_ptr<LocalTier> tier)
      : options_(options), tier_(std::move(tier)) {
    if (options_.max_object == 0) {
      options_.max_object = options_.capacity / 8;
    }
  }

  std::optional<ReadCacheHit> Find(const BucketName& bucket, const ObjectKey& key) override {
    const std::string map_key = MapKey(bucket, key);
    std::string file_id;
    std::uint64_t size = 0;
    ReadCacheHit hit;
    {
      std::lock_guard lock(mu_);
      auto it = index_.find(map_key);
      if (it == index_.end()) {
        return std::nullopt;
      }
      lru_.splice(lru_.begin(), lru_, it->second);
      hit.tag = it->second->tag;
      file_id = it->second->file_id;
      size = it->second->size;
    }
    auto reader = ExtentReader::Open(*tier_, {metadata::Extent{file_id, size}});
    if (!reader.ok()) {
      spdlog::warn("read cache: a copy cannot be opened, dropped: {}", reader.error().message);
      Drop(map_key, /*error=*/true, file_id);
      return std::nullopt;
    }
    hit.reader = std::move(reader).value();
    return hit;
  }

  void Served(const BucketName& bucket, const ObjectKey& key, bool ok) override {
    if (ok) {
      std::lock_guard lock(mu_);
      ++stats_.hits;
      return;
    }
    Drop(MapKey(bucket, key), /*error=*/true);
  }

  std::unique_ptr<ReadCacheFill> BeginFill(const BucketName& bucket, const ObjectKey& key,
                                           std::string_view tag, std::uint64_t size) override {
    if (tag.empty() || tag.size() > kMaxReadCacheTag) {
      return nullptr;
    }
    std::string map_key = MapKey(bucket, key);
    {
      std::lock_guard lock(mu_);
      if (size == 0 || size > options_.max_object) {
        ++stats_.refused;
        return nullptr;
      }
      auto it = index_.find(map_key);
      if ((it != index_.end() && it->second->tag == tag) || filling_.contains(map_key)) {
        return nullptr;
      }
      filling_.insert(map_key);
    }
    auto file = tier_->CreateTemp();
    if (!file.ok()) {
      spdlog::warn("read cache: cannot make a file: {}", file.error().message);
      EndFill(map_key, /*refused=*/true);
      return nullptr;
    }
    return std::make_unique<LocalReadCacheFill>(*this, std::move(map_key), std::string(tag), size,
                                                std::move(file).value());
  }

  ReadCacheStats Stats() const override {
    std::lock_guard lock(mu_);
    ReadCacheStats stats = stats_;
    stats.capacity = options_.capacity;
    stats.bytes = bytes_;
    stats.entries = index_.size();
    return stats;
  }

  // --- For LocalReadCacheFill ---

  // Keeps the promoted file `file_id` as the key's copy, then evicts past the limits.
  void Keep(const std::string& map_key, std::string tag, std::string file_id, std::uint64_t size) {
    std::vector<std::string> unlink;
    {
      std::lock_guard lock(mu_);
      filling_.erase(map_key);
      if (auto it = index_.find(map_key); it != index_.end()) {
        unlink.push_back(it->second->file_id);
        Forget(it);
      }
      lru_.push_front(Entry{map_key, std::move(tag), std::move(file_id), size});
      index_.emplace(map_key, lru_.begin());
      bytes_ += size;
      ++stats_.fills;
      while (bytes_ > options_.capacity || index_.size() > options_.max_entries) {
        auto victim = index_.find(lru_.back().map_key);
        unlink.push_back(victim->second->file_id);
        Forget(victim);
        ++stats_.evictions;
      }
    }
    Unlink(unlink);
  }

  void EndFill(const std::string& map_key, bool refused) {
    std::lock_guard lock(mu_);
    filling_.erase(map_key);
    if (refused) {
      ++stats_.refused;
    }
  }

  LocalTier& tier() { return *tier_; }

 private:
  struct Entry {
    std::string map_key;
    std::string tag;
    std::string file_id;
    std::uint64_t size = 0;
  };
  using Lru = std::list<Entry>;

  // Under mu_.
  void Forget(std::unordered_map<std::string, Lru::iterator>::iterator it) {
    bytes_ -= it->second->size;
    lru_.erase(it->second);
    index_.erase(it);
  }

  // Drops the key's copy; with `file_id`, only when it is still that file (a fill may have
  // replaced it since).
  void Drop(const std::string& map_key, bool error, std::string_view file_id = {}) {
    std::vector<std::string> unlink;
    {
      std::lock_guard lock(mu_);
      auto it = index_.find(map_key);
      if (it == index_.end() || (!file_id.empty() && it->second->file_id != file_id)) {
        return;
      }
      unlink.push_back(it->second->file_id);
      Forget(it);
      if (error) {
        ++stats_.errors;
      }
    }
    Unlink(unlink);
  }

  // Outside the lock: an unlink of a large file takes its time. A reader that has the
  // file open reads on.
  void Unlink(const std::vector<std::string>& file_ids) {
    for (const auto& id : file_ids) {
      auto removed = tier_->Remove(id);
      if (!removed.ok()) {
        spdlog::warn("read cache: {}", removed.error().message);
      }
    }
  }

  ReadCacheOptions options_;
  std::unique_ptr<LocalTier> tier_;
  mutable std::mutex mu_;
  Lru lru_;  // front: most recently used
  std::unordered_map<std::string, Lru::iterator> index_;
  std::set<std::string> filling_;
  std::uint64_t bytes_ = 0;
  ReadCacheStats stats_;
};

LocalReadCacheFill::~LocalReadCacheFill() {
  if (!done_) {
    cache_.EndFill(map_key_, /*refused=*/true);
  }
}

boost::asio::awaitable<Result<void>> LocalReadCacheFill::Append(std::string_view bytes) {
  if (failed_ || done_) {
    co_return Error(ErrorCode::kInternal, "the read cache's fill was dropped");
  }
  if (file_->size() + bytes.size() > size_) {
    failed_ = true;
    co_return Error(ErrorCode::kInternal, "more bytes than the version's size");
  }
  auto appended = co_await file_->AppendAsync(bytes);
  if (!appended.ok()) {
    failed_ = true;
  }
  co_return appended;
}

bool LocalReadCacheFill::Commit(std::uint64_t crc) {
  if (done_) {
    return false;
  }
  done_ = true;
  if (failed_ || file_->size() != size_ || file_->crc64() != crc) {
    if (!failed_ && file_->size() == size_) {
      spdlog::warn("read cache: a copy's CRC64NVME differs from its owner's, dropped");
    }
    cache_.EndFill(map_key_, /*refused=*/true);
    return false;
  }
  auto promoted = cache_.tier().Promote(*file_);
  if (!promoted.ok()) {
    spdlog::warn("read cache: {}", promoted.error().message);
    cache_.EndFill(map_key_, /*refused=*/true);
    return false;
  }
  cache_.Keep(map_key_, std::move(tag_), file_->id(), size_);
  return true;
}

}  // namespace

std::optional<ReadCacheVersion> ReadCacheVersionOf(const metadata::ObjectRecord& record) {
  if (record.delete_marker || record.size == 0 || record.storage_class != "STANDARD" ||
      record.version_id.view().size() > kMaxReadCacheTag - 17) {
    return std::nullopt;
  }
  const std::string_view crc_text = Crc64Of(record);
  const auto crc_bytes = Base64Decode(crc_text);
  if (!crc_bytes || crc_bytes->size() != 8) {
    return std::nullopt;
  }
  ReadCacheVersion version;
  for (unsigned char byte : *crc_bytes) {
    version.crc = (version.crc << 8) | byte;  // S3's checksums are big-endian
  }
  const std::string size = std::to_string(record.size);
  const std::string time = std::to_string(record.last_modified_ms);
  const std::uint64_t hash = HashParts({record.etag, time, size, crc_text});
  version.tag = fmt::format("{}:{:016x}", record.version_id.view(), hash);
  return version;
}

Result<std::unique_ptr<ReadCache>> OpenReadCache(const ReadCacheOptions& options) {
  std::error_code ec;
  std::filesystem::remove_all(options.root, ec);
  if (ec) {
    return Error(ErrorCode::kInternal,
                 "read cache: cannot empty " + options.root + ": " + ec.message());
  }
  auto tier = LocalTier::Open("read-cache", options.root, /*fsync=*/false);
  if (!tier.ok()) {
    return std::move(tier).error();
  }
  return std::unique_ptr<ReadCache>(
      std::make_unique<LocalReadCache>(options, std::move(tier).value()));
}

}  // namespace strata::storage
