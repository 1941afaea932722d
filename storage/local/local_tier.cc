#include "storage/local/local_tier.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>
#include <vector>

#include "storage/local/async_file.h"
#include "storage/local/open_files.h"

namespace strata::storage {
namespace {

namespace fs = std::filesystem;

constexpr char kHex[] = "0123456789abcdef";

// Data files a tier keeps open for reading: an eighth of the descriptors the process may
// open (sockets, the index and other tiers need the rest), at most 4096.
std::size_t OpenFileBudget() {
  constexpr std::size_t kMaxOpenFiles = 4096;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kMaxOpenFiles;
  }
  return std::min<std::size_t>(kMaxOpenFiles, limit.rlim_cur / 8);
}

}  // namespace

std::string RandomHexId() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof(bytes)) {
    // getrandom unavailable: fall back to a per-thread generator seeded by the OS.
    thread_local std::mt19937_64 rng{std::random_device{}()};
    for (auto& b : bytes) {
      b = static_cast<unsigned char>(rng());
    }
  }
  std::string id;
  id.reserve(32);
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 0xf]);
  }
  return id;
}

namespace {

Result<void> SyncDir(const std::string& path) {
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return ErrnoError(errno, "open directory", path);
  }
  if (::fsync(dir.get()) != 0) {
    return ErrnoError(errno, "fsync directory", path);
  }
  return Ok();
}

Result<void> MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoError(errno, "mkdir", path);
  }
  return Ok();
}

}  // namespace

Error ErrnoError(int err, std::string_view op, std::string_view path) {
  std::string msg = std::string(op) + " " + std::string(path) + ": " + std::strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return Error(ErrorCode::kNoSpace, std::move(msg));
    case ENOENT:
      return Error(ErrorCode::kNotFound, std::move(msg));
    case EMFILE:
    case ENFILE:
    case EAGAIN:
    case EINTR:
    case ENOMEM:
      return Error(ErrorCode::kUnavailable, std::move(msg), true);
    default:
      return Error(ErrorCode::kInternal, std::move(msg));
  }
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

LocalTempFile::LocalTempFile(const LocalTier& tier, std::string id, UniqueFd fd, bool named)
    : tier_(tier),
      id_(std::move(id)),
      path_(named ? tier.TempPath(id_) : tier.root() + "/data (unnamed " + id_ + ")"),
      named_(named),
      fd_(std::move(fd)) {}

LocalTempFile::~LocalTempFile() {
  fd_.Reset();  // an unnamed file's last reference: its bytes are freed with it
  if (named_ && !promoted_) {
    ::unlink(path_.c_str());
  }
}

Result<void> LocalTempFile::Append(std::string_view data) {
  if (promoted_ || trailer_written_ || !fd_.valid()) {
    return Error(ErrorCode::kInternal, "append to a closed file");
  }
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd_.get(), data.data(), data.size(), static_cast<off_t>(size_));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoError(errno, "write", path_);
    }
    size_ += static_cast<std::uint64_t>(n);
    crcs_.Update(data.substr(0, static_cast<std::size_t>(n)));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  StartWriteback();
  return Ok();
}

void LocalTempFile::StartWriteback() {
  // Bytes a large write leaves to the kernel would otherwise all go to the disk in the
  // promotion fsync, after the last byte arrived; started as they come, the disk writes
  // while the network receives. SYNC_FILE_RANGE_WRITE only queues the writes (it waits
  // only when the device's queue is full); durability still comes from the fsync, so a
  // failure here is left for it to report.
  constexpr std::uint64_t kWritebackStep = 8u << 20;
  if (!tier_.fsync() || size_ - writeback_started_ < kWritebackStep) {
    return;
  }
  ::sync_file_range(fd_.get(), static_cast<off_t>(writeback_started_),
                    static_cast<off_t>(size_ - writeback_started_), SYNC_FILE_RANGE_WRITE);
  writeback_started_ = size_;
}

