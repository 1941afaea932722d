#include "storage/placement.h"

#include <xxhash.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace strata::storage {

Placement::Placement(std::vector<Member> members) : members_(std::move(members)) {
  std::sort(members_.begin(), members_.end(),
            [](const Member& a, const Member& b) { return a.node < b.node; });
  std::map<std::string, std::size_t> zone_numbers;
  node_hashes_.reserve(members_.size());
  zone_of_.reserve(members_.size());
  for (const auto& member : members_) {
    node_hashes_.push_back(NodeHash(member.node));
    auto [it, added] = zone_numbers.emplace(member.zone, zone_numbers.size());
    zone_of_.push_back(it->second);
  }
  zones_ = zone_numbers.size();
}

std::uint64_t Placement::KeyHash(std::string_view bucket, std::string_view key) {
  // The bucket's hash seeds the key's: ("a", "bc") and ("ab", "c") differ.
  const XXH64_hash_t seed = XXH3_64bits(bucket.data(), bucket.size());
  return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

std::uint64_t Placement::NodeHash(std::string_view node) {
  return XXH3_64bits(node.data(), node.size());
}

std::uint64_t Placement::Score(std::uint64_t key_hash, std::uint64_t node_hash) {
  // XXH3 of the 16 bytes (key hash, node hash): one short hash a member, and a change of
  // either input changes every bit of the score with even odds.
  const std::uint64_t pair[2] = {key_hash, node_hash};
  return XXH3_64bits(pair, sizeof(pair));
}

std::vector<std::size_t> Placement::Ranked(std::string_view bucket, std::string_view key) const {
  const std::uint64_t key_hash = KeyHash(bucket, key);
  std::vector<std::pair<std::uint64_t, std::size_t>> scored;
  scored.reserve(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    scored.emplace_back(Score(key_hash, node_hashes_[i]), i);
  }
  // Highest score first; equal scores (a 2^-64 chance) by name, which is index order.
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::size_t> ranked;
  ranked.reserve(scored.size());
  for (const auto& [score, i] : scored) {
    ranked.push_back(i);
  }
  return ranked;
}

std::vector<std::size_t> Placement::Order(std::string_view bucket, std::string_view key,
                                          std::size_t replicas) const {
  const std::vector<std::size_t> ranked = Ranked(bucket, key);
  const std::size_t owners = std::min(replicas, ranked.size());
  std::vector<std::size_t> order;
  order.reserve(ranked.size());
  std::vector<bool> taken(members_.size(), false);
  std::vector<bool> zone_used(zones_, false);
  // One owner a zone, in rendezvous order, while zones without one remain.
  std::size_t zones_left = zones_;
  for (std::size_t i : ranked) {
    if (order.size() == owners || zones_left == 0) {
      break;
    }
    if (!zone_used[zone_of_[i]]) {
      zone_used[zone_of_[i]] = true;
      --zones_left;
      taken[i] = true;
      order.push_back(i);
    }
  }
  // The owners still missing (fewer zones than replicas), then everyone else, in order.
  for (std::size_t i : ranked) {
    if (!taken[i]) {
      order.push_back(i);
    }
  }
  return order;
}

std::vector<std::size_t> Placement::Owners(std::string_view bucket, std::string_view key,
                                           std::size_t replicas) const {
  std::vector<std::size_t> order = Order(bucket, key, replicas);
  order.resize(std::min(replicas, order.size()));
  return order;
}

}  // namespace strata::storage
