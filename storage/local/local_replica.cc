// LocalObjectStore: a cluster replica's writes (storage/replication.h). The primary sends a
// key's whole stack of versions; the bytes of the versions this gateway lacks come along.
#include <spdlog/spdlog.h>

#include <functional>
#include <set>
#include <utility>

#include "common/guard.h"
#include "storage/crc_combine.h"
#include "storage/integrity.h"
#include "storage/local/local_object_store.h"
#include "storage/multipart.h"

namespace strata::storage {
namespace {

bool SameVersion(const metadata::ObjectRecord& a, const metadata::ObjectRecord& b) {
  return a.version_id == b.version_id && a.etag == b.etag &&
         a.last_modified_ms == b.last_modified_ms && a.delete_marker == b.delete_marker;
}

std::string Crc64Of(const metadata::PartRecord& part) {
  for (const auto& [name, value] : part.checksums) {
    if (name == ChecksumName(ChecksumAlgorithm::kCrc64Nvme)) {
      return value;
    }
  }
  return "";
}

}  // namespace

std::optional<metadata::Placement> LocalObjectStore::PlacementFromUpload(
    const metadata::ObjectRecord& record) {
  if (record.upload_id.empty() || record.parts.empty()) {
    return std::nullopt;
  }
  std::map<std::uint32_t, metadata::PartRecord> held;
  for (std::uint32_t after = 0;;) {
    auto page = index_.ListParts(record.upload_id, after, kMaxPartNumber);
    if (!page.ok()) {
      return std::nullopt;  // the upload is not here (kNotFound) or unreadable: ask
    }
    for (auto& part : page->parts) {
      after = part.number;
      held.emplace(part.number, std::move(part));
    }
    if (!page->truncated || page->parts.empty()) {
      break;
    }
  }
  metadata::Placement from{tier_->name(), {}};
  std::vector<std::string> etags;
  std::string crc;
  for (const auto& part : record.parts) {
    auto it = held.find(part.number);
    if (it == held.end() || it->second.size != part.size || it->second.tier != tier_->name()) {
      return std::nullopt;
    }
    const std::string part_crc = Crc64Of(it->second);
    auto combined = crc.empty() ? std::optional<std::string>(part_crc)
                                : CombineChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, crc,
                                                        part_crc, part.size);
    if (part_crc.empty() || !combined) {
      return std::nullopt;
    }
    crc = std::move(*combined);
    etags.push_back(it->second.etag);
    from.extents.push_back(metadata::Extent{it->second.location, part.size});
  }
  if (MultipartEtag(etags) != record.etag || crc.empty() || crc != RecordedCrc64(record)) {
    return std::nullopt;
  }
  auto adopted = AdoptPlacement(from, *tier_);
  if (!adopted.ok()) {
    spdlog::warn("replica of {}/{}: the upload's parts could not be linked: {}",
                 record.bucket.str(), record.key.str(), adopted.error().message);
    return std::nullopt;
  }
  return std::move(adopted).value();
}

bool LocalObjectStore::HoldsBytesLocally(const metadata::ObjectRecord& record) const {
  return !record.delete_marker && LocalPlacement(record) != nullptr;
}

Result<std::vector<std::size_t>> LocalObjectStore::ApplyReplica(
    const BucketName& bucket, const ObjectKey& key, std::vector<ReplicaVersion> newest_first,
    const std::optional<metadata::WritebackItem>& writeback) {
  return GuardExceptions("apply replica", [&]() -> Result<std::vector<std::size_t>> {
    std::lock_guard stripe(
        replica_stripes_[std::hash<std::string_view>{}(key.view()) % replica_stripes_.size()]);
    auto held = index_.KeyVersions(bucket, key, std::numeric_limits<std::size_t>::max());
    if (!held.ok()) {
      return std::move(held).error();
    }
    // What each version will be here: the primary's record, with the placements on local
    // tiers replaced by this gateway's own.
    std::vector<metadata::ObjectRecord> records;
    std::vector<std::size_t> missing;
    std::vector<std::string> fresh_files;  // promoted here, removed if the write fails
    std::set<std::string> kept;            // locations of copies reused
    auto drop_fresh = [&] {
      for (const auto& id : fresh_files) {
        RemoveQuietly(id);
      }
    };
    for (std::size_t i = 0; i < newest_first.size(); ++i) {
      ReplicaVersion& version = newest_first[i];
      metadata::ObjectRecord record = std::move(version.record);
      record.bucket = bucket;
      record.key = key;
      const bool needs_bytes = HoldsBytesLocally(record);
      std::erase_if(record.placements, [this](const metadata::Placement& p) {
        return LocalTierNamed(p.tier) != nullptr;
      });
      if (!needs_bytes) {
        records.push_back(std::move(record));
        continue;
      }
      if (version.bytes != nullptr) {
        auto* pending = dynamic_cast<LocalPendingWrite*>(version.bytes.get());
        if (pending == nullptr || pending->failed()) {
          drop_fresh();
          return Error(ErrorCode::kInternal, "a replica's bytes in a foreign or failed write");
        }
        const std::string crc = RecordedCrc64(record);
        if (pending->size() != record.size ||
            (!crc.empty() && pending->Checksum(ChecksumAlgorithm::kCrc64Nvme) != crc)) {
          drop_fresh();
          return Error(ErrorCode::kCorruption, "the replica's bytes of " + key.str() + " version " +
                                                   record.version_id.str() +
                                                   " do not match its size and CRC64NVME");
        }
        LocalTempFile& file = pending->file();
        if (auto promoted = tier_->Promote(file); !promoted.ok()) {
          drop_fresh();
          return std::move(promoted).error();
        }
        fresh_files.push_back(file.id());
        record.placements.insert(record.placements.begin(),
                                 metadata::Placement{tier_->name(), {{file.id(), record.size}}});
        records.push_back(std::move(record));
        continue;
      }
      const metadata::Placement* own = nullptr;
      for (const auto& mine : *held) {
        if (SameVersion(mine, record)) {
          own = LocalPlacement(mine);
          break;
        }
      }
      if (own == nullptr) {
        if (auto built = PlacementFromUpload(record)) {
          for (const auto& extent : built->extents) {
            fresh_files.push_back(extent.location);
          }
          record.placements.insert(record.placements.begin(), std::move(*built));
          records.push_back(std::move(record));
          continue;
        }
        missing.push_back(i);
        continue;
      }
      for (const auto& extent : own->extents) {
        kept.insert(extent.location);
      }
      record.placements.insert(record.placements.begin(), *own);
      records.push_back(std::move(record));
    }
    if (!missing.empty()) {
      drop_fresh();
      return missing;
    }
    auto replaced = index_.ReplaceKeyVersions(bucket, key, records, writeback);
    if (!replaced.ok()) {
      drop_fresh();
      return std::move(replaced).error();
    }
    for (const auto& old : *replaced) {
      for (const auto& placement : old.placements) {
        const LocalTier* tier = LocalTierNamed(placement.tier);
        for (const auto& extent : placement.extents) {
          if (tier != nullptr && !kept.contains(extent.location)) {
            RemoveQuietly(*tier, extent.location);
          }
        }
      }
    }
    return missing;
  });
}

}  // namespace strata::storage
