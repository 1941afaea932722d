#include "tests/unit/storage/testing/mem_tier.h"

#include <algorithm>
#include <utility>

#include "storage/crc64nvme.h"

namespace strata::storage::testing {
namespace {

std::vector<std::uint64_t> ChunkCrcs(std::string_view bytes) {
  std::vector<std::uint64_t> crcs;
  for (std::size_t pos = 0; pos < bytes.size(); pos += MemTier::kChunk) {
    crcs.push_back(Crc64Nvme(0, bytes.substr(pos, MemTier::kChunk)));
  }
  return crcs;
}

class MemReader final : public TierReader {
 public:
  MemReader(std::shared_ptr<const MemTier::Object> object, std::string location,
            std::uint64_t start, std::uint64_t size)
      : object_(std::move(object)), location_(std::move(location)), start_(start), size_(size) {
    info_.size = object_->bytes.size();
  }

  std::uint64_t size() const override { return size_; }
  const TierObjectInfo& info() const override { return info_; }

  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    if (offset >= size_ || buf.empty()) {
      co_return std::size_t{0};
    }
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset));
    const std::uint64_t first = start_ + offset;
    const std::string_view bytes = object_->bytes;
    // Every chunk the read touches is checked whole before any of its bytes goes out.
    for (std::uint64_t c = first / MemTier::kChunk; c <= (first + n - 1) / MemTier::kChunk; ++c) {
      if (Crc64Nvme(0, bytes.substr(c * MemTier::kChunk, MemTier::kChunk)) !=
          object_->chunk_crcs[c]) {
        co_return Error(ErrorCode::kCorruption, "mem tier: CRC64NVME mismatch in " + location_ +
                                                    " chunk " + std::to_string(c));
      }
    }
    std::copy_n(bytes.data() + first, n, buf.data());
    co_return n;
  }

 private:
  std::shared_ptr<const MemTier::Object> object_;
  std::string location_;
  std::uint64_t start_;
  std::uint64_t size_;
  TierObjectInfo info_;
};

}  // namespace

class MemTier::Write final : public TierWrite {
 public:
  Write(MemTier& tier, std::string location, std::optional<std::uint64_t> expected)
      : tier_(tier), location_(std::move(location)), expected_(expected) {
    ++tier_.open_writes_;
  }
  ~Write() override {
    if (!committed_) {
      --tier_.open_writes_;
    }
  }

  TierTask<void> Append(std::string_view data) override {
    if (committed_) {
      co_return Error(ErrorCode::kInternal, "append to a committed write");
    }
    bytes_.append(data);
    co_return Ok();
  }

  TierTask<TierObject> Commit() override {
    if (committed_) {
      co_return Error(ErrorCode::kInternal, "commit of a committed write");
    }
    if (expected_ && *expected_ != bytes_.size()) {
      co_return Error(ErrorCode::kIncompleteBody, "mem tier: " + std::to_string(bytes_.size()) +
                                                      " bytes written, " +
                                                      std::to_string(*expected_) + " declared");
    }
    auto object = std::make_shared<Object>();
    object->chunk_crcs = ChunkCrcs(bytes_);
    const std::uint64_t crc = Crc64Nvme(0, bytes_);
    const std::uint64_t size = bytes_.size();
    object->bytes = std::move(bytes_);
    tier_.Put(location_, std::move(object));
    committed_ = true;
    --tier_.open_writes_;
    co_return TierObject{location_, size, crc, {}, {}};
  }

 private:
  MemTier& tier_;
  std::string location_;
  std::optional<std::uint64_t> expected_;
  std::string bytes_;
  bool committed_ = false;
};

void MemTier::Put(const std::string& location, std::shared_ptr<const Object> object) {
  std::lock_guard lock(mu_);
  objects_[location] = std::move(object);
}

TierTask<std::unique_ptr<TierReader>> MemTier::Open(std::string location, TierOpenOptions options) {
  const TierRange range = options.range;
  std::shared_ptr<const Object> object;
  {
    std::lock_guard lock(mu_);
    auto it = objects_.find(location);
    if (it != objects_.end()) {
      object = it->second;
    }
  }
  if (!object) {
    co_return Error(ErrorCode::kNotFound, "mem tier " + name_ + ": no object " + location);
  }
  const std::uint64_t length = object->bytes.size();
  if (range.offset > length) {
    co_return Error(ErrorCode::kInvalidRange, "range starts past the end of " + location);
  }
  const std::uint64_t size = std::min(range.length.value_or(length), length - range.offset);
  co_return std::unique_ptr<TierReader>(
      std::make_unique<MemReader>(std::move(object), location, range.offset, size));
}

TierTask<std::unique_ptr<TierWrite>> MemTier::BeginWrite(TierWriteOptions options) {
  std::string location = std::move(options.location);
  if (location.empty()) {
    std::lock_guard lock(mu_);
    location = "mem-" + std::to_string(next_id_++);
  }
  co_return std::unique_ptr<TierWrite>(
      std::make_unique<Write>(*this, std::move(location), options.size));
}

TierTask<TierRemoved> MemTier::Remove(std::string location, std::string /*version_id*/) {
  std::lock_guard lock(mu_);
  objects_.erase(location);
  co_return TierRemoved{};
}

TierTask<TierUsage> MemTier::Usage() {
  TierUsage usage;
  std::lock_guard lock(mu_);
  for (const auto& [location, object] : objects_) {
    ++usage.objects;
    usage.bytes += object->bytes.size();
  }
  co_return usage;
}

bool MemTier::CorruptStored(const std::string& location, std::uint64_t offset, int bit) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(location);
  if (it == objects_.end() || offset >= it->second->bytes.size()) {
    return false;
  }
  auto damaged = std::make_shared<Object>(*it->second);
  damaged->bytes[offset] = static_cast<char>(damaged->bytes[offset] ^ (1 << (bit & 7)));
  it->second = std::move(damaged);
  return true;
}

}  // namespace strata::storage::testing