boost::asio::awaitable<Result<void>> LocalTempFile::AppendAsync(std::string_view data) {
  if (promoted_ || trailer_written_ || !fd_.valid()) {
    co_return Error(ErrorCode::kInternal, "append to a closed file");
  }
  // pwrite on the calling thread, on the io_uring path too: a ring cannot finish a
  // buffered ext4 write inline and hands each one to a kernel worker thread, and those
  // hand-offs made PUT 256 MiB half as fast (250 against 470 MB/s, 4 connections, 2 cores,
  // Linux 6.18), with no gain for 4 KiB PUTs. A write into the page cache is a copy;
  // StartWriteback keeps the dirty bytes that could make it wait few.
  auto written = PwriteAll(fd_.get(), data, size_, path_);
  if (!written.ok()) {
    co_return written;
  }
  size_ += data.size();
  crcs_.Update(data);
  StartWriteback();
  co_return Ok();
}

LocalTier::LocalTier(std::string name, std::string root, bool fsync, TempFiles temps)
    : name_(std::move(name)),
      root_(std::move(root)),
      fsync_(fsync),
      named_temps_(temps == TempFiles::kNamed),
      open_files_(std::make_unique<OpenFiles>(OpenFileBudget())) {}

LocalTier::~LocalTier() = default;

Result<std::unique_ptr<LocalTier>> LocalTier::Open(std::string name, std::string root, bool fsync,
                                                   TempFiles temps) {
  if (root.empty()) {
    return Error(ErrorCode::kInvalidArgument, "tier " + name + " has no path");
  }
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return Error(ErrorCode::kInternal, "create " + root + ": " + ec.message());
  }
  // Unnamed files are linked into place through /proc/self/fd (PlaceFile).
  if (::access("/proc/self/fd", F_OK) != 0) {
    temps = TempFiles::kNamed;
  }
  std::unique_ptr<LocalTier> tier(new LocalTier(std::move(name), std::move(root), fsync, temps));
  const std::string tmp = tier->root_ + "/tmp";
  const std::string data = tier->root_ + "/data";
  STRATA_RETURN_IF_ERROR(MakeDir(tmp));
  STRATA_RETURN_IF_ERROR(MakeDir(data));
  // Orphans of interrupted writes.
  for (fs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
    if (remove_ec) {
      return Error(ErrorCode::kInternal,
                   "remove " + it->path().string() + ": " + remove_ec.message());
    }
  }
  if (ec) {
    return Error(ErrorCode::kInternal, "list " + tmp + ": " + ec.message());
  }
  if (fsync) {
    STRATA_RETURN_IF_ERROR(SyncDir(tier->root_));
    STRATA_RETURN_IF_ERROR(SyncDir(data));
  }
  return tier;
}

bool LocalTier::IsValidId(std::string_view id) {
  if (id.size() != 32) {
    return false;
  }
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

std::string LocalTier::DataPath(std::string_view id) const {
  std::string path = root_ + "/data/";
  path.append(id.substr(0, 2));
  path.push_back('/');
  path.append(id);
  return path;
}

std::string LocalTier::TempPath(std::string_view id) const {
  return root_ + "/tmp/" + std::string(id);
}

Result<std::unique_ptr<LocalTempFile>> LocalTier::CreateTemp() {
  if (!named_temps_) {
    const std::string data = root_ + "/data";
    UniqueFd fd(::open(data.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644));
    if (fd.valid()) {
      return std::unique_ptr<LocalTempFile>(
          new LocalTempFile(*this, RandomHexId(), std::move(fd), false));
    }
    // EISDIR: a kernel without O_TMPFILE; EOPNOTSUPP: a file system without it.
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      return ErrnoError(errno, "create an unnamed file in", data);
    }
    named_temps_ = true;
  }
  return CreateNamedTemp();
}

Result<std::unique_ptr<LocalTempFile>> LocalTier::CreateNamedTemp() {
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::string id = RandomHexId();
    const std::string path = TempPath(id);
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd.valid()) {
      if (errno == EEXIST) {
        continue;  // astronomically unlikely; draw again
      }
      return ErrnoError(errno, "create", path);
    }
    return std::unique_ptr<LocalTempFile>(
        new LocalTempFile(*this, std::move(id), std::move(fd), true));
  }
  return Error(ErrorCode::kInternal, "could not draw a fresh file id");
}

