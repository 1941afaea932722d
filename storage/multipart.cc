#include "storage/multipart.h"

#include <algorithm>

#include "common/text.h"
#include "storage/crc_combine.h"

namespace strata::storage {
namespace {

const std::string* FindChecksum(const std::vector<std::pair<std::string, std::string>>& checksums,
                                std::string_view name) {
  for (const auto& [algorithm, value] : checksums) {
    if (algorithm == name) {
      return &value;
    }
  }
  return nullptr;
}

Error InvalidPart(std::uint32_t number) {
  return Error(ErrorCode::kInvalidPart,
               "One or more of the specified parts could not be found. The part may not have "
               "been uploaded, or the specified entity tag may not match the part's entity tag. "
               "(part " +
                   std::to_string(number) + ")");
}

// Combines the parts' values of a CRC into the whole object's.
std::optional<std::string> CombinedCrc(ChecksumAlgorithm algorithm,
                                       const std::vector<const metadata::PartRecord*>& parts) {
  const auto name = ChecksumName(algorithm);
  std::optional<std::string> total;
  for (const auto* part : parts) {
    const std::string* value = FindChecksum(part->checksums, name);
    if (value == nullptr) {
      return std::nullopt;
    }
    total = total ? CombineChecksumBase64(algorithm, *total, *value, part->size)
                  : std::optional<std::string>(*value);
    if (!total) {
      return std::nullopt;
    }
  }
  return total;
}

// The checksum of the parts' raw checksums, "-N".
std::optional<std::string> CompositeChecksum(
    ChecksumAlgorithm algorithm, const std::vector<const metadata::PartRecord*>& parts) {
  auto digest = MakeChecksummer(algorithm);
  for (const auto* part : parts) {
    const std::string* value = FindChecksum(part->checksums, ChecksumName(algorithm));
    auto raw = value == nullptr ? std::nullopt : Base64Decode(*value);
    if (!raw) {
      return std::nullopt;
    }
    digest->Update(*raw);
  }
  return digest->FinalBase64() + "-" + std::to_string(parts.size());
}

// The stored part numbered `number` (`stored` is in number order), or nullptr.
const metadata::PartRecord* FindPart(const std::vector<metadata::PartRecord>& stored,
                                     std::uint32_t number) {
  auto found = std::lower_bound(
      stored.begin(), stored.end(), number,
      [](const metadata::PartRecord& part, std::uint32_t n) { return part.number < n; });
  return found == stored.end() || found->number != number ? nullptr : &*found;
}

}  // namespace

Result<std::string> ResolveChecksumType(const std::string& algorithm, const std::string& type) {
  if (algorithm.empty()) {
    if (!type.empty()) {
      return Error(ErrorCode::kInvalidRequest,
                   "The x-amz-checksum-type header can only be used with the "
                   "x-amz-checksum-algorithm header.");
    }
    return std::string();
  }
  auto parsed = ParseChecksumAlgorithm(algorithm);
  if (!parsed) {
    return Error(ErrorCode::kInvalidRequest, "Checksum algorithm provided is unsupported.");
  }
  if (type.empty()) {
    return std::string(*parsed == ChecksumAlgorithm::kCrc64Nvme ? "FULL_OBJECT" : "COMPOSITE");
  }
  if (type != "FULL_OBJECT" && type != "COMPOSITE") {
    return Error(ErrorCode::kInvalidRequest, "Value for x-amz-checksum-type header is invalid.");
  }
  if ((type == "FULL_OBJECT" && !IsCombinable(*parsed)) ||
      (type == "COMPOSITE" && *parsed == ChecksumAlgorithm::kCrc64Nvme)) {
    return Error(ErrorCode::kInvalidRequest,
                 "The " + type + " checksum type cannot be used with the " +
                     std::string(ChecksumName(*parsed)) + " checksum algorithm.");
  }
  return type;
}

std::optional<std::string> MultipartEtag(const std::vector<std::string>& part_etags) {
  Md5 md5;
  for (const auto& etag : part_etags) {
    if (etag.size() != 32) {
      return std::nullopt;
    }
    std::string raw(16, '\0');
    for (std::size_t i = 0; i < 16; ++i) {
      const int hi = HexDigitValue(etag[2 * i]);
      const int lo = HexDigitValue(etag[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        return std::nullopt;
      }
      raw[i] = static_cast<char>(hi * 16 + lo);
    }
    md5.Update(raw);
  }
  return md5.FinalHex() + "-" + std::to_string(part_etags.size());
}

std::vector<metadata::CompletionPart> PartsUsed(const std::vector<metadata::PartRecord>& stored,
                                                const CompletionRequest& request) {
  std::vector<metadata::CompletionPart> used;
  used.reserve(request.parts.size());
  for (const auto& asked : request.parts) {
    if (const metadata::PartRecord* found = FindPart(stored, asked.number)) {
      used.push_back({found->number, found->tier, found->location});
    }
  }
  return used;
}

bool IsSameCompletion(const metadata::ObjectRecord& object, const UploadId& upload_id,
                      const CompletionRequest& request) {
  if (object.delete_marker || object.upload_id.empty() || object.upload_id != upload_id ||
      object.parts.size() != request.parts.size()) {
    return false;
  }
  std::vector<std::string> etags;
  etags.reserve(request.parts.size());
  for (std::size_t i = 0; i < request.parts.size(); ++i) {
    const CompletedPart& asked = request.parts[i];
    const metadata::ObjectPart& made = object.parts[i];
    if (asked.number != made.number) {
      return false;
    }
    for (const auto& [algorithm, value] : asked.checksums) {
      const std::string* have = FindChecksum(made.checksums, algorithm);
      if (have == nullptr || *have != value) {
        return false;
      }
    }
    etags.push_back(asked.etag);
  }
  auto etag = MultipartEtag(etags);
  return etag && *etag == object.etag;
}

Result<metadata::ObjectRecord> BuildUploadedObject(const metadata::UploadRecord& upload,
                                                   const std::vector<metadata::PartRecord>& stored,
                                                   const CompletionRequest& request,
                                                   std::int64_t now_ms) {
  if (request.parts.empty()) {
    return Error(ErrorCode::kMalformedXml,
                 "The XML you provided was not well-formed or did not validate against our "
                 "published schema: at least one part is required");
  }
  std::vector<const metadata::PartRecord*> parts;
  parts.reserve(request.parts.size());
  std::vector<std::string> etags;
  for (std::size_t i = 0; i < request.parts.size(); ++i) {
    const CompletedPart& asked = request.parts[i];
    if (i > 0 && asked.number <= request.parts[i - 1].number) {
      return Error(ErrorCode::kInvalidPartOrder,
                   "The list of parts was not in ascending order. Parts must be ordered by part "
                   "number.");
    }
    const metadata::PartRecord* found = FindPart(stored, asked.number);
    if (found == nullptr || found->etag != asked.etag) {
      return InvalidPart(asked.number);
    }
    for (const auto& [algorithm, value] : asked.checksums) {
      const std::string* have = FindChecksum(found->checksums, algorithm);
      if (have == nullptr || *have != value) {
        return InvalidPart(asked.number);
      }
    }
    parts.push_back(found);
    etags.push_back(found->etag);
  }
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i]->size < kMinPartSize) {
      return Error(ErrorCode::kEntityTooSmall,
                   "Your proposed upload is smaller than the minimum allowed object size. (part " +
                       std::to_string(parts[i]->number) + ")");
    }
  }

  metadata::ObjectRecord object = upload.object;
  object.upload_id = upload.upload_id;
  object.version_id = VersionId("null");
  object.last_modified_ms = now_ms;
  object.size = 0;
  object.checksums.clear();
  object.parts.clear();
  object.placements.clear();
  auto etag = MultipartEtag(etags);
  if (!etag) {
    return Error(ErrorCode::kInternal, "a stored part has a malformed ETag");
  }
  object.etag = *etag;
  for (const auto* part : parts) {
    object.size += part->size;
    object.parts.push_back({part->number, part->size, part->checksums});
    if (object.placements.empty() || object.placements.back().tier != part->tier) {
      if (!object.placements.empty()) {
        return Error(ErrorCode::kInternal, "parts of one upload on different tiers");
      }
      object.placements.push_back({part->tier, {}});
    }
    object.placements.back().extents.push_back({part->location, part->size});
  }
  if (request.object_size && *request.object_size != object.size) {
    return Error(ErrorCode::kInvalidRequest,
                 "The provided 'x-amz-mp-object-size' header value " +
                     std::to_string(*request.object_size) +
                     " does not match what was computed: " + std::to_string(object.size));
  }

  auto type = ResolveChecksumType(upload.checksum_algorithm, upload.checksum_type);
  if (!type.ok()) {
    return std::move(type).error();
  }
  object.checksum_type = type->empty() ? "FULL_OBJECT" : *type;
  if (!upload.checksum_algorithm.empty()) {
    const auto algorithm = *ParseChecksumAlgorithm(upload.checksum_algorithm);
    auto value =
        *type == "COMPOSITE" ? CompositeChecksum(algorithm, parts) : CombinedCrc(algorithm, parts);
    if (!value) {
      return Error(ErrorCode::kInvalidRequest,
                   "The upload was created using a " + upload.checksum_algorithm +
                       " checksum, but a part was uploaded without it.");
    }
    object.checksums.emplace_back(std::string(ChecksumName(algorithm)), *value);
  }
  if (upload.checksum_algorithm != "CRC64NVME") {
    auto crc64 = CombinedCrc(ChecksumAlgorithm::kCrc64Nvme, parts);
    if (!crc64) {
      return Error(ErrorCode::kInternal, "a stored part has no CRC64NVME");
    }
    object.checksums.emplace_back("CRC64NVME", *crc64);
  }
  if (request.object_checksum) {
    const std::string* have =
        FindChecksum(object.checksums, ChecksumName(request.object_checksum->first));
    if (have == nullptr || *have != request.object_checksum->second) {
      return Error(ErrorCode::kBadDigest,
                   "The " + std::string(ChecksumName(request.object_checksum->first)) +
                       " you specified did not match the calculated checksum.");
    }
  }
  return object;
}

}  // namespace strata::storage
