#include "metadata/internal/bucket_record_cache.h"

#include <utility>

namespace strata::metadata::internal {

std::optional<BucketRecord> BucketRecordCache::Find(std::string_view name, Miss* miss) {
  std::shared_ptr<const BucketRecord> found;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      miss->generation = generation_;
      return std::nullopt;
    }
    found = it->second.record;
  }
  return *found;  // copied outside the lock: the texts are shared, the rest is small
}

void BucketRecordCache::Keep(BucketRecord record, std::size_t bytes, Miss miss) {
  if (bytes > limits_.max_bytes || limits_.max_entries == 0) {
    return;
  }
  auto shared = std::make_shared<const BucketRecord>(std::move(record));
  std::lock_guard lock(mu_);
  if (miss.generation != generation_) {
    return;  // a row was written since the read: what was read may be older than it
  }
  std::string name = shared->name.str();
  if (auto it = entries_.find(name); it != entries_.end()) {
    bytes_ -= it->second.bytes;
    entries_.erase(it);
  }
  while (!entries_.empty() &&
         (entries_.size() >= limits_.max_entries || bytes_ + bytes > limits_.max_bytes)) {
    bytes_ -= entries_.begin()->second.bytes;
    entries_.erase(entries_.begin());
  }
  entries_.emplace(std::move(name), Entry{std::move(shared), bytes});
  bytes_ += bytes;
}

void BucketRecordCache::Forget(std::string_view name) {
  std::lock_guard lock(mu_);
  ++generation_;
  if (auto it = entries_.find(name); it != entries_.end()) {
    bytes_ -= it->second.bytes;
    entries_.erase(it);
  }
}

std::size_t BucketRecordCache::entries() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

std::size_t BucketRecordCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace strata::metadata::internal