Result<void> LocalTier::Promote(LocalTempFile& file) {
  if (file.promoted_) {
    return Error(ErrorCode::kInternal, "file already promoted");
  }
  const std::string& from = file.path_;
  const std::string to = DataPath(file.id_);
  if (!file.trailer_written_) {
    STRATA_RETURN_IF_ERROR(PwriteAll(file.fd_.get(), file.crcs_.Trailer(), file.size_, from));
    file.trailer_written_ = true;
  }
  if (fsync_ && ::fsync(file.fd_.get()) != 0) {
    return ErrnoError(errno, "fsync", from);
  }
  if (PlaceFile(file, to) != 0) {
    if (errno != ENOENT) {
      return ErrnoError(errno, "place the file at", to);
    }
    // The fan-out directory data/<id[0:2]> is made on first use (and made durable).
    const std::string data = root_ + "/data";
    STRATA_RETURN_IF_ERROR(MakeDir(data + "/" + file.id_.substr(0, 2)));
    if (fsync_) {
      STRATA_RETURN_IF_ERROR(SyncDir(data));
    }
    if (PlaceFile(file, to) != 0) {
      return ErrnoError(errno, "place the file at", to);
    }
  }
  file.promoted_ = true;
  file.fd_.Reset();
  if (fsync_) {
    auto synced = SyncDir(root_ + "/data/" + file.id_.substr(0, 2));
    if (!synced.ok()) {
      // Not durable: take it back out so the caller's failure leaves nothing behind.
      ::unlink(to.c_str());
      return synced;
    }
  }
  return Ok();
}

int LocalTier::PlaceFile(LocalTempFile& file, const std::string& to) const {
  if (file.named_) {
    return ::rename(file.path_.c_str(), to.c_str());
  }
  // Through /proc: linking a descriptor by AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH.
  const std::string self = "/proc/self/fd/" + std::to_string(file.fd_.get());
  return ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, to.c_str(), AT_SYMLINK_FOLLOW);
}

Result<UniqueFd> LocalTier::OpenForRead(std::string_view id) const {
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  return OpenReadOnly(DataPath(id));
}

Result<UniqueFd> LocalTier::OpenReadOnly(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoError(errno, "open", path);
  }
  return fd;
}

Result<std::shared_ptr<const OpenDataFile>> LocalTier::OpenData(std::string_view id) const {
  if (auto cached = open_files_->Find(id)) {
    return cached;
  }
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  auto file = std::make_shared<OpenDataFile>();
  file->path = DataPath(id);
  auto fd = OpenReadOnly(file->path);
  if (!fd.ok()) {
    return std::move(fd).error();
  }
  file->fd = std::move(fd).value();
  struct stat st {};
  if (::fstat(file->fd.get(), &st) != 0) {
    return ErrnoError(errno, "stat", file->path);
  }
  file->size = static_cast<std::uint64_t>(st.st_size);
  file->tail.resize(std::min<std::uint64_t>(file->size, kFooterSize));
  STRATA_RETURN_IF_ERROR(PreadExact(file->fd.get(), std::span<char>(file->tail),
                                    file->size - file->tail.size(), file->path));
  open_files_->Insert(id, file);
  return std::shared_ptr<const OpenDataFile>(std::move(file));
}

Result<std::string> LocalTier::Link(std::string_view id) const {
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  return LinkPath(DataPath(id));
}

Result<std::string> LocalTier::Adopt(const LocalTier& from, std::string_view id) const {
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  const std::string source = from.DataPath(id);
  struct stat source_stat {};
  struct stat root_stat {};
  if (::stat(source.c_str(), &source_stat) != 0) {
    return ErrnoError(errno, "stat", source);
  }
  if (::stat(root_.c_str(), &root_stat) != 0) {
    return ErrnoError(errno, "stat", root_);
  }
  // A hard link when both tiers share a file system; otherwise the bytes are copied.
  if (source_stat.st_dev == root_stat.st_dev) {
    return LinkPath(source);
  }
  return CopyPath(source);
}

