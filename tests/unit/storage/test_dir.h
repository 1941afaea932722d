// A fresh temporary directory per test, removed afterwards.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace strata::storage::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("strata-storage-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()) +
             std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Regular files anywhere under `dir`.
inline std::vector<std::filesystem::path> FilesUnder(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) {
      out.push_back(it->path());
    }
  }
  return out;
}

// Where this process's descriptors point, as /proc/self/fd shows them: "<path>", or
// "<path> (deleted)" once the file has no name there.
inline std::vector<std::string> OpenFileTargets() {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    std::string target = std::filesystem::read_symlink(it->path(), link_ec).string();
    if (!link_ec) {
      out.push_back(std::move(target));
    }
  }
  return out;
}

// This process's descriptors of files made with O_TMPFILE in `dir`/data and not linked
// anywhere yet: files being written, which a listing of `dir` does not show. (The kernel
// names such a file "<dir>/data/#<inode> (deleted)"; a data file unlinked while a reader
// holds it keeps its own name and is not counted.)
inline std::size_t UnnamedFilesOpenUnder(const std::filesystem::path& dir) {
  std::error_code canonical_ec;  // on failure the plain path, which then matches nothing
  const std::string unnamed =
      std::filesystem::weakly_canonical(dir, canonical_ec).string() + "/data/#";
  std::size_t count = 0;
  for (const std::string& target : OpenFileTargets()) {
    if (target.starts_with(unnamed) && target.ends_with(" (deleted)")) {
      ++count;
    }
  }
  return count;
}

// This process's descriptors of the file that was at `path` before it was unlinked.
inline std::size_t UnlinkedFilesOpenAt(const std::filesystem::path& path) {
  std::error_code canonical_ec;
  const std::string deleted =
      std::filesystem::weakly_canonical(path, canonical_ec).string() + " (deleted)";
  std::size_t count = 0;
  for (const std::string& target : OpenFileTargets()) {
    count += target == deleted ? 1 : 0;
  }
  return count;
}

}  // namespace strata::storage::testing
