// Ownership (storage/ownership.h): a key's owners with joins and drains in flight. While a
// member joins, the keys' old owners keep serving them and the joiner is an extra replica
// of the keys it will own, never a primary; while a member drains, it keeps serving and
// its keys' next owners are extra replicas; once drained it owns nothing. Over many keys,
// a join adds the joiner to about replicas/members of them and changes no other owner.
#include "storage/ownership.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace strata::storage {
namespace {

constexpr int kKeys = 20'000;

std::string KeyName(int i) { return "shard-" + std::to_string(i); }

MemberInfo Info(const std::string& node, const std::string& zone, bool ready = true,
                bool draining = false) {
  MemberInfo m;
  m.node = node;
  m.zone = zone;
  m.peer = node + ":9100";
  m.ready = ready;
  m.draining = draining;
  return m;
}

std::shared_ptr<const MembershipView> View(std::vector<MemberInfo> members) {
  auto view = std::make_shared<MembershipView>();
  view->epoch = 7;
  std::sort(members.begin(), members.end(),
            [](const MemberInfo& a, const MemberInfo& b) { return a.node < b.node; });
  view->members = std::move(members);
  return view;
}

// Placement's owners as names, for comparison.
std::vector<std::string> PlacedNames(const std::vector<Member>& members, const std::string& key,
                                     std::size_t replicas) {
  const Placement placement(members);
  std::vector<std::string> names;
  for (const std::size_t i : placement.Owners("b", key, replicas)) {
    names.push_back(placement.members()[i].node);
  }
  return names;
}

const std::vector<Member> kThree = {{"a", "z1"}, {"b", "z2"}, {"c", "z3"}};
const std::vector<Member> kFour = {{"a", "z1"}, {"b", "z2"}, {"c", "z3"}, {"d", "z4"}};

TEST(Ownership, EveryMemberReadyIsPlainPlacement) {
  const Ownership ownership(View({Info("a", "z1"), Info("b", "z2"), Info("c", "z3")}), 2);
  EXPECT_FALSE(ownership.Moving());
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(ownership.OwnerNames("b", KeyName(i)), PlacedNames(kThree, KeyName(i), 2));
  }
}

TEST(Ownership, AJoinerIsAnExtraReplicaOfItsKeysAndPrimaryOfNone) {
  const std::size_t replicas = 2;
  const Ownership joining(
      View({Info("a", "z1"), Info("b", "z2"), Info("c", "z3"), Info("d", "z4", false)}), replicas);
  EXPECT_TRUE(joining.Moving());
  int gained = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = KeyName(i);
    const auto owners = joining.OwnerNames("b", key);
    const auto old_owners = PlacedNames(kThree, key, replicas);
    const auto new_owners = PlacedNames(kFour, key, replicas);
    // The old owners, in their order, serve on: the joiner never leads.
    ASSERT_GE(owners.size(), old_owners.size());
    EXPECT_TRUE(std::equal(old_owners.begin(), old_owners.end(), owners.begin())) << key;
    const bool d_gains = std::find(new_owners.begin(), new_owners.end(), "d") != new_owners.end();
    EXPECT_EQ(owners.size(), old_owners.size() + (d_gains ? 1 : 0)) << key;
    if (d_gains) {
      EXPECT_EQ(owners.back(), "d");
      ++gained;
    }
  }
  // replicas/members of the keys move to the joiner (within 10%).
  const double expected = kKeys * static_cast<double>(replicas) / 4;
  EXPECT_NEAR(gained, expected, expected * 0.1);

  // Once ready, the placement over all four.
  const Ownership joined(View({Info("a", "z1"), Info("b", "z2"), Info("c", "z3"), Info("d", "z4")}),
                         replicas);
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(joined.OwnerNames("b", KeyName(i)), PlacedNames(kFour, KeyName(i), replicas));
  }
}

TEST(Ownership, ADrainingMemberServesWhileItsKeysGainTheirNextOwners) {
  const std::size_t replicas = 2;
  const Ownership draining(
      View({Info("a", "z1", true, true), Info("b", "z2"), Info("c", "z3"), Info("d", "z4")}),
      replicas);
  EXPECT_TRUE(draining.Moving());
  const Ownership drained(
      View({Info("a", "z1", false, true), Info("b", "z2"), Info("c", "z3"), Info("d", "z4")}),
      replicas);
  const std::vector<Member> without_a = {{"b", "z2"}, {"c", "z3"}, {"d", "z4"}};
  for (int i = 0; i < 2'000; ++i) {
    const std::string key = KeyName(i);
    const auto owners = draining.OwnerNames("b", key);
    const auto now = PlacedNames(kFour, key, replicas);
    const auto next = PlacedNames(without_a, key, replicas);
    EXPECT_TRUE(std::equal(now.begin(), now.end(), owners.begin())) << key;
    // Every next owner holds the key's changes already.
    for (const auto& node : next) {
      EXPECT_NE(std::find(owners.begin(), owners.end(), node), owners.end()) << key;
    }
    // Drained: exactly the next owners; `a` owns nothing.
    EXPECT_EQ(drained.OwnerNames("b", key), next) << key;
  }
}

TEST(Ownership, NoMemberReadyLeavesTheTargetOwners) {
  const Ownership starting(View({Info("a", "z1", false), Info("b", "z2", false)}), 2);
  EXPECT_EQ(starting.OwnerNames("b", "k"), PlacedNames({{"a", "z1"}, {"b", "z2"}}, "k", 2));
  const Ownership empty(View({}), 2);
  EXPECT_TRUE(empty.OwnerNames("b", "k").empty());
}

TEST(Ownership, ADeathDuringAJoinLeavesAnOldOwnerServing) {
  // replicas 2, d joining: a key of (a, b) whose owner a dies is served by b, which held
  // every change, never by d alone.
  const Ownership after(View({Info("b", "z2"), Info("c", "z3"), Info("d", "z4", false)}), 2);
  for (int i = 0; i < 2'000; ++i) {
    const std::string key = KeyName(i);
    const auto before = PlacedNames(kThree, key, 2);
    const auto owners = after.OwnerNames("b", key);
    EXPECT_NE(owners.front(), "d") << key;
    if (std::find(before.begin(), before.end(), "a") != before.end()) {
      // The surviving old owner is among the serving owners.
      const std::string survivor = before[0] == "a" ? before[1] : before[0];
      EXPECT_NE(std::find(owners.begin(), owners.begin() + 2, survivor), owners.begin() + 2) << key;
    }
  }
}

}  // namespace
}  // namespace strata::storage
