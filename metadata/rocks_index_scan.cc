// RocksIndex: full scans for background maintenance (the orphan sweep of storage/).
#include <rocksdb/db.h>

#include <memory>
#include <utility>

#include "common/guard.h"
#include "metadata/codec.h"
#include "metadata/rocks_index.h"
#include "metadata/rocks_util.h"

namespace strata::metadata {

Result<void> RocksIndex::ForEachLocation(
    const std::function<void(std::string_view tier, std::string_view location)>& fn) {
  return GuardExceptions("scan locations", [&]() -> Result<void> {
    // One snapshot for both families: CompleteUpload moves part rows into an object row
    // in one batch, and two separate reads could miss them on both sides.
    const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
    struct Release {
      rocksdb::DB* db;
      const rocksdb::Snapshot* snapshot;
      ~Release() { db->ReleaseSnapshot(snapshot); }
    } release{db_, snapshot};
    rocksdb::ReadOptions options;
    options.snapshot = snapshot;
    options.total_order_seek = true;  // across every prefix of the prefixed families
    options.fill_cache = false;       // a full scan would evict the request path's blocks

    std::unique_ptr<rocksdb::Iterator> objects(db_->NewIterator(options, objects_));
    for (objects->SeekToFirst(); objects->Valid(); objects->Next()) {
      auto record = DecodeObject(View(objects->value()));
      if (!record.ok()) {
        return std::move(record).error();
      }
      for (const auto& placement : record->placements) {
        for (const auto& extent : placement.extents) {
          fn(placement.tier, extent.location);
        }
      }
    }
    if (!objects->status().ok()) {
      return FromStatus(objects->status(), "scan objects");
    }

    std::unique_ptr<rocksdb::Iterator> parts(db_->NewIterator(options, parts_));
    for (parts->SeekToFirst(); parts->Valid(); parts->Next()) {
      auto part = DecodePart(View(parts->value()));
      if (!part.ok()) {
        return std::move(part).error();
      }
      fn(part->tier, part->location);
    }
    if (!parts->status().ok()) {
      return FromStatus(parts->status(), "scan parts");
    }
    return Ok();
  });
}

}  // namespace strata::metadata
