// Ownership: a key's owners under one membership view, with joins and drains in flight
// (DESIGN.md "Cluster": membership changes move only the keys whose owners changed, in the
// background, while old and new owners both answer). A pure function of the view, so
// every gateway that knows the same view names the same owners, and the repair scan can
// compare the owners of two views.
//
// Two placements (storage/placement.h) over the view's members:
//   serving  the members that are ready (MemberInfo::ready): the key's owners as they
//            hold it now; the first is its primary.
//   target   the members that are not draining (MemberInfo::draining): the owners the key
//            is moving to.
// A key's owners are its serving owners, primary first, then those of its target owners
// that are not among them, as extra replicas. So while a member joins (not ready yet) it
// receives every change of the keys it will own but answers for none, and the members
// that held them keep serving them; a member being drained stays a serving owner until
// its keys' target owners hold them, then announces itself not ready and owns nothing.
// With no member ready (a cluster starting), the target owners alone.
//
// Thread-safe: immutable once made.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/membership.h"
#include "storage/placement.h"

namespace strata::storage {

class Ownership {
 public:
  // `view` must not be null.
  Ownership(std::shared_ptr<const MembershipView> view, std::size_t replicas);

  const MembershipView& view() const { return *view_; }
  std::size_t replicas() const { return replicas_; }

  // The key's owners as members of view(), primary first (see above). Empty only when
  // the view has no member.
  std::vector<const MemberInfo*> Owners(std::string_view bucket, std::string_view key) const;
  // Their node names, in the same order.
  std::vector<std::string> OwnerNames(std::string_view bucket, std::string_view key) const;

  // Whether a join or a drain is in flight: a member not ready, or draining.
  bool Moving() const { return moving_; }

 private:
  std::shared_ptr<const MembershipView> view_;
  std::size_t replicas_;
  Placement serving_;
  Placement target_;
  bool moving_ = false;
};

}  // namespace strata::storage
