// OpenFiles: data files kept open for reading, so a GET of a small object costs no open,
// fstat, trailer read and close (private to storage/). Data files never change once
// promoted and their ids are never reused, so an open descriptor stays right for its id;
// LocalTier::Remove drops the id after the unlink, so the cache never keeps a removed
// file's blocks. Readers share an entry: its descriptor closes when the last one lets go.
// Thread-safe: shards, each an LRU list under its own mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/string_hash.h"
#include "storage/local/local_tier.h"

namespace strata::storage {

// A data file open for reading.
struct OpenDataFile {
  UniqueFd fd;
  std::string path;
  std::uint64_t size = 0;  // bytes in the file, trailer included
  std::string tail;        // its last kFooterSize bytes (all of it when shorter)
};

class OpenFiles {
 public:
  explicit OpenFiles(std::size_t capacity);

  std::shared_ptr<const OpenDataFile> Find(std::string_view id);
  // Keeps `file` under `id` unless its file has no name left (unlinked meanwhile: then
  // Remove's Erase may already have run, and nothing would drop it).
  void Insert(std::string_view id, std::shared_ptr<const OpenDataFile> file);
  void Erase(std::string_view id);

  std::size_t size() const;

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    mutable std::mutex mu;
    // Most recently used first.
    std::list<std::pair<std::string, std::shared_ptr<const OpenDataFile>>> lru;
    std::unordered_map<std::string, decltype(lru)::iterator, StringHash, std::equal_to<>> index;
  };

  Shard& ShardOf(std::string_view id);

  std::size_t per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace strata::storage
