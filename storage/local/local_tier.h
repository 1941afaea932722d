// LocalTier: a directory on a local disk holding object data files (private to storage/).
//
// Layout under the root: data/<id[0:2]>/<id> for committed files; ids are 128-bit random
// numbers in 32 lower-case hex digits. A file being written has no name: it is made with
// O_TMPFILE in data/ and linked into place at promotion (append the chunk trailer,
// storage/local/chunk_trailer.h, whose per-chunk CRC64NVMEs were computed while
// appending; fsync the file; link it into data/; fsync that directory; the fsyncs are
// skipped when `fsync` is off). Unnamed, an unfinished file leaves nothing behind when the
// process dies, and a write costs one directory update instead of a create and a rename.
// Without O_TMPFILE (the file system), /proc, or with TempFiles::kNamed, files are written
// as tmp/<id> and renamed into place; anything left in tmp/ at open is an interrupted
// write and is deleted. Thread-safe: distinct files may be used from distinct threads at
// once; one LocalTempFile is used by one thread at a time.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/local/chunk_trailer.h"

namespace strata::storage {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

class LocalTier;
class OpenFiles;
struct OpenDataFile;

// How a tier makes the files being written (see the top of this file).
enum class TempFiles { kUnnamed, kNamed };

// A data file being written in tmp/. Unless promoted, destruction unlinks it. Hashes
// what it appends (CRC64NVME per chunk and of the whole).
class LocalTempFile {
 public:
  ~LocalTempFile();
  LocalTempFile(const LocalTempFile&) = delete;
  LocalTempFile& operator=(const LocalTempFile&) = delete;

  // Appends at the end (pwrite). kNoSpace when the disk or quota is full.
  Result<void> Append(std::string_view data);
  // Append from a coroutine (a pwrite on its thread; see the .cc for why not io_uring).
  // Bytes of a failed append may be on disk past size(); the caller abandons the file
  // (LocalPendingWrite does).
  boost::asio::awaitable<Result<void>> AppendAsync(std::string_view data);
  // Object bytes appended so far (the trailer, written at promotion, is not counted).
  std::uint64_t size() const { return size_; }
  // CRC64NVME of the bytes appended so far.
  std::uint64_t crc64() const { return crcs_.Crc(); }
  const std::string& id() const { return id_; }
  bool promoted() const { return promoted_; }
  // Whether the file has a name (tmp/<id>) before promotion.
  bool named() const { return named_; }

 private:
  friend class LocalTier;
  LocalTempFile(const LocalTier& tier, std::string id, UniqueFd fd, bool named);
  // With fsync on, starts the disk writing each kWritebackStep appended (sync_file_range),
  // so a large file's promotion fsync waits for its tail, not for all of it.
  void StartWriteback();

  const LocalTier& tier_;
  std::string id_;
  std::string path_;  // tmp/<id>, or (unnamed) data/ and the id, for error messages
  bool named_;
  UniqueFd fd_;
  std::uint64_t size_ = 0;
  std::uint64_t writeback_started_ = 0;  // bytes handed to the disk by StartWriteback
  ChunkCrcBuilder crcs_;
  bool trailer_written_ = false;
  bool promoted_ = false;
};

class LocalTier {
 public:
  // Creates root, tmp/ and data/ as needed (data/<xx>/ fan-out directories are made on
  // first use) and empties tmp/. Errors name the path. `temps`: kNamed makes files in tmp/
  // even where O_TMPFILE works (tests of that path).
  static Result<std::unique_ptr<LocalTier>> Open(std::string name, std::string root, bool fsync,
                                                 TempFiles temps = TempFiles::kUnnamed);
  ~LocalTier();

  const std::string& name() const { return name_; }
  const std::string& root() const { return root_; }
  bool fsync() const { return fsync_; }

