// Placement (storage/placement.h): rendezvous order over the members with owners in
// distinct zones. Properties over many keys: the same owners whatever the member list's
// order; a balanced share per member (primaries and copies); distinct zones whenever the
// cluster has enough of them, as many as it has otherwise; and on a join or a leave only
// the keys the changed member gains or loses move, about replicas/members of them.
#include "storage/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace strata::storage {
namespace {

constexpr int kKeys = 40'000;

std::string KeyName(int i) { return "train/shard-" + std::to_string(i) + ".tar"; }

// `per_zone` members in each of `zones` zones: node "gw-<zone>-<n>", zone "z<zone>".
std::vector<Member> Cluster(int zones, int per_zone) {
  std::vector<Member> members;
  for (int z = 0; z < zones; ++z) {
    for (int n = 0; n < per_zone; ++n) {
      members.push_back(
          {"gw-" + std::to_string(z) + "-" + std::to_string(n), "z" + std::to_string(z)});
    }
  }
  return members;
}

// Owners as node names, so that two placements over different lists compare.
std::set<std::string> OwnerNames(const Placement& placement, const std::string& key,
                                 std::size_t replicas) {
  std::set<std::string> names;
  for (std::size_t i : placement.Owners("data", key, replicas)) {
    names.insert(placement.members()[i].node);
  }
  return names;
}

TEST(PlacementTest, OwnersDoNotDependOnTheOrderOfTheMemberList) {
  std::vector<Member> members = Cluster(3, 3);
  const Placement sorted(members);
  std::mt19937 shuffle(7);
  std::shuffle(members.begin(), members.end(), shuffle);
  const Placement shuffled(members);
  for (int i = 0; i < 2'000; ++i) {
    const auto a = sorted.Owners("data", KeyName(i), 3);
    const auto b = shuffled.Owners("data", KeyName(i), 3);
    ASSERT_EQ(a.size(), 3u);
    for (std::size_t j = 0; j < a.size(); ++j) {
      // Primary first, the same member in the same place.
      EXPECT_EQ(sorted.members()[a[j]].node, shuffled.members()[b[j]].node) << KeyName(i);
    }
  }
}

TEST(PlacementTest, TheBucketAndTheKeyBothCount) {
  const Placement placement(Cluster(1, 16));
  int same_primary = 0;
  int split_primary = 0;
  for (int i = 0; i < 2'000; ++i) {
    const std::string key = KeyName(i);
    same_primary += placement.Owners("data", key, 1) == placement.Owners("other", key, 1);
    // ("ab", "c") and ("a", "bc") are different keys.
    split_primary += placement.Owners("data" + key.substr(0, 1), key.substr(1), 1) ==
                     placement.Owners("data", key, 1);
  }
  // One in 16 agree by chance: about 125 of 2,000.
  EXPECT_LT(same_primary, 250);
  EXPECT_LT(split_primary, 250);
}

TEST(PlacementTest, EveryMemberGetsItsShareOfPrimariesAndCopies) {
  const Placement placement(Cluster(4, 3));  // 12 members
  const std::size_t n = placement.members().size();
  std::vector<int> primaries(n, 0);
  std::vector<int> copies(n, 0);
  for (int i = 0; i < kKeys; ++i) {
    const auto owners = placement.Owners("data", KeyName(i), 3);
    ASSERT_EQ(owners.size(), 3u);
    ++primaries[owners[0]];
    for (std::size_t o : owners) {
      ++copies[o];
    }
  }
  const double primary_mean = static_cast<double>(kKeys) / n;
  const double copy_mean = 3.0 * kKeys / n;
  for (std::size_t m = 0; m < n; ++m) {
    // A binomial count's standard deviation is about sqrt(mean): 10% is over 5 of them.
    EXPECT_NEAR(primaries[m], primary_mean, 0.1 * primary_mean) << placement.members()[m].node;
    EXPECT_NEAR(copies[m], copy_mean, 0.1 * copy_mean) << placement.members()[m].node;
  }
}

TEST(PlacementTest, OwnersAreInDistinctZonesWhereTheClusterHasEnough) {
  const Placement three_zones(Cluster(3, 4));
  const Placement two_zones(Cluster(2, 4));
  for (int i = 0; i < 5'000; ++i) {
    std::set<std::string> zones;
    std::set<std::size_t> owners;
    for (std::size_t o : three_zones.Owners("data", KeyName(i), 3)) {
      zones.insert(three_zones.members()[o].zone);
      owners.insert(o);
    }
    EXPECT_EQ(zones.size(), 3u) << KeyName(i);
    EXPECT_EQ(owners.size(), 3u);
    // Two zones for three copies: both zones, three distinct members.
    zones.clear();
    owners.clear();
    for (std::size_t o : two_zones.Owners("data", KeyName(i), 3)) {
      zones.insert(two_zones.members()[o].zone);
      owners.insert(o);
    }
    EXPECT_EQ(zones.size(), 2u) << KeyName(i);
    EXPECT_EQ(owners.size(), 3u);
  }
}

TEST(PlacementTest, TheOrderListsEveryMemberOnceOwnersFirst) {
  const Placement placement(Cluster(3, 3));
  for (int i = 0; i < 500; ++i) {
    const auto order = placement.Order("data", KeyName(i), 3);
    const auto owners = placement.Owners("data", KeyName(i), 3);
    ASSERT_EQ(order.size(), placement.members().size());
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), order.size());
    EXPECT_TRUE(std::equal(owners.begin(), owners.end(), order.begin()));
  }
}

