// MergeListingPages: one listing page out of pages of several sorted sources (the index
// and the upstream of a bound bucket today; the peers of a cluster's fan-out listing next),
// each listed from the same start. A k-way merge in key order: a key several sources have
// is taken from the earliest source in the list (the index's word beats the upstream's).
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "metadata/index.h"

namespace strata::storage {

// One source's page: its entries in key order, at most one per key.
struct ListingSourcePage {
  std::vector<metadata::ObjectRecord> entries;
  // The source has more after its page; it is then complete only up to `last_listed`, the
  // last key it listed (which may be missing from `entries`: a caller may drop entries
  // another source overrides).
  bool truncated = false;
  std::string last_listed;
};

// At most `max_keys` entries in key order, none past the smallest `last_listed` of a
// truncated source (beyond it that source was not read). truncated when the page stopped
// at max_keys or at such a bound, or any source has more.
metadata::ListObjectsPage MergeListingPages(std::vector<ListingSourcePage> pages,
                                            std::size_t max_keys);

}  // namespace strata::storage
