// Placement: which members of a cluster own a key. A pure function of (bucket, key) and
// the member list, so every gateway that knows the same membership computes the same
// owners, with nothing to coordinate (DESIGN.md, "Cluster").
//
// Rendezvous (highest random weight) hashing: each member scores the key with a hash of
// (the key, the member's name); the members sorted by score, highest first, are the
// key's rendezvous order. A member that joins takes only the keys it now scores highest
// on, and one that leaves gives up only its own, so a membership change moves about
// replicas/members of the keys and no others.
//
// Owners: the first `replicas` members of the order, except that they are taken in
// distinct zones wherever the cluster has enough zones: walking the order, a member whose
// zone already holds an owner is passed over until every zone has one; the owners still
// missing then come from the members passed over, in order. The first owner is the
// primary (it orders the key's changes); the rest of the order after the owners is where
// the key goes next when an owner leaves.
//
// Members weigh the same: a member's share of keys is 1/members whatever its capacity.
// (Weighted rendezvous needs a logarithm that every gateway computes to the same bit,
// which libm does not promise across versions; a placement two gateways disagree on
// would be a split brain.) The hash is XXH3 (libxxhash), whose output is fixed by its
// specification, so mixed versions of strata place alike.
//
// Thread-safe: immutable once made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::storage {

struct Member {
  std::string node;  // [cluster] node: unique in the cluster
  std::string zone;  // [cluster] zone: its failure domain
};

class Placement {
 public:
  // `members` in any order (the result does not depend on it); names must be unique.
  explicit Placement(std::vector<Member> members);

  // Sorted by node name.
  const std::vector<Member>& members() const { return members_; }
  // Distinct zones among the members.
  std::size_t zones() const { return zones_; }

  // The key's owners, primary first: min(replicas, members) indexes into members().
  std::vector<std::size_t> Owners(std::string_view bucket, std::string_view key,
                                  std::size_t replicas) const;
  // Every member in the key's order: its owners (as Owners), then the rest by score.
  std::vector<std::size_t> Order(std::string_view bucket, std::string_view key,
                                 std::size_t replicas) const;

  // The score of `key` on a member whose name hashes to `node_hash` (NodeHash): exposed
  // for tests and for tools that explain a placement.
  static std::uint64_t KeyHash(std::string_view bucket, std::string_view key);
  static std::uint64_t NodeHash(std::string_view node);
  static std::uint64_t Score(std::uint64_t key_hash, std::uint64_t node_hash);

 private:
  // Every member by score for the key, highest first (ties by name).
  std::vector<std::size_t> Ranked(std::string_view bucket, std::string_view key) const;

  std::vector<Member> members_;
  std::vector<std::uint64_t> node_hashes_;  // of members_[i].node
  std::vector<std::size_t> zone_of_;        // members_[i]'s zone, numbered 0..zones_-1
  std::size_t zones_ = 0;
};

}  // namespace strata::storage
