#include "metadata/object_lock.h"

#include <gtest/gtest.h>

namespace strata::metadata {
namespace {

ObjectRecord Version(std::string mode, std::int64_t until_ms, bool hold = false) {
  ObjectRecord v;
  v.retention_mode = std::move(mode);
  v.retain_until_ms = until_ms;
  v.legal_hold = hold;
  return v;
}

bool Removable(const ObjectRecord& v, std::int64_t now, bool bypass) {
  auto r = CheckRemovable(v, LockCheck{now, bypass});
  if (!r.ok()) {
    EXPECT_EQ(r.error().code, ErrorCode::kAccessDenied);
  }
  return r.ok();
}

TEST(ObjectLock, WhatMayBeRemoved) {
  EXPECT_TRUE(Removable(Version("", 0), 100, false));
  EXPECT_FALSE(Removable(Version("", 0, true), 100, true));  // a hold binds everyone
  EXPECT_FALSE(Removable(Version("COMPLIANCE", 200), 100, true));
  EXPECT_TRUE(Removable(Version("COMPLIANCE", 200), 200, false));  // expired at its date
  EXPECT_FALSE(Removable(Version("GOVERNANCE", 200), 100, false));
  EXPECT_TRUE(Removable(Version("GOVERNANCE", 200), 100, true));
  // Without a time, every retention counts as in force.
  EXPECT_FALSE(Removable(Version("GOVERNANCE", 1), 0, false));
  EXPECT_TRUE(IsLocked(Version("", 0, true), 100));
  EXPECT_TRUE(IsLocked(Version("GOVERNANCE", 200), 100));
  EXPECT_FALSE(IsLocked(Version("GOVERNANCE", 200), 300));
}

bool Changeable(const ObjectRecord& v, std::string_view mode, std::int64_t until, bool bypass) {
  return CheckRetentionChange(v, mode, until, LockCheck{100, bypass}).ok();
}

TEST(ObjectLock, AComplianceRetentionIsNeverWeakened) {
  const auto v = Version("COMPLIANCE", 200);
  EXPECT_TRUE(Changeable(v, "COMPLIANCE", 200, false));
  EXPECT_TRUE(Changeable(v, "COMPLIANCE", 300, false));
  EXPECT_FALSE(Changeable(v, "COMPLIANCE", 150, true));
  EXPECT_FALSE(Changeable(v, "GOVERNANCE", 300, true));
  EXPECT_FALSE(Changeable(v, "", 0, true));
  // Once past its date it is no retention at all.
  EXPECT_TRUE(CheckRetentionChange(v, "", 0, LockCheck{250, false}).ok());
}

TEST(ObjectLock, AGovernanceRetentionGivesWayToTheBypassOnly) {
  const auto v = Version("GOVERNANCE", 200);
  EXPECT_TRUE(Changeable(v, "GOVERNANCE", 300, false));
  EXPECT_FALSE(Changeable(v, "COMPLIANCE", 300, false));  // a change of mode: the bypass's
  EXPECT_TRUE(Changeable(v, "COMPLIANCE", 200, true));
  EXPECT_FALSE(Changeable(v, "GOVERNANCE", 150, false));
  EXPECT_FALSE(Changeable(v, "", 0, false));
  EXPECT_TRUE(Changeable(v, "GOVERNANCE", 150, true));
  EXPECT_TRUE(Changeable(v, "", 0, true));
  EXPECT_TRUE(Changeable(Version("", 0), "GOVERNANCE", 150, false));
}

}  // namespace
}  // namespace strata::metadata