TEST(PlacementTest, FewerMembersThanReplicasOwnEveryKeyAndOneMemberOwnsAll) {
  const Placement two(Cluster(1, 2));
  EXPECT_EQ(two.Owners("data", "k", 3).size(), 2u);
  const Placement one(std::vector<Member>{{"solo", "z"}});
  EXPECT_EQ(one.Owners("data", "k", 3), std::vector<std::size_t>{0});
  const Placement none(std::vector<Member>{});
  EXPECT_TRUE(none.Owners("data", "k", 3).empty());
}

// How the owner sets of kKeys keys change from `before` to `after`.
struct Moves {
  int changed = 0;         // keys whose owner set differs
  int primary_moved = 0;   // keys whose primary differs
  int without_member = 0;  // changed sets that do not involve `member` (must be 0)
};

Moves Compare(const Placement& before, const Placement& after, const std::string& member,
              bool joined) {
  Moves moves;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = KeyName(i);
    const auto old_owners = OwnerNames(before, key, 3);
    const auto new_owners = OwnerNames(after, key, 3);
    const auto old_primary = before.members()[before.Owners("data", key, 3)[0]].node;
    const auto new_primary = after.members()[after.Owners("data", key, 3)[0]].node;
    if (old_primary != new_primary) {
      ++moves.primary_moved;
      // A primary changes only to the member that joined, or from the one that left.
      if ((joined && new_primary != member) || (!joined && old_primary != member)) {
        ++moves.without_member;
      }
    }
    if (old_owners == new_owners) {
      continue;
    }
    ++moves.changed;
    // Joined: the new member is among the new owners and the rest kept their keys but
    // one at most. Left: every surviving owner keeps the key.
    std::set<std::string> kept;
    std::set_intersection(old_owners.begin(), old_owners.end(), new_owners.begin(),
                          new_owners.end(), std::inserter(kept, kept.end()));
    const bool involves =
        joined ? new_owners.contains(member) && kept.size() == 2
               : old_owners.contains(member) && kept.size() == 2 && !new_owners.contains(member);
    moves.without_member += involves ? 0 : 1;
  }
  return moves;
}

TEST(PlacementTest, AJoinMovesOnlyTheKeysTheNewMemberTakes) {
  std::vector<Member> members = Cluster(3, 4);  // 12
  const Placement before(members);
  members.push_back({"gw-new", "z1"});
  const Placement after(members);
  const Moves moves = Compare(before, after, "gw-new", true);
  EXPECT_EQ(moves.without_member, 0);
  // The new member's share: 3 copies in 13 members of every key, 1 in 13 primaries.
  const double share = 3.0 * kKeys / 13;
  EXPECT_NEAR(moves.changed, share, 0.15 * share);
  EXPECT_NEAR(moves.primary_moved, kKeys / 13.0, 0.15 * kKeys / 13.0);
}

TEST(PlacementTest, ALeaveMovesOnlyTheKeysTheMemberHeld) {
  std::vector<Member> members = Cluster(3, 4);
  const Placement before(members);
  const std::string leaving = members[5].node;
  members.erase(members.begin() + 5);
  const Placement after(members);
  const Moves moves = Compare(before, after, leaving, false);
  EXPECT_EQ(moves.without_member, 0);
  const double share = 3.0 * kKeys / 12;
  EXPECT_NEAR(moves.changed, share, 0.15 * share);
  EXPECT_NEAR(moves.primary_moved, kKeys / 12.0, 0.15 * kKeys / 12.0);
}

TEST(PlacementTest, AJoinInANewZoneSpreadsCopiesOverIt) {
  std::vector<Member> members = Cluster(2, 4);  // two zones, three copies
  const Placement before(members);
  members.push_back({"gw-east", "z-east"});
  const Placement after(members);
  const Moves moves = Compare(before, after, "gw-east", true);
  EXPECT_EQ(moves.without_member, 0);
  int in_three_zones = 0;
  for (int i = 0; i < kKeys; ++i) {
    std::set<std::string> zones;
    for (std::size_t o : after.Owners("data", KeyName(i), 3)) {
      zones.insert(after.members()[o].zone);
    }
    in_three_zones += zones.size() == 3;
  }
  // The only member of the third zone holds a copy of every key.
  EXPECT_EQ(in_three_zones, kKeys);
}

// The hash is XXH3, fixed by its specification: these values must never change, or
// gateways of two versions would place keys differently. (XXH3 of "" is the published
// 0x2d06800538d394c2; the others were recorded when placement was written.)
TEST(PlacementTest, HashesAreStableAcrossVersions) {
  EXPECT_EQ(Placement::NodeHash(""), 0x2d06800538d394c2ull);
  EXPECT_EQ(Placement::NodeHash("gw-a"), 0x7a531b240b4e721cull);
  EXPECT_EQ(Placement::KeyHash("data", "train/shard-0.tar"), 0xe1fe1b8cc841a38aull);
  EXPECT_EQ(Placement::Score(1, 2), 0x07ee86c281446befull);
  EXPECT_NE(Placement::KeyHash("a", "bc"), Placement::KeyHash("ab", "c"));
  EXPECT_NE(Placement::Score(1, 2), Placement::Score(2, 1));
}

}  // namespace
}  // namespace strata::storage
