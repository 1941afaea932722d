#include "storage/ownership.h"

#include <algorithm>
#include <utility>

namespace strata::storage {
namespace {

template <typename Keep>
std::vector<Member> MembersWhere(const MembershipView& view, Keep keep) {
  std::vector<Member> members;
  for (const auto& member : view.members) {
    if (keep(member)) {
      members.push_back(member);
    }
  }
  return members;
}

}  // namespace

Ownership::Ownership(std::shared_ptr<const MembershipView> view, std::size_t replicas)
    : view_(std::move(view)),
      replicas_(replicas),
      serving_(MembersWhere(*view_, [](const MemberInfo& m) { return m.ready; })),
      target_(MembersWhere(*view_, [](const MemberInfo& m) { return !m.draining; })) {
  moving_ = std::any_of(view_->members.begin(), view_->members.end(),
                        [](const MemberInfo& m) { return !m.ready || m.draining; });
}

std::vector<const MemberInfo*> Ownership::Owners(std::string_view bucket,
                                                 std::string_view key) const {
  std::vector<const MemberInfo*> owners;
  auto add = [&](const Placement& placement) {
    for (const std::size_t index : placement.Owners(bucket, key, replicas_)) {
      const MemberInfo* member = view_->Find(placement.members()[index].node);
      if (std::find(owners.begin(), owners.end(), member) == owners.end()) {
        owners.push_back(member);
      }
    }
  };
  add(serving_);
  if (moving_) {
    // Otherwise both placements are over the same members: the same owners.
    add(target_);
  }
  return owners;
}

std::vector<std::string> Ownership::OwnerNames(std::string_view bucket,
                                               std::string_view key) const {
  std::vector<std::string> names;
  for (const MemberInfo* owner : Owners(bucket, key)) {
    names.push_back(owner->node);
  }
  return names;
}

}  // namespace strata::storage
