#include "storage/local/async_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include "storage/data_path.h"
#include "storage/local/local_tier.h"

namespace strata::storage {
namespace {

namespace asio = boost::asio;

std::atomic<DataPath> g_data_path{DataPath::kPread};

void FallBack(std::string_view why) {
  // Only the first failure is worth a line; later ones say the same.
  if (g_data_path.exchange(DataPath::kPread) == DataPath::kIoUring) {
    spdlog::warn("storage: data path: pread/pwrite from now on (io_uring failed: {})", why);
  }
}

// Reads one byte of this executable through a fresh io_context's ring: the whole path a
// request takes (ring setup, eventfd on epoll, a read completion), so a kernel or
// seccomp filter refusing any of it shows here. An empty answer means it works.
std::string ProbeIoUring() {
  UniqueFd fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return std::string("open /proc/self/exe: ") + std::strerror(errno);
  }
  try {
    asio::io_context ioc{1};
    asio::random_access_file file(ioc);  // creates the ring; throws when it cannot
    boost::system::error_code ec;
    file.assign(fd.get(), ec);
    if (ec) {
      return "assign: " + ec.message();
    }
    char byte = 0;
    boost::system::error_code read_ec = asio::error::timed_out;
    std::size_t got = 0;
    file.async_read_some_at(0, asio::buffer(&byte, 1),
                            [&](const boost::system::error_code& e, std::size_t n) {
                              read_ec = e;
                              got = n;
                            });
    ioc.run_for(std::chrono::seconds(5));
    boost::system::error_code ignored;
    file.release(ignored);
    if (read_ec) {
      return "probe read: " + read_ec.message();
    }
    if (got != 1) {
      return "probe read returned no byte";
    }
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

std::string_view DataPathName(DataPath path) {
  return path == DataPath::kIoUring ? "io_uring" : "pread/pwrite";
}

DataPath SelectDataPath(bool want_io_uring) {
  if (!want_io_uring) {
    g_data_path = DataPath::kPread;
    spdlog::info("storage: data path: pread/pwrite (server.io_uring = false)");
    return DataPath::kPread;
  }
  const std::string why = ProbeIoUring();
  if (!why.empty()) {
    g_data_path = DataPath::kPread;
    spdlog::warn("storage: data path: pread/pwrite (io_uring unavailable: {})", why);
    return DataPath::kPread;
  }
  g_data_path = DataPath::kIoUring;
  spdlog::info("storage: data path: io_uring (one ring per I/O thread)");
  return DataPath::kIoUring;
}

DataPath CurrentDataPath() { return g_data_path.load(std::memory_order_relaxed); }

bool PrepareDataPath(asio::io_context& ioc) {
  if (CurrentDataPath() != DataPath::kIoUring) {
    return false;
  }
  try {
    asio::random_access_file file(ioc);  // the ring lives as long as `ioc`
    return true;
  } catch (const std::exception& e) {
    FallBack(e.what());
    return false;
  }
}

Result<void> PreadExact(int fd, std::span<char> dst, std::uint64_t offset,
                        const std::string& path) {
  std::size_t done = 0;
  while (done < dst.size()) {
    const ssize_t n =
        ::pread(fd, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoError(errno, "read", path);
    }
    if (n == 0) {
      return Error(ErrorCode::kCorruption, "data file " + path + " is shorter than its record");
    }
    done += static_cast<std::size_t>(n);
  }
  return Ok();
}

Result<void> PwriteAll(int fd, std::string_view data, std::uint64_t offset,
                       const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoError(errno, "write", path);
    }
    offset += static_cast<std::uint64_t>(n);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Ok();
}

AsyncFile::AsyncFile(AsyncFile&& other) noexcept : fd_(other.fd_) {
  if (other.file_) {
    file_.emplace(std::move(*other.file_));
    other.file_.reset();
  }
  other.fd_ = -1;
}

void AsyncFile::Reset() {
  if (file_) {
    boost::system::error_code ignored;
    file_->release(ignored);  // the owner closes the descriptor, not the file object
    file_.reset();
  }
  fd_ = -1;
}

asio::random_access_file* AsyncFile::Bind(int fd, const asio::any_io_executor& ex) {
  if (CurrentDataPath() != DataPath::kIoUring) {
    return nullptr;
  }
  if (file_ && fd_ == fd && file_->get_executor() == ex) {
    return &*file_;
  }
  Reset();
  try {
    file_.emplace(ex);  // the io_context's ring, made on its first file
  } catch (const std::exception& e) {
    file_.reset();
    FallBack(e.what());
    return nullptr;
  }
  boost::system::error_code ec;
  file_->assign(fd, ec);
  if (ec) {
    file_.reset();
    FallBack("assign: " + ec.message());
    return nullptr;
  }
  fd_ = fd;
  return &*file_;
}

namespace {

Error AsioError(const boost::system::error_code& ec, std::string_view op, const std::string& path) {
  if (ec.category() == boost::system::system_category()) {
    return ErrnoError(ec.value(), op, path);
  }
  return Error(ErrorCode::kInternal, std::string(op) + " " + path + ": " + ec.message());
}

}  // namespace

asio::awaitable<Result<void>> AsyncFile::ReadExact(int fd, std::span<char> dst,
                                                   std::uint64_t offset, const std::string& path) {
  auto ex = co_await asio::this_coro::executor;
  asio::random_access_file* file = Bind(fd, ex);
  if (file == nullptr) {
    co_return PreadExact(fd, dst, offset, path);
  }
  std::size_t done = 0;
  while (done < dst.size()) {
    auto [ec, n] = co_await file->async_read_some_at(
        offset + done, asio::buffer(dst.data() + done, dst.size() - done),
        asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::eof || (!ec && n == 0)) {
      co_return Error(ErrorCode::kCorruption, "data file " + path + " is shorter than its record");
    }
    if (ec == asio::error::interrupted) {
      continue;
    }
    if (ec) {
      co_return AsioError(ec, "read", path);
    }
    done += n;
  }
  co_return Ok();
}

}  // namespace strata::storage