Result<std::string> LocalTier::CopyPath(const std::string& from) const {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) {
    return ErrnoError(errno, "open", from);
  }
  const std::string new_id = RandomHexId();
  const std::string temp = TempPath(new_id);
  UniqueFd out(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!out.valid()) {
    return ErrnoError(errno, "create", temp);
  }
  const auto fail = [&](int err, std::string_view op, const std::string& path) {
    ::unlink(temp.c_str());
    return ErrnoError(err, op, path);
  };
  // The whole file, trailer included, through one bounded buffer.
  std::vector<char> buffer(1 << 20);
  std::uint64_t offset = 0;
  while (true) {
    const ssize_t n = ::pread(in.get(), buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(errno, "read", from);
    }
    if (n == 0) {
      break;
    }
    auto written = PwriteAll(
        out.get(), std::string_view(buffer.data(), static_cast<std::size_t>(n)), offset, temp);
    if (!written.ok()) {
      ::unlink(temp.c_str());
      return std::move(written).error();
    }
    offset += static_cast<std::uint64_t>(n);
  }
  if (fsync_ && ::fsync(out.get()) != 0) {
    return fail(errno, "fsync", temp);
  }
  out.Reset();
  const std::string to = DataPath(new_id);
  const std::string data = root_ + "/data";
  auto made = MakeDir(data + "/" + new_id.substr(0, 2));
  if (made.ok() && fsync_) {
    made = SyncDir(data);  // the fan-out directory may be new
  }
  if (!made.ok()) {
    ::unlink(temp.c_str());
    return std::move(made).error();
  }
  if (::rename(temp.c_str(), to.c_str()) != 0) {
    return fail(errno, "rename to", to);
  }
  if (fsync_) {
    auto synced = SyncDir(data + "/" + new_id.substr(0, 2));
    if (!synced.ok()) {
      ::unlink(to.c_str());
      return std::move(synced).error();
    }
  }
  return new_id;
}

Result<std::string> LocalTier::LinkPath(const std::string& from) const {
  const std::string new_id = RandomHexId();
  const std::string to = DataPath(new_id);
  if (::link(from.c_str(), to.c_str()) != 0) {
    if (errno != ENOENT) {
      return ErrnoError(errno, "link to", to);
    }
    if (::access(from.c_str(), F_OK) != 0) {
      return ErrnoError(ENOENT, "link from", from);  // the source is gone
    }
    const std::string data = root_ + "/data";
    STRATA_RETURN_IF_ERROR(MakeDir(data + "/" + new_id.substr(0, 2)));
    if (fsync_) {
      STRATA_RETURN_IF_ERROR(SyncDir(data));
    }
    if (::link(from.c_str(), to.c_str()) != 0) {
      return ErrnoError(errno, "link to", to);
    }
  }
  if (fsync_) {
    auto synced = SyncDir(root_ + "/data/" + new_id.substr(0, 2));
    if (!synced.ok()) {
      ::unlink(to.c_str());
      return std::move(synced).error();
    }
  }
  return new_id;
}

Result<void> LocalTier::ForEachDataFile(
    const std::function<void(std::string_view id, std::chrono::system_clock::time_point changed)>&
        fn) const {
  const std::string data = root_ + "/data";
  std::error_code ec;
  for (fs::directory_iterator dir(data, ec), end; !ec && dir != end; dir.increment(ec)) {
    const std::string fan_out = dir->path().filename().string();
    std::error_code type_ec;
    if (fan_out.size() != 2 || !dir->is_directory(type_ec)) {
      continue;
    }
    std::error_code file_ec;
    for (fs::directory_iterator it(dir->path(), file_ec); !file_ec && it != end;
         it.increment(file_ec)) {
      const std::string id = it->path().filename().string();
      if (!IsValidId(id) || id.compare(0, 2, fan_out) != 0) {
        continue;
      }
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0) {
        if (errno == ENOENT) {
          continue;
        }
        return ErrnoError(errno, "stat", it->path().string());
      }
      if (!S_ISREG(st.st_mode)) {
        continue;
      }
      const auto changed = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::seconds(st.st_ctim.tv_sec) +
              std::chrono::nanoseconds(st.st_ctim.tv_nsec)));
      fn(id, changed);
    }
    if (file_ec) {
      return Error(ErrorCode::kInternal, "list " + dir->path().string() + ": " + file_ec.message());
    }
  }
  if (ec) {
    return Error(ErrorCode::kInternal, "list " + data + ": " + ec.message());
  }
  return Ok();
}

Result<void> LocalTier::Remove(std::string_view id) const {
  if (!IsValidId(id)) {
    return Error(ErrorCode::kCorruption, "malformed data file id");
  }
  const std::string path = DataPath(id);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, "unlink", path);
  }
  open_files_->Erase(id);  // after the unlink: see OpenFiles::Insert
  return Ok();
}

}  // namespace strata::storage
