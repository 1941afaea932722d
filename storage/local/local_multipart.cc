// LocalObjectStore: multipart uploads. Each part is a data file of its own; completion
// makes the parts the extents of the object, so no byte is copied again.
#include <utility>

#include "common/guard.h"
#include "storage/local/local_object_store.h"

namespace strata::storage {
namespace {

constexpr std::size_t kCopyBlock = 256 * 1024;

bool HasChecksum(const metadata::ObjectRecord& record, const std::string& algorithm) {
  for (const auto& [name, value] : record.checksums) {
    if (name == algorithm) {
      return true;
    }
  }
  return false;
}

}  // namespace

Error LocalObjectStore::NoSuchUpload() {
  return Error(ErrorCode::kNoSuchUpload,
               "The specified upload does not exist. The upload ID may be invalid, or the upload "
               "may have been aborted or completed.");
}

Result<metadata::UploadRecord> LocalObjectStore::CreateUpload(metadata::UploadRecord upload) {
  return GuardExceptions("create upload", [&]() -> Result<metadata::UploadRecord> {
    upload.initiated_ms = NowMs();
    upload.upload_id = UploadId(TimeOrderedId(upload.initiated_ms));
    auto created = index_.CreateUpload(upload);
    if (!created.ok()) {
      if (created.error().code == ErrorCode::kNoSuchBucket) {
        return NoSuchBucket(upload.object.bucket);
      }
      return std::move(created).error();
    }
    return upload;
  });
}

Result<metadata::UploadRecord> LocalObjectStore::GetUpload(const BucketName& bucket,
                                                           const ObjectKey& key,
                                                           const UploadId& upload_id) {
  auto upload = index_.GetUpload(bucket, key, upload_id);
  if (!upload.ok() && upload.error().code == ErrorCode::kNotFound) {
    return NoSuchUpload();
  }
  return upload;
}

Result<metadata::PartRecord> LocalObjectStore::StorePart(metadata::PartRecord part,
                                                         const metadata::UploadRecord& upload) {
  auto replaced = index_.PutPart(upload.object.bucket, upload.object.key, upload.upload_id, part);
  if (!replaced.ok()) {
    RemoveQuietly(part.location);
    if (replaced.error().code == ErrorCode::kNotFound) {
      return NoSuchUpload();  // completed or aborted while the part was on its way
    }
    return std::move(replaced).error();
  }
  if (replaced->has_value() && (*replaced)->location != part.location) {
    RemoveParts({**replaced});
  }
  return part;
}

Result<metadata::PartRecord> LocalObjectStore::CommitPart(std::unique_ptr<PendingWrite> write,
                                                          const metadata::UploadRecord& upload,
                                                          std::uint32_t number) {
  return GuardExceptions("commit part", [&]() -> Result<metadata::PartRecord> {
    auto* pending = dynamic_cast<LocalPendingWrite*>(write.get());
    if (pending == nullptr || pending->failed()) {
      return Error(ErrorCode::kInternal, "CommitPart of a foreign or failed write");
    }
    metadata::PartRecord part;
    part.number = number;
    part.size = pending->size();
    part.etag = pending->Md5Hex();
    part.last_modified_ms = NowMs();
    part.checksums = pending->AllChecksums();
    part.tier = tier_->name();
    part.location = pending->file().id();
    STRATA_RETURN_IF_ERROR(tier_->Promote(pending->file()));
    return StorePart(std::move(part), upload);
  });
}

Result<metadata::PartRecord> LocalObjectStore::CopyPart(const metadata::ObjectRecord& source,
                                                        std::uint64_t first, std::uint64_t length,
                                                        const metadata::UploadRecord& upload,
                                                        std::uint32_t number) {
  return GuardExceptions("copy part", [&]() -> Result<metadata::PartRecord> {
    const metadata::Placement* placement = LocalPlacement(source);
    if (placement == nullptr) {
      return Error(ErrorCode::kUnavailable, "object has no local copy");
    }
    // A whole single-file object whose checksums the upload needs: share its bytes.
    const bool whole =
        first == 0 && length == source.size && source.parts.empty() &&
        placement->extents.size() == 1 &&
        (upload.checksum_algorithm.empty() || HasChecksum(source, upload.checksum_algorithm));
    if (whole) {
      // Parts live on the hot tier, whichever tier the source is on.
      auto linked = tier_->Adopt(*LocalTierNamed(placement->tier), placement->extents[0].location);
      if (!linked.ok()) {
        if (linked.error().code == ErrorCode::kNotFound) {
          return Error(ErrorCode::kNoSuchKey, "The specified key does not exist.");
        }
        return std::move(linked).error();
      }
      metadata::PartRecord part{number,           source.size,   source.etag, NowMs(),
                                source.checksums, tier_->name(), *linked};
      return StorePart(std::move(part), upload);
    }
    // Otherwise the range is copied through a bounded buffer.
    auto reader = OpenObject(source);
    if (!reader.ok()) {
      return std::move(reader).error();
    }
    std::vector<ChecksumAlgorithm> algorithms;
    if (auto algorithm = ParseChecksumAlgorithm(upload.checksum_algorithm)) {
      algorithms.push_back(*algorithm);
    }
    auto pending = BeginWrite(upload.object.bucket, algorithms);
    if (!pending.ok()) {
      return std::move(pending).error();
    }
    std::vector<char> block(kCopyBlock);
    for (std::uint64_t offset = first; offset < first + length;) {
      const auto want =
          static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), first + length - offset));
      auto n = (*reader)->Read(offset, std::span<char>(block.data(), want));
      if (!n.ok()) {
        return std::move(n).error();
      }
      if (*n == 0) {
        return Error(ErrorCode::kCorruption, "object data is shorter than its record");
      }
      STRATA_RETURN_IF_ERROR((*pending)->Append(std::string_view(block.data(), *n)));
      offset += *n;
    }
    return CommitPart(std::move(pending).value(), upload, number);
  });
}

