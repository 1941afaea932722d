// DataPath: how the request path moves object bytes between local tier files and memory.
//
// kIoUring: ObjectReader::ReadAsync submits its reads to the io_uring ring of the
// io_context the calling coroutine runs on (Asio's random_access_file; one ring per
// io_context, so per I/O thread), and the thread serves other connections while the disk
// works. kPread: the same calls use pread on the calling thread, as the synchronous Read
// does. Writes (PendingWrite::AppendAsync) are pwrites on either path: buffered writes
// through the ring were measured half as fast (storage/local/local_tier.cc).
//
// The path is chosen once at start (SelectDataPath) and read by every thread afterwards.
// io_uring may be missing (old kernels, kernel.io_uring_disabled, a container's seccomp
// filter), so it is probed first and the process falls back to pread/pwrite.
#pragma once

#include <boost/asio/io_context.hpp>
#include <string_view>

namespace strata::storage {

enum class DataPath { kPread, kIoUring };

// "io_uring" or "pread/pwrite".
std::string_view DataPathName(DataPath path);

// Chooses the data path: kIoUring when `want_io_uring` (server.io_uring) and a probe (an
// io_context whose ring reads a byte of a file) succeeds, else kPread. Logs one line
// naming the path used and, on fallback, why. Call once at start, before I/O threads run.
DataPath SelectDataPath(bool want_io_uring);

// The path chosen; kPread until SelectDataPath picks io_uring. Any thread.
DataPath CurrentDataPath();

// Creates `ioc`'s ring now, so that a failure shows at start instead of on a request.
// When it cannot, logs why, switches the process to kPread and returns false. Call
// before `ioc` runs; a no-op returning false when the path is kPread.
bool PrepareDataPath(boost::asio::io_context& ioc);

}  // namespace strata::storage
