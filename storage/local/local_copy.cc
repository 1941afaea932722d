// LocalObjectStore: CopyObject by sharing bytes. Each extent of the source gets a second
// name (a hard link) that the new version owns, so a copy costs one link per extent and
// one index write whatever the size, and deleting either object frees only its names.
#include <utility>

#include "common/guard.h"
#include "storage/local/local_object_store.h"

namespace strata::storage {

Result<metadata::ObjectRecord> LocalObjectStore::CopyObject(const metadata::ObjectRecord& source,
                                                            metadata::ObjectRecord record) {
  return GuardExceptions("copy object", [&]() -> Result<metadata::ObjectRecord> {
    const metadata::Placement* placement = LocalPlacement(source);
    if (placement == nullptr) {
      return Error(ErrorCode::kUnavailable, "object has no local copy");
    }
    // Linked on the source's tier; PlaceByClass then moves it if the new class says so.
    const LocalTier& tier = *LocalTierNamed(placement->tier);
    metadata::Placement linked{tier.name(), {}};
    auto unlink_all = [&] {
      for (const auto& extent : linked.extents) {
        RemoveQuietly(tier, extent.location);
      }
    };
    for (const auto& extent : placement->extents) {
      auto id = tier.Link(extent.location);
      if (!id.ok()) {
        unlink_all();
        if (id.error().code == ErrorCode::kNotFound) {
          // The source was overwritten or deleted since its record was read.
          return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
        }
        return std::move(id).error();
      }
      linked.extents.push_back({*id, extent.size});
    }
    record.size = source.size;
    record.etag = source.etag;
    record.checksums = source.checksums;
    record.checksum_type = source.checksum_type;
    record.parts = source.parts;
    record.upload_id = UploadId();  // a copy is no upload's completion
    record.delete_marker = false;
    record.last_modified_ms = NowMs();
    record.placements = {std::move(linked)};
    Result<void> committed = Ok();
    auto version = NextVersionId(record.bucket);
    if (version.ok()) {
      record.version_id = *version;
      committed = CommitVersion(record, metadata::WriteCondition{}, "");
    } else {
      committed = std::move(version).error();
    }
    if (!committed.ok()) {
      for (const auto& extent : record.placements[0].extents) {
        RemoveQuietly(tier, extent.location);
      }
      return std::move(committed).error();
    }
    PlaceByClass(record);
    return record;
  });
}

}  // namespace strata::storage