Result<metadata::ListPartsPage> LocalObjectStore::ListParts(const metadata::UploadRecord& upload,
                                                            std::uint32_t after,
                                                            std::size_t max_parts) {
  return index_.ListParts(upload.upload_id, after, max_parts);
}

Result<metadata::ListUploadsPage> LocalObjectStore::ListUploads(const BucketName& bucket,
                                                                const std::string& prefix,
                                                                const std::string& key_marker,
                                                                const std::string& upload_id_marker,
                                                                std::size_t max_uploads) {
  auto page = index_.ListUploads(bucket, prefix, key_marker, upload_id_marker, max_uploads);
  if (!page.ok() && page.error().code == ErrorCode::kNoSuchBucket) {
    return NoSuchBucket(bucket);
  }
  return page;
}

Result<metadata::ObjectRecord> LocalObjectStore::RetriedCompletion(
    const BucketName& bucket, const ObjectKey& key, const UploadId& upload_id,
    const CompletionRequest& request) {
  // The version this upload made, if the key still has it: S3 answers a completion
  // retried after its answer was lost with the first one's result. Only the newest
  // versions are looked at; an upload completed long before is gone for good.
  auto versions = index_.KeyVersions(bucket, key, kRetryVersionsScanned);
  if (!versions.ok()) {
    if (versions.error().code == ErrorCode::kNoSuchBucket) {
      return NoSuchBucket(bucket);
    }
    return std::move(versions).error();
  }
  for (auto& version : *versions) {
    if (IsSameCompletion(version, upload_id, request)) {
      return std::move(version);
    }
  }
  return NoSuchUpload();
}

Result<metadata::CompletedUpload> LocalObjectStore::CommitCompletion(
    const BucketName& bucket, const ObjectKey& key, const UploadId& upload_id,
    const CompletionRequest& request, const VersionId& version_id, std::int64_t now_ms) {
  auto upload = index_.GetUpload(bucket, key, upload_id);
  if (!upload.ok()) {
    return std::move(upload).error();
  }
  auto stored = index_.ListParts(upload_id, 0, kMaxPartNumber);
  if (!stored.ok()) {
    return std::move(stored).error();
  }
  metadata::UploadCompletion completion{upload_id, {}, PartsUsed(stored->parts, request)};
  auto object = BuildUploadedObject(*upload, stored->parts, request, now_ms);
  if (!object.ok()) {
    return std::move(object).error();
  }
  completion.object = std::move(object).value();
  completion.object.version_id = version_id;
  return index_.CompleteUpload(bucket, key, completion, request.condition);
}

Result<metadata::ObjectRecord> LocalObjectStore::CompleteUpload(const BucketName& bucket,
                                                                const ObjectKey& key,
                                                                const UploadId& upload_id,
                                                                const CompletionRequest& request) {
  return GuardExceptions("complete upload", [&]() -> Result<metadata::ObjectRecord> {
    const std::int64_t now = NowMs();
    auto version = NextVersionId(bucket);
    if (!version.ok()) {
      return std::move(version).error();
    }
    // The object is built from a read of the parts outside the key's lock; the index
    // refuses the commit (retryable kInvalidPart) when a part it uses was uploaded again
    // since, and then a fresh read builds it again. Part uploads racing a completion are
    // rare, so a few rounds settle it.
    auto done = CommitCompletion(bucket, key, upload_id, request, *version, now);
    for (int round = 1; round < kCompletionRounds && !done.ok() && done.error().retryable &&
                        done.error().code == ErrorCode::kInvalidPart;
         ++round) {
      done = CommitCompletion(bucket, key, upload_id, request, *version, now);
    }
    if (!done.ok()) {
      if (done.error().code == ErrorCode::kNotFound) {
        return RetriedCompletion(bucket, key, upload_id, request);
      }
      if (done.error().code == ErrorCode::kNoSuchBucket) {
        return NoSuchBucket(bucket);
      }
      return std::move(done).error();
    }
    RemoveParts(done->unused_parts);
    if (done->replaced) {
      RemoveData(*done->replaced, "");
    }
    PlaceByClass(done->object);
    return std::move(done->object);
  });
}

Result<void> LocalObjectStore::AbortUpload(const BucketName& bucket, const ObjectKey& key,
                                           const UploadId& upload_id) {
  return GuardExceptions("abort upload", [&]() -> Result<void> {
    auto parts = index_.AbortUpload(bucket, key, upload_id);
    if (!parts.ok()) {
      if (parts.error().code == ErrorCode::kNotFound) {
        return NoSuchUpload();
      }
      return std::move(parts).error();
    }
    RemoveParts(*parts);
    return Ok();
  });
}

}  // namespace strata::storage
