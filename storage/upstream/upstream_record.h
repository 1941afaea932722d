// An upstream object as a version record: what a read-through or a prefetch caches it
// under. The record's placement on the bucket's upstream tier makes the cached copy
// clean (the upstream keeps the truth; eviction may drop the local bytes).
#pragma once

#include "common/ids.h"
#include "metadata/records.h"
#include "metadata/stored_headers.h"
#include "storage/upstream/s3_client.h"

namespace strata::storage::upstream {

using metadata::kMetaPrefix;
using metadata::kStoredHeaders;

// The version `info` (a HEAD or GET of bucket.upstream_bucket/key) describes: ETag, size,
// time, content type, user metadata and stored headers. Its version id is "null", or in a
// versioned bucket the upstream's version id, so the copy reads back by it once evicted.
metadata::ObjectRecord RecordFromUpstream(const metadata::BucketRecord& bucket,
                                          const ObjectKey& key, const ObjectInfo& info);

}  // namespace strata::storage::upstream
