#include "storage/upstream/upstream_record.h"

#include <algorithm>

#include "common/http_time.h"
#include "metadata/codec.h"

namespace strata::storage::upstream {

metadata::ObjectRecord RecordFromUpstream(const metadata::BucketRecord& bucket,
                                          const ObjectKey& key, const ObjectInfo& info) {
  metadata::ObjectRecord record;
  record.bucket = bucket.name;
  record.key = key;
  record.version_id = VersionId("null");
  record.size = info.size;
  record.etag = EtagValue(info.etag);
  record.last_modified_ms = ParseHttpDate(info.last_modified).value_or(0) * 1000;
  record.content_type = info.content_type;
  for (const auto& [name, value] : info.headers) {
    if (name.starts_with(kMetaPrefix)) {
      record.user_metadata.emplace_back(name.substr(kMetaPrefix.size()), value);
    } else if (std::find(kStoredHeaders.begin(), kStoredHeaders.end(), name) !=
               kStoredHeaders.end()) {
      record.system_metadata.emplace_back(name, value);
    }
  }
  metadata::UpstreamLocation location{record.etag, ""};
  if (!bucket.versioning.empty() && !info.version_id.empty()) {
    record.version_id = VersionId(info.version_id);
    location.version_id = info.version_id;
  }
  record.placements.push_back(
      {bucket.upstream_tier, {{metadata::EncodeUpstreamLocation(location), record.size}}});
  return record;
}

}  // namespace strata::storage::upstream