  // A new, empty file to write (O_CLOEXEC, mode 0644): unnamed, or tmp/<id>.
  Result<std::unique_ptr<LocalTempFile>> CreateTemp();
  // Makes `file` a data file under its id: append the chunk trailer, fsync, link (or
  // rename) into data/, fsync the directory. On failure the file stays unnamed or in
  // tmp/ (and is removed when `file` is destroyed).
  Result<void> Promote(LocalTempFile& file);
  // Opens a data file for reading (caller owns the fd). kNotFound when it is gone,
  // kCorruption when `id` is not a well-formed file id.
  Result<UniqueFd> OpenForRead(std::string_view id) const;
  // The same, shared through the tier's cache of open data files (storage/local/
  // open_files.h) with the file's size and last trailer-sized bytes.
  Result<std::shared_ptr<const OpenDataFile>> OpenData(std::string_view id) const;
  // Reads the chunk trailer of data file `id` (its CRCs and footer) from the disk, never
  // from the open-file cache, and checks it: the footer against the file's size and
  // `extent_size`, the trailer against its own CRC. The read path trusts the footer
  // the cache read at open, so a flip there would go unseen while the file stays cached;
  // the scrubber calls this (local_tier_verify.cc). A damaged trailer is kCorruption,
  // logged and counted, and the file leaves the cache, so the next open reads the disk
  // and sees the damage too. kNotFound when the file is gone. A file without trailer
  // (size == extent_size, from before the trailer) has nothing to check.
  Result<void> VerifyTrailer(std::string_view id, std::uint64_t extent_size) const;
  // A new name (returned id) for the bytes of data file `id`: a hard link, made durable,
  // so a copy costs no data I/O and either name can later be removed alone. kNotFound
  // when `id` is gone.
  Result<std::string> Link(std::string_view id) const;
  // The same for data file `id` of another tier: a hard link when both are on one file
  // system, else a durable copy of the file (trailer included). kNotFound when it is gone.
  Result<std::string> Adopt(const LocalTier& from, std::string_view id) const;
  // Unlinks a data file, and forgets it in the cache of open files; succeeds when it is
  // already gone.
  Result<void> Remove(std::string_view id) const;
  // Calls fn(id, changed) for every data file in data/<xx>/, `changed` being its inode's
  // last status change (ctime: moved by the write, the rename into data/ and every link,
  // so a file just promoted or linked always looks young). Names that are not file ids
  // are skipped. A file removed meanwhile is skipped; a directory that cannot be listed
  // is an error (the caller must not take the listing for complete).
  Result<void> ForEachDataFile(
      const std::function<void(std::string_view id, std::chrono::system_clock::time_point changed)>&
          fn) const;

  std::string DataPath(std::string_view id) const;
  std::string TempPath(std::string_view id) const;
  static bool IsValidId(std::string_view id);

 private:
  LocalTier(std::string name, std::string root, bool fsync, TempFiles temps);
  static Result<UniqueFd> OpenReadOnly(const std::string& path);
  // A named file in tmp/ (no O_TMPFILE, or kNamed).
  Result<std::unique_ptr<LocalTempFile>> CreateNamedTemp();
  // Puts the file at `to`: links the unnamed file, or renames tmp/<id>.
  int PlaceFile(LocalTempFile& file, const std::string& to) const;
  // A new data file id naming the file at `from`: a hard link, or a copy.
  Result<std::string> LinkPath(const std::string& from) const;
  Result<std::string> CopyPath(const std::string& from) const;

  std::string name_;
  std::string root_;
  bool fsync_;
  // Set once O_TMPFILE is found unsupported here: every later file is named.
  std::atomic<bool> named_temps_;
  std::unique_ptr<OpenFiles> open_files_;
};

// 128 random bits as 32 lower-case hex digits (getrandom, else a seeded generator).
std::string RandomHexId();

// An Error for a failed system call: kNoSpace, kNotFound, kUnavailable (retryable) or
// kInternal by errno; the message names the operation and path.
Error ErrnoError(int err, std::string_view op, std::string_view path);

}  // namespace strata::storage
