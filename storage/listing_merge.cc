#include "storage/listing_merge.h"

#include <optional>
#include <queue>
#include <utility>

namespace strata::storage {

metadata::ListObjectsPage MergeListingPages(std::vector<ListingSourcePage> pages,
                                            std::size_t max_keys) {
  metadata::ListObjectsPage page;
  std::optional<std::string> bound;
  for (const auto& source : pages) {
    if (!source.truncated) {
      continue;
    }
    page.truncated = true;  // that source has more, whatever this page holds
    if (!bound || source.last_listed < *bound) {
      bound = source.last_listed;
    }
  }
  // The next entry of each source, smallest key first; on a tie the earlier source.
  using Head = std::pair<std::size_t, std::size_t>;  // (source, position)
  auto after = [&pages](const Head& a, const Head& b) {
    const std::string& ka = pages[a.first].entries[a.second].key.str();
    const std::string& kb = pages[b.first].entries[b.second].key.str();
    return ka != kb ? ka > kb : a.first > b.first;
  };
  std::priority_queue<Head, std::vector<Head>, decltype(after)> heads(after);
  for (std::size_t s = 0; s < pages.size(); ++s) {
    if (!pages[s].entries.empty()) {
      heads.push({s, 0});
    }
  }
  std::optional<std::string> last_taken;
  while (!heads.empty()) {
    const auto [source, position] = heads.top();
    heads.pop();
    if (position + 1 < pages[source].entries.size()) {
      heads.push({source, position + 1});
    }
    metadata::ObjectRecord& entry = pages[source].entries[position];
    if (last_taken && entry.key.str() == *last_taken) {
      continue;  // an earlier source had this key
    }
    if (bound && entry.key.str() > *bound) {
      break;
    }
    if (page.objects.size() == max_keys) {
      page.truncated = true;
      break;
    }
    last_taken = entry.key.str();
    page.objects.push_back(std::move(entry));
  }
  return page;
}

}  // namespace strata::storage
