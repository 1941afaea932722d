// ReplicationNode: the uploads in progress when the owners of their keys change. The repair
// scan moves the keys whose owners changed (replication_repair.cc) and a drain the keys it
// holds (drain.cc); these do the same for the uploads this gateway is the primary of, so a
// key's new owner (after a death, a join or a drain) holds its upload and every part: the
// upload goes on after the old owners are gone.
#include <algorithm>

#include "common/co_try.h"
#include "common/offload.h"
#include "storage/cluster/replication_node.h"

namespace strata::storage::cluster {
namespace {

namespace asio = boost::asio;

constexpr std::size_t kUploadsPerPage = 100;
constexpr std::size_t kPartsPerPage = 100;

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

asio::awaitable<Result<bool>> ReplicationNode::RepairUploads(const BucketName& bucket,
                                                             const Ownership& before,
                                                             const Ownership& now,
                                                             std::int64_t epoch,
                                                             std::uint64_t& failed) {
  co_return co_await MoveUploads(
      bucket, epoch,
      [this, &bucket, &before, &now](const std::string& key) {
        const auto owners = now.OwnerNames(bucket.view(), key);
        return !owners.empty() && owners.front() == cluster_.node() &&
               Sorted(before.OwnerNames(bucket.view(), key)) != Sorted(owners);
      },
      failed);
}

asio::awaitable<Result<bool>> ReplicationNode::MoveUploads(
    const BucketName& bucket, std::int64_t epoch,
    const std::function<bool(const std::string&)>& moves, std::uint64_t& failed) {
  std::string key_marker;
  std::string id_marker;
  while (true) {
    auto page = co_await Offload(blocking_, [this, &bucket, &key_marker, &id_marker] {
      return index_.ListUploads(bucket, "", key_marker, id_marker, kUploadsPerPage);
    });
    if (!page.ok()) {
      co_return page.error().code == ErrorCode::kNoSuchBucket ? Result<bool>(true)
                                                              : std::move(page).error();
    }
    for (const auto& upload : page->uploads) {
      if (stopped_ || cluster_.View()->epoch != epoch) {
        co_return false;  // scanned again
      }
      if (!moves(upload.object.key.str())) {
        continue;
      }
      auto moved = co_await MoveUpload(upload);
      if (!moved.ok()) {
        ++failed;
      }
    }
    if (!page->truncated || page->uploads.empty()) {
      co_return true;
    }
    key_marker = page->uploads.back().object.key.str();
    id_marker = page->uploads.back().upload_id.str();
  }
}

asio::awaitable<Result<void>> ReplicationNode::MoveUpload(const metadata::UploadRecord& upload) {
  UploadChange created{upload};
  STRATA_CO_RETURN_IF_ERROR(co_await SyncUploadOnCluster(std::move(created)));
  std::uint32_t after = 0;
  while (true) {
    auto page = co_await Offload(blocking_, [this, &upload, after] {
      return index_.ListParts(upload.upload_id, after, kPartsPerPage);
    });
    if (!page.ok()) {
      co_return std::move(page).error();
    }
    for (auto& part : page->parts) {
      after = part.number;
      const std::uint64_t size = part.size;
      UploadChange change{upload, std::move(part)};
      STRATA_CO_RETURN_IF_ERROR(co_await SyncUploadOnCluster(std::move(change)));
      counters_.bytes_moved.fetch_add(size, std::memory_order_relaxed);
      co_await Pace(size);
    }
    if (!page->truncated || page->parts.empty()) {
      co_return Ok();
    }
  }
}

}  // namespace strata::storage::cluster
