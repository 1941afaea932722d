// Test helper for storage/ unit tests: completes a version's write-back in the index as
// the write-back worker would, so its local copy becomes clean (evictable).
#pragma once

#include <gtest/gtest.h>

#include "metadata/codec.h"
#include "metadata/index.h"

namespace strata::storage::testing {

// Records that `record` now has a copy on the upstream tier "cold" (same ETag and size)
// and finishes its write-back item; fails the test when there is no item to finish.
inline void MarkPushed(metadata::Index& index, const metadata::ObjectRecord& record) {
  auto item = index.GetWriteback(record.bucket, record.key);
  ASSERT_TRUE(item.ok()) << item.error().message;
  ASSERT_TRUE(item->has_value()) << record.key.str() << " has no write-back item";
  metadata::UpstreamCopy copy;
  copy.version_id = record.version_id;
  copy.etag = record.etag;
  copy.last_modified_ms = record.last_modified_ms;
  copy.placement.tier = "cold";
  copy.placement.extents.push_back(
      {metadata::EncodeUpstreamLocation({record.etag, ""}), record.size});
  auto finished = index.FinishWriteback(**item, copy);
  ASSERT_TRUE(finished.ok()) << finished.error().message;
  EXPECT_TRUE(*finished) << record.key.str();
}

}  // namespace strata::storage::testing
