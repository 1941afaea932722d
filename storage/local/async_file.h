// AsyncFile: reads of one descriptor on the request path (private to storage/), through
// the io_uring ring of the calling coroutine's io_context when the data path is io_uring
// (storage/data_path.h), else with pread. Plus the synchronous whole-buffer helpers.
//
// An AsyncFile borrows its descriptor: it never closes it, and must be Reset (or
// destroyed) before the owner closes it. Used by one coroutine at a time.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/random_access_file.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata::storage {

// Reads exactly `dst.size()` bytes at `offset` with pread. A file that ends before is
// kCorruption ("data file <path> is shorter than its record"); other errors name `path`.
Result<void> PreadExact(int fd, std::span<char> dst, std::uint64_t offset, const std::string& path);
// Writes all of `data` at `offset` with pwrite (kNoSpace when the disk is full).
Result<void> PwriteAll(int fd, std::string_view data, std::uint64_t offset,
                       const std::string& path);

class AsyncFile {
 public:
  AsyncFile() = default;
  ~AsyncFile() { Reset(); }
  AsyncFile(AsyncFile&& other) noexcept;
  AsyncFile& operator=(AsyncFile&&) = delete;
  AsyncFile(const AsyncFile&) = delete;
  AsyncFile& operator=(const AsyncFile&) = delete;

  // Forgets the descriptor (never closes it); the next call binds again.
  void Reset();

  // As PreadExact, submitted to the current io_context's ring. The buffer must stay valid
  // until the awaitable completes (a coroutine's locals do).
  boost::asio::awaitable<Result<void>> ReadExact(int fd, std::span<char> dst, std::uint64_t offset,
                                                 const std::string& path);

 private:
  // The file adopting `fd` on `ex`'s io_context; nullptr when the data path is pread or
  // that io_context has no ring (then the caller uses pread/pwrite).
  boost::asio::random_access_file* Bind(int fd, const boost::asio::any_io_executor& ex);

  std::optional<boost::asio::random_access_file> file_;
  int fd_ = -1;
};

}  // namespace strata::storage
