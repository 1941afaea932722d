#include "storage/local/open_files.h"

#include <sys/stat.h>

namespace strata::storage {

OpenFiles::OpenFiles(std::size_t capacity)
    : per_shard_(capacity / kShards > 0 ? capacity / kShards : 1) {}

OpenFiles::Shard& OpenFiles::ShardOf(std::string_view id) {
  return shards_[StringHash{}(id) % kShards];
}

std::shared_ptr<const OpenDataFile> OpenFiles::Find(std::string_view id) {
  Shard& shard = ShardOf(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.index.find(id);
  if (it == shard.index.end()) {
    return nullptr;
  }
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
  return it->second->second;
}

void OpenFiles::Insert(std::string_view id, std::shared_ptr<const OpenDataFile> file) {
  Shard& shard = ShardOf(id);
  std::shared_ptr<const OpenDataFile> evicted;  // closed outside the lock
  std::lock_guard lock(shard.mu);
  // Checked under the lock: Remove unlinks first and erases under this lock after, so a
  // file still named here is either erased later or was never going to be.
  struct stat st {};
  if (::fstat(file->fd.get(), &st) != 0 || st.st_nlink == 0) {
    return;
  }
  auto it = shard.index.find(id);
  if (it != shard.index.end()) {
    shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
    return;  // another reader opened it too
  }
  shard.lru.emplace_front(std::string(id), std::move(file));
  shard.index.emplace(shard.lru.front().first, shard.lru.begin());
  if (shard.lru.size() > per_shard_) {
    evicted = std::move(shard.lru.back().second);
    shard.index.erase(shard.lru.back().first);
    shard.lru.pop_back();
  }
}

void OpenFiles::Erase(std::string_view id) {
  Shard& shard = ShardOf(id);
  std::shared_ptr<const OpenDataFile> erased;  // closed outside the lock
  std::lock_guard lock(shard.mu);
  auto it = shard.index.find(id);
  if (it == shard.index.end()) {
    return;
  }
  erased = std::move(it->second->second);
  shard.lru.erase(it->second);
  shard.index.erase(it);
}

std::size_t OpenFiles::size() const {
  std::size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    n += shard.lru.size();
  }
  return n;
}

}  // namespace strata::storage
