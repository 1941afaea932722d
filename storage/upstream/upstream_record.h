// An upstream object as a version record: what a read-through or a prefetch caches it
// under. The record's placement on the bucket's upstream tier makes the cached copy
// clean (the upstream keeps the truth; eviction may drop the local bytes).
#pragma once

#include <array>
#include <string_view>

#include "common/ids.h"
#include "metadata/records.h"
#include "storage/upstream/s3_client.h"

namespace strata::storage::upstream {

inline constexpr std::string_view kMetaPrefix = "x-amz-meta-";
// Standard headers S3 stores with an object and returns on GET and HEAD.
inline constexpr std::array<std::string_view, 5> kStoredHeaders = {
    "cache-control", "content-disposition", "content-encoding", "content-language", "expires"};

// The version `info` (a HEAD or GET of bucket.upstream_bucket/key) describes: ETag, size,
// time, content type, user metadata and stored headers. Its version id is "null", or in a
// versioned bucket the upstream's version id, so the copy reads back by it once evicted.
metadata::ObjectRecord RecordFromUpstream(const metadata::BucketRecord& bucket,
                                          const ObjectKey& key, const ObjectInfo& info);

}  // namespace strata::storage::upstream
