#include "storage/listing_merge.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace strata::storage {
namespace {

metadata::ObjectRecord Entry(const std::string& key, std::uint64_t size = 0) {
  metadata::ObjectRecord record;
  record.key = ObjectKey(key);
  record.size = size;
  return record;
}

ListingSourcePage Source(std::vector<std::string> keys, std::uint64_t size = 0) {
  ListingSourcePage page;
  for (auto& key : keys) {
    page.entries.push_back(Entry(key, size));
  }
  return page;
}

std::vector<std::string> Keys(const metadata::ListObjectsPage& page) {
  std::vector<std::string> keys;
  for (const auto& entry : page.objects) {
    keys.push_back(entry.key.str());
  }
  return keys;
}

TEST(ListingMergeTest, MergesInKeyOrder) {
  std::vector<ListingSourcePage> sources;
  sources.push_back(Source({"a", "d", "f"}));
  sources.push_back(Source({"b", "c", "g"}));
  sources.push_back(Source({"e"}));
  const auto page = MergeListingPages(std::move(sources), 100);
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g"}));
  EXPECT_FALSE(page.truncated);
}

TEST(ListingMergeTest, TheEarlierSourceWinsAKeyBothHave) {
  std::vector<ListingSourcePage> sources;
  sources.push_back(Source({"a", "b"}, 1));  // the index
  sources.push_back(Source({"b", "c"}, 2));  // the upstream
  const auto page = MergeListingPages(std::move(sources), 100);
  ASSERT_EQ(Keys(page), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(page.objects[1].size, 1u);
  EXPECT_EQ(page.objects[2].size, 2u);
}

TEST(ListingMergeTest, StopsAtMaxKeysAsTruncated) {
  std::vector<ListingSourcePage> sources;
  sources.push_back(Source({"a", "c"}));
  sources.push_back(Source({"b", "d"}));
  const auto page = MergeListingPages(std::move(sources), 3);
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(page.truncated);
  // Exactly max_keys entries in all: the page is complete.
  std::vector<ListingSourcePage> exact;
  exact.push_back(Source({"a", "c"}));
  exact.push_back(Source({"b"}));
  EXPECT_FALSE(MergeListingPages(std::move(exact), 3).truncated);
}

// A truncated source was read only up to its last listed key: nothing past it may be
// listed from another source, or a later page would list that source's keys out of order.
TEST(ListingMergeTest, ATruncatedSourceBoundsThePage) {
  std::vector<ListingSourcePage> sources;
  sources.push_back(Source({"a", "x", "z"}));
  ListingSourcePage upstream = Source({"b", "c"});
  upstream.truncated = true;
  upstream.last_listed = "d";  // "d" itself was dropped (the index overrides it)
  sources.push_back(std::move(upstream));
  const auto page = MergeListingPages(std::move(sources), 100);
  EXPECT_EQ(Keys(page), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(page.truncated);
}

TEST(ListingMergeTest, EmptySources) {
  EXPECT_TRUE(MergeListingPages({}, 10).objects.empty());
  std::vector<ListingSourcePage> sources(2);
  const auto page = MergeListingPages(std::move(sources), 10);
  EXPECT_TRUE(page.objects.empty());
  EXPECT_FALSE(page.truncated);
}

// Property: for random sources, the merge is the sorted union of their keys, each key
// once and from the earliest source that has it, cut at max_keys.
TEST(ListingMergeTest, RandomSourcesGiveTheSortedUnion) {
  std::mt19937 rng(18);
  for (int round = 0; round < 200; ++round) {
    const std::size_t count = 1 + rng() % 4;
    std::vector<ListingSourcePage> sources(count);
    std::map<std::string, std::size_t> first_source;
    for (std::size_t s = 0; s < count; ++s) {
      std::set<std::string> keys;
      const std::size_t n = rng() % 20;
      for (std::size_t i = 0; i < n; ++i) {
        keys.insert(std::string(1, static_cast<char>('a' + rng() % 26)) +
                    std::to_string(rng() % 5));
      }
      for (const auto& key : keys) {
        sources[s].entries.push_back(Entry(key, s));
        first_source.emplace(key, s);
      }
    }
    const std::size_t max_keys = rng() % 40;
    const auto page = MergeListingPages(std::move(sources), max_keys);
    ASSERT_EQ(page.objects.size(), std::min(max_keys, first_source.size()));
    auto expected = first_source.begin();
    for (const auto& entry : page.objects) {
      EXPECT_EQ(entry.key.str(), expected->first);
      EXPECT_EQ(entry.size, expected->second);
      ++expected;
    }
    EXPECT_EQ(page.truncated, page.objects.size() < first_source.size());
  }
}

}  // namespace
}  // namespace strata::storage
