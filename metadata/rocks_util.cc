#include "metadata/rocks_util.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "metadata/read_inline.h"

namespace strata::metadata {

Error FromStatus(const rocksdb::Status& s, std::string_view what) {
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) {
    return Error(ErrorCode::kCorruption, std::move(msg));
  }
  if (s.IsNoSpace()) {
    return Error(ErrorCode::kNoSpace, std::move(msg));
  }
  if (s.IsIncomplete() && MemoryOnlyReads::active()) {
    MemoryOnlyReads::NoteDiskNeeded();
  }
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut() || s.IsIncomplete()) {
    return Error(ErrorCode::kUnavailable, std::move(msg), true);
  }
  if (s.IsNotFound()) {
    return Error(ErrorCode::kNotFound, std::move(msg));
  }
  return Error(ErrorCode::kInternal, std::move(msg));
}

namespace {
bool HasNul(std::string_view s) { return s.find('\0') != std::string_view::npos; }
}  // namespace

Result<void> CheckBucketName(const BucketName& b) {
  if (b.empty() || HasNul(b.view())) {
    return Error(ErrorCode::kInvalidArgument, "invalid bucket name");
  }
  return Ok();
}

Result<void> CheckObjectKey(const ObjectKey& k) {
  if (k.empty() || HasNul(k.view())) {
    return Error(ErrorCode::kInvalidArgument, "invalid object key");
  }
  return Ok();
}

std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) {
    prefix.pop_back();
  }
  if (!prefix.empty()) {
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  }
  return prefix;
}

bool StartsWith(const rocksdb::Slice& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

PrefixScan::PrefixScan(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const std::string& prefix,
                       const std::string& seek)
    : upper_(PrefixSuccessor(prefix)), upper_slice_(upper_) {
  rocksdb::ReadOptions ro = ThreadReadOptions();
  ro.iterate_upper_bound = &upper_slice_;
  ro.prefix_same_as_start = true;
  it_.reset(db->NewIterator(ro, cf));
  it_->Seek(seek);
}

rocksdb::ReadOptions ThreadReadOptions() {
  rocksdb::ReadOptions options;
  if (MemoryOnlyReads::active()) {
    options.read_tier = rocksdb::kBlockCacheTier;
  }
  return options;
}

bool HasCopyOn(const ObjectRecord& object, std::string_view tier) {
  return std::any_of(object.placements.begin(), object.placements.end(),
                     [&](const Placement& p) { return p.tier == tier; });
}

}  // namespace strata::metadata
