// Lifecycle rule evaluation (metadata/lifecycle.h), the lifecycle queue's row keys
// (metadata/keys.h) and the rules' encoding in bucket records (metadata/codec.h).
//
// A lifecycle "day" is 1000 ms here, so due times stay small and their rounding up to
// the next day boundary is easy to check by hand.
#include "metadata/lifecycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "metadata/codec.h"
#include "metadata/keys.h"

namespace strata::metadata {
namespace {

using namespace std::string_literals;

constexpr std::int64_t kDay = 1000;
constexpr std::int64_t kMinMs = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxMs = std::numeric_limits<std::int64_t>::max();

ObjectRecord Version(const std::string& key, const std::string& id, std::int64_t modified_ms) {
  ObjectRecord v;
  v.bucket = BucketName("b");
  v.key = ObjectKey(key);
  v.version_id = VersionId(id);
  v.size = 100;
  v.etag = "etag-" + id;
  v.last_modified_ms = modified_ms;
  return v;
}

ObjectRecord Marker(const std::string& key, const std::string& id, std::int64_t modified_ms) {
  ObjectRecord v = Version(key, id, modified_ms);
  v.delete_marker = true;
  v.size = 0;
  v.etag.clear();
  return v;
}

LifecycleRule ExpireAfter(std::int64_t days) {
  LifecycleRule rule;
  rule.id = "expire-" + std::to_string(days);
  rule.expiration_days = days;
  return rule;
}

LifecycleTransition Transition(std::optional<std::int64_t> days,
                               std::optional<std::int64_t> date_ms, std::string storage_class) {
  LifecycleTransition t;
  t.days = days;
  t.date_ms = date_ms;
  t.storage_class = std::move(storage_class);
  return t;
}

NoncurrentTransition Noncurrent(std::int64_t days, std::optional<std::int64_t> newer,
                                std::string storage_class) {
  NoncurrentTransition t;
  t.noncurrent_days = days;
  t.newer_noncurrent_versions = newer;
  t.storage_class = std::move(storage_class);
  return t;
}

// Hot to cold, as the worker ranks its classes.
int Rank(std::string_view storage_class) {
  static constexpr std::string_view kOrder[] = {"STANDARD", "STANDARD_IA", "GLACIER",
                                                "DEEP_ARCHIVE"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), storage_class);
  return static_cast<int>(it - std::begin(kOrder));
}

// The action of kind `action` (and class, for transitions) in `actions`, if any.
std::optional<DueAction> Find(const std::vector<DueAction>& actions, LifecycleAction action,
                              const std::string& storage_class = "") {
  for (const auto& a : actions) {
    if (a.action == action && a.storage_class == storage_class) {
      return a;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Filters.

TEST(LifecycleRulesTest, PrefixFilterSelectsKeysStartingWithIt) {
  LifecycleRule rule = ExpireAfter(1);
  rule.filter.prefix = "logs/";
  EXPECT_TRUE(RuleSelects(rule, Version("logs/a", "v", 0)));
  EXPECT_TRUE(RuleSelects(rule, Version("logs/", "v", 0)));
  EXPECT_FALSE(RuleSelects(rule, Version("logs", "v", 0)));
  EXPECT_FALSE(RuleSelects(rule, Version("data/logs/a", "v", 0)));
  EXPECT_TRUE(VersionActions({rule}, {Version("data/a", "v", 0)}, 0, kDay, ClassRank()).empty());
  EXPECT_EQ(VersionActions({rule}, {Version("logs/a", "v", 0)}, 0, kDay, ClassRank()).size(), 1u);

  // An empty prefix and no prefix at all select every key.
  rule.filter.prefix = "";
  EXPECT_TRUE(RuleSelects(rule, Version("anything", "v", 0)));
  rule.filter.prefix.reset();
  EXPECT_TRUE(RuleSelects(rule, Version("anything", "v", 0)));
}

TEST(LifecycleRulesTest, TagFilterNeedsEveryTagWithItsValue) {
  LifecycleRule rule = ExpireAfter(1);
  rule.filter.tags = {{"team", "ml"}, {"tier", "cold"}};
  ObjectRecord v = Version("k", "v", 0);
  v.tags = {{"tier", "cold"}, {"other", "x"}, {"team", "ml"}};
  EXPECT_TRUE(RuleSelects(rule, v));
  v.tags = {{"team", "ml"}};
  EXPECT_FALSE(RuleSelects(rule, v));
  v.tags = {{"team", "ML"}, {"tier", "cold"}};
  EXPECT_FALSE(RuleSelects(rule, v)) << "values must match exactly";
  v.tags.clear();
  EXPECT_FALSE(RuleSelects(rule, v));

  // A delete marker has no tags: a tag filter never selects one, whatever its record says.
  ObjectRecord marker = Marker("k", "dm", 0);
  marker.tags = {{"team", "ml"}, {"tier", "cold"}};
  EXPECT_FALSE(RuleSelects(rule, marker));
}

TEST(LifecycleRulesTest, SizeFiltersAreStrictAndNeverSelectDeleteMarkers) {
  LifecycleRule rule = ExpireAfter(1);
  ObjectRecord v = Version("k", "v", 0);
  rule.filter.size_greater_than = 100;
  v.size = 100;
  EXPECT_FALSE(RuleSelects(rule, v));
  v.size = 101;
  EXPECT_TRUE(RuleSelects(rule, v));

  rule.filter.size_greater_than.reset();
  rule.filter.size_less_than = 200;
  v.size = 199;
  EXPECT_TRUE(RuleSelects(rule, v));
  v.size = 200;
  EXPECT_FALSE(RuleSelects(rule, v));

  rule.filter.size_greater_than = 100;
  v.size = 150;
  EXPECT_TRUE(RuleSelects(rule, v));
  v.size = 250;
  EXPECT_FALSE(RuleSelects(rule, v));

  // A marker's size of 0 is no size: "less than 1000" does not select it.
  rule.filter.size_greater_than.reset();
  rule.filter.size_less_than = 1000;
  EXPECT_FALSE(RuleSelects(rule, Marker("k", "dm", 0)));
  rule.filter.size_less_than.reset();
  rule.filter.size_greater_than = 0;
  EXPECT_FALSE(RuleSelects(rule, Marker("k", "dm", 0)));

  // Without tag or size predicates a marker is selected like any version.
  rule.filter.size_greater_than.reset();
  rule.filter.prefix = "k";
  EXPECT_TRUE(RuleSelects(rule, Marker("k", "dm", 0)));
}

TEST(LifecycleRulesTest, DisabledRulesAreIgnored) {
  LifecycleRule rule = ExpireAfter(1);
  rule.abort_incomplete_days = 1;
  rule.noncurrent_expiration_days = 1;
  rule.enabled = false;
  const std::vector<LifecycleRule> rules = {rule};
  const std::vector<ObjectRecord> versions = {Version("k", "v2", 5000), Version("k", "v1", 0)};
  EXPECT_TRUE(VersionActions(rules, versions, 0, kDay, ClassRank()).empty());
  EXPECT_TRUE(VersionActions(rules, versions, 1, kDay, ClassRank()).empty());
  EXPECT_FALSE(NextKeyDue(rules, versions, kMinMs, kDay, ClassRank()).has_value());
  UploadRecord upload;
  upload.object = Version("k", "null", 0);
  upload.initiated_ms = 1500;
  EXPECT_FALSE(UploadAbortDue(rules, upload, kDay).has_value());
}

// ---------------------------------------------------------------------------------------
// Current versions.

TEST(LifecycleRulesTest, ExpirationDaysRoundUpToTheNextDayBoundary) {
  const std::vector<LifecycleRule> rules = {ExpireAfter(1)};
  // 1500 + one day = 2500, which S3 would round up to the next midnight: 3000.
  auto actions = VersionActions(rules, {Version("k", "v", 1500)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 3000);
  EXPECT_EQ(actions[0].action, LifecycleAction::kExpire);
  EXPECT_TRUE(actions[0].storage_class.empty());

  // Already on a boundary: no rounding.
  actions = VersionActions(rules, {Version("k", "v", 2000)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 3000);
  // Just past one: the whole next day.
  actions = VersionActions(rules, {Version("k", "v", 2001)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 4000);
  actions = VersionActions({ExpireAfter(3)}, {Version("k", "v", 0)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 3000);
}

TEST(LifecycleRulesTest, ExpirationByDateIsNeverBeforeTheVersion) {
  LifecycleRule rule;
  rule.id = "by-date";
  rule.expiration_date_ms = 5000;
  auto actions = VersionActions({rule}, {Version("k", "v", 1500)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kExpire);
  EXPECT_EQ(actions[0].due_ms, 5000);
  // A version written after the date is due as soon as it exists.
  actions = VersionActions({rule}, {Version("k", "v", 7000)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 7000);
}

TEST(LifecycleRulesTest, TransitionsSkipVersionsAlreadyAsColdOrColder) {
  LifecycleRule rule;
  rule.id = "tiers";
  rule.transitions = {Transition(1, std::nullopt, "STANDARD_IA"),
                      Transition(3, std::nullopt, "GLACIER")};
  ObjectRecord v = Version("k", "v", 1500);

  auto actions = VersionActions({rule}, {v}, 0, kDay, Rank);
  ASSERT_EQ(actions.size(), 2u);
  auto ia = Find(actions, LifecycleAction::kTransition, "STANDARD_IA");
  auto glacier = Find(actions, LifecycleAction::kTransition, "GLACIER");
  ASSERT_TRUE(ia && glacier);
  EXPECT_EQ(ia->due_ms, 3000);       // 1500 + 1000, rounded up
  EXPECT_EQ(glacier->due_ms, 5000);  // 1500 + 3000, rounded up

  v.storage_class = "STANDARD_IA";  // same class as the first target: not colder
  actions = VersionActions({rule}, {v}, 0, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].storage_class, "GLACIER");

  v.storage_class = "GLACIER";
  EXPECT_TRUE(VersionActions({rule}, {v}, 0, kDay, Rank).empty());
  v.storage_class = "DEEP_ARCHIVE";
  EXPECT_TRUE(VersionActions({rule}, {v}, 0, kDay, Rank).empty());

  // Without a rank every transition counts.
  EXPECT_EQ(VersionActions({rule}, {v}, 0, kDay, ClassRank()).size(), 2u);
}

TEST(LifecycleRulesTest, TransitionByDateIsNeverBeforeTheVersion) {
  LifecycleRule rule;
  rule.id = "by-date";
  rule.transitions = {Transition(std::nullopt, 4000, "GLACIER")};
  auto actions = VersionActions({rule}, {Version("k", "v", 1500)}, 0, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kTransition);
  EXPECT_EQ(actions[0].due_ms, 4000);
  EXPECT_EQ(actions[0].storage_class, "GLACIER");
  actions = VersionActions({rule}, {Version("k", "v", 4500)}, 0, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].due_ms, 4500);
}

TEST(LifecycleRulesTest, ExpiredObjectDeleteMarkerOnlyWhenTheMarkerIsAlone) {
  LifecycleRule rule;
  rule.id = "markers";
  rule.expired_object_delete_marker = true;
  auto actions = VersionActions({rule}, {Marker("k", "dm", 1500)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kRemoveDeleteMarker);
  EXPECT_EQ(actions[0].due_ms, 1500);  // nothing to wait for

  // A marker over an older version still hides it: it stays.
  const std::vector<ObjectRecord> hiding = {Marker("k", "dm", 1500), Version("k", "v1", 1000)};
  EXPECT_TRUE(VersionActions({rule}, hiding, 0, kDay, ClassRank()).empty());
  EXPECT_TRUE(VersionActions({rule}, hiding, 1, kDay, ClassRank()).empty());
  EXPECT_FALSE(NextKeyDue({rule}, hiding, kMinMs, kDay, ClassRank()).has_value());

  // A plain version is not a delete marker.
  EXPECT_TRUE(VersionActions({rule}, {Version("k", "v", 1500)}, 0, kDay, ClassRank()).empty());
}

TEST(LifecycleRulesTest, ExpirationDaysRemoveALoneMarkerButNeverExpireOne) {
  const std::vector<LifecycleRule> rules = {ExpireAfter(1)};
  auto actions = VersionActions(rules, {Marker("k", "dm", 1500)}, 0, kDay, ClassRank());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kRemoveDeleteMarker);
  EXPECT_EQ(actions[0].due_ms, 3000);
  // A current marker with older versions under it is not expired again.
  const std::vector<ObjectRecord> hiding = {Marker("k", "dm", 1500), Version("k", "v1", 1000)};
  EXPECT_TRUE(VersionActions(rules, hiding, 0, kDay, ClassRank()).empty());
}

// ---------------------------------------------------------------------------------------
// Noncurrent versions.

TEST(LifecycleRulesTest, NoncurrentActionsCountFromTheNewerVersionsTime) {
  LifecycleRule rule;
  rule.id = "noncurrent";
  rule.noncurrent_expiration_days = 1;
  rule.noncurrent_transitions = {Noncurrent(2, std::nullopt, "GLACIER")};
  const std::vector<ObjectRecord> versions = {Version("k", "v2", 5200), Version("k", "v1", 1000)};

  // The current version gets none of a rule's noncurrent actions.
  EXPECT_TRUE(VersionActions({rule}, versions, 0, kDay, Rank).empty());

  // v1 became noncurrent when v2 was written, at 5200: not at its own 1000.
  auto actions = VersionActions({rule}, versions, 1, kDay, Rank);
  ASSERT_EQ(actions.size(), 2u);
  auto expire = Find(actions, LifecycleAction::kNoncurrentExpire);
  auto move = Find(actions, LifecycleAction::kNoncurrentTransition, "GLACIER");
  ASSERT_TRUE(expire && move);
  EXPECT_EQ(expire->due_ms, 7000);  // 5200 + 1000 = 6200, rounded up
  EXPECT_EQ(move->due_ms, 8000);    // 5200 + 2000 = 7200, rounded up

  // A noncurrent version already in the target class is not moved again.
  std::vector<ObjectRecord> cold = versions;
  cold[1].storage_class = "GLACIER";
  actions = VersionActions({rule}, cold, 1, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kNoncurrentExpire);

  // Out of range, or a day that is no length: nothing.
  EXPECT_TRUE(VersionActions({rule}, versions, 2, kDay, Rank).empty());
  EXPECT_TRUE(VersionActions({rule}, versions, 1, 0, Rank).empty());
}

TEST(LifecycleRulesTest, NoncurrentDeleteMarkersExpireButAreNeverMoved) {
  LifecycleRule rule;
  rule.id = "noncurrent";
  rule.noncurrent_expiration_days = 1;
  rule.noncurrent_transitions = {Noncurrent(2, std::nullopt, "GLACIER")};
  const std::vector<ObjectRecord> versions = {Version("k", "v3", 6000), Marker("k", "dm", 5200),
                                              Version("k", "v1", 1000)};
  auto actions = VersionActions({rule}, versions, 1, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kNoncurrentExpire);
  EXPECT_EQ(actions[0].due_ms, 7000);  // since v3: 6000 + 1000

  // v1 became noncurrent under the marker, at 5200.
  actions = VersionActions({rule}, versions, 2, kDay, Rank);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(Find(actions, LifecycleAction::kNoncurrentExpire).value().due_ms, 7000);
  EXPECT_EQ(Find(actions, LifecycleAction::kNoncurrentTransition, "GLACIER").value().due_ms, 8000);
}

TEST(LifecycleRulesTest, NewerNoncurrentVersionsKeepThatManyNoncurrentVersions) {
  LifecycleRule rule;
  rule.id = "keep-two";
  rule.noncurrent_expiration_days = 1;
  rule.noncurrent_newer_versions = 2;
  rule.noncurrent_transitions = {Noncurrent(1, 1, "GLACIER")};
  // Newest first: the current version, then three noncurrent ones.
  const std::vector<ObjectRecord> versions = {Version("k", "cur", 4000), Version("k", "n1", 3000),
                                              Version("k", "n2", 2000), Version("k", "n3", 1000)};

  // n1 has no noncurrent version newer than itself: it is kept as it is.
  EXPECT_TRUE(VersionActions({rule}, versions, 1, kDay, Rank).empty());

  // n2 has one (n1): moved (1 newer needed) but kept (2 needed).
  auto actions = VersionActions({rule}, versions, 2, kDay, Rank);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].action, LifecycleAction::kNoncurrentTransition);
  EXPECT_EQ(actions[0].due_ms, 4000);  // since n1 at 3000, plus a day

  // n3 has two (n1, n2): moved and expired, counting from n2's time.
  actions = VersionActions({rule}, versions, 3, kDay, Rank);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(Find(actions, LifecycleAction::kNoncurrentExpire).value().due_ms, 3000);
  EXPECT_EQ(Find(actions, LifecycleAction::kNoncurrentTransition, "GLACIER").value().due_ms, 3000);
}

// ---------------------------------------------------------------------------------------
// NextKeyDue and UploadAbortDue.

TEST(LifecycleRulesTest, NextKeyDueIsTheEarliestDueTimeStrictlyAfter) {
  LifecycleRule rule = ExpireAfter(5);
  rule.transitions = {Transition(1, std::nullopt, "STANDARD_IA"),
                      Transition(3, std::nullopt, "GLACIER")};
  const std::vector<LifecycleRule> rules = {rule};
  const std::vector<ObjectRecord> versions = {Version("k", "v", 1500)};
  // Due: IA at 3000, GLACIER at 5000, expiration at 7000.
  EXPECT_EQ(NextKeyDue(rules, versions, kMinMs, kDay, Rank), 3000);
  EXPECT_EQ(NextKeyDue(rules, versions, 2999, kDay, Rank), 3000);
  EXPECT_EQ(NextKeyDue(rules, versions, 3000, kDay, Rank), 5000);
  EXPECT_EQ(NextKeyDue(rules, versions, 4999, kDay, Rank), 5000);
  EXPECT_EQ(NextKeyDue(rules, versions, 5000, kDay, Rank), 7000);
  EXPECT_FALSE(NextKeyDue(rules, versions, 7000, kDay, Rank).has_value());

  // The rank drops transitions that would not move the version colder.
  std::vector<ObjectRecord> cold = versions;
  cold[0].storage_class = "GLACIER";
  EXPECT_EQ(NextKeyDue(rules, cold, kMinMs, kDay, Rank), 7000);

  EXPECT_FALSE(NextKeyDue(rules, {}, kMinMs, kDay, Rank).has_value());
  EXPECT_FALSE(NextKeyDue({}, versions, kMinMs, kDay, Rank).has_value());
}

TEST(LifecycleRulesTest, NextKeyDueLooksAtEveryVersion) {
  LifecycleRule rule = ExpireAfter(10);
  rule.noncurrent_expiration_days = 1;
  const std::vector<ObjectRecord> versions = {Version("k", "v2", 5200), Version("k", "v1", 1000)};
  // v2 expires at 15200 -> 16000; v1, noncurrent since 5200, at 6200 -> 7000.
  EXPECT_EQ(NextKeyDue({rule}, versions, kMinMs, kDay, ClassRank()), 7000);
  EXPECT_EQ(NextKeyDue({rule}, versions, 7000, kDay, ClassRank()), 16000);
}

TEST(LifecycleRulesTest, UploadAbortDueTakesTheEarliestRuleByPrefix) {
  LifecycleRule tmp;
  tmp.id = "tmp";
  tmp.filter.prefix = "tmp/";
  tmp.abort_incomplete_days = 1;
  LifecycleRule all;
  all.id = "all";
  all.abort_incomplete_days = 5;
  LifecycleRule disabled = tmp;
  disabled.id = "disabled";
  disabled.abort_incomplete_days = 0;  // would win, were it enabled
  disabled.enabled = false;
  LifecycleRule no_abort = ExpireAfter(1);
  no_abort.filter.prefix = "tmp/";

  UploadRecord upload;
  upload.upload_id = UploadId("u1");
  upload.initiated_ms = 1500;
  upload.object = Version("tmp/x", "null", 0);

  const std::vector<LifecycleRule> rules = {all, tmp, disabled, no_abort};
  EXPECT_EQ(UploadAbortDue(rules, upload, kDay), 3000);  // 1500 + 1000, rounded up
  upload.object.key = ObjectKey("other/x");
  EXPECT_EQ(UploadAbortDue(rules, upload, kDay), 7000);  // 1500 + 5000, rounded up
  EXPECT_FALSE(UploadAbortDue({tmp, disabled, no_abort}, upload, kDay).has_value());
  upload.object.key = ObjectKey("tmp/x");
  EXPECT_FALSE(UploadAbortDue({no_abort}, upload, kDay).has_value());
  EXPECT_FALSE(UploadAbortDue(rules, upload, 0).has_value());
}

// ---------------------------------------------------------------------------------------
// Row keys of the lifecycle queue.

void ExpectSameRow(const LifecycleRow& got, const LifecycleRow& want) {
  EXPECT_EQ(got.due_ms, want.due_ms);
  EXPECT_EQ(got.bucket, want.bucket);
  EXPECT_EQ(got.key, want.key);
  EXPECT_EQ(got.upload_id, want.upload_id);
}

TEST(LifecycleKeysTest, KeyAndUploadRowsRoundTrip) {
  const LifecycleRow rows[] = {
      {0, "b", "k", ""},
      {1234, "bucket", "a/b/c", ""},
      {1'700'000'000'000, "bucket", "photos/2024/x.jpg", "0190000000001234567890abcdef0123"},
      {kMaxMs, "b", "k k", "u"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.key + " " + row.upload_id);
    const std::string encoded = LifecycleRowKey(row);
    EXPECT_TRUE(std::string_view(encoded).starts_with(kLifecycleRowPrefix));
    auto parsed = ParseLifecycleRowKey(encoded);
    ASSERT_TRUE(parsed.has_value());
    ExpectSameRow(*parsed, row);
  }
  // A due time before the epoch is queued as due at once.
  auto early = ParseLifecycleRowKey(LifecycleRowKey({-5, "b", "k", ""}));
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->due_ms, 0);
}

TEST(LifecycleKeysTest, RowsSortByDueTime) {
  const std::int64_t dues[] = {0, 1, 255, 256, 65'536, 1LL << 40, 1'700'000'000'000, kMaxMs};
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < std::size(dues); ++i) {
    // Buckets descending and kinds mixed, so only the due time can put them in order.
    const std::string bucket(1, static_cast<char>('z' - i));
    keys.push_back(LifecycleRowKey({dues[i], bucket, "k", i % 2 == 0 ? "" : "u"}));
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_LT(LifecycleRowKey({-1, "z", "z", ""}), LifecycleRowKey({1, "a", "a", ""}));

  // The reseed marks live under a prefix of their own.
  EXPECT_EQ(ReseedRowKey("photos"), "r\0photos"s);
  EXPECT_FALSE(ReseedRowKey("photos").starts_with(kLifecycleRowPrefix));
}

TEST(LifecycleKeysTest, ParseRejectsGarbage) {
  const std::string due(8, '\0');
  const std::string bad[] = {
      "",
      "l",
      "w\0"s + due + "kb\0k"s,                     // the write-back queue's prefix
      "r\0b"s,                                     // a reseed mark
      "l\0"s + std::string(7, '\0'),               // too short for a due time
      "l\0"s + due,                                // no kind
      "l\0"s + due + "xb\0k"s,                     // unknown kind
      "l\0"s + due + "K" + "b\0k"s,                // kinds are lower case
      "l\0"s + due + "kbk",                        // no separator after the bucket
      "l\0"s + due + "k\0k"s,                      // empty bucket
      "l\0"s + due + "ub\0k"s,                     // upload row without its upload id
      "l\0"s + due + "ub\0k\0"s,                   // empty upload id
      "l\0"s + std::string(8, '\xff') + "kb\0k"s,  // due time beyond int64
  };
  for (std::size_t i = 0; i < std::size(bad); ++i) {
    EXPECT_FALSE(ParseLifecycleRowKey(bad[i]).has_value()) << "case " << i;
  }
  // Every truncation of a valid upload row fails (or is not an upload row any more).
  const std::string upload = LifecycleRowKey({42, "bucket", "key", "upload"});
  for (std::size_t n = 0; n < upload.size(); ++n) {
    auto parsed = ParseLifecycleRowKey(std::string_view(upload).substr(0, n));
    EXPECT_TRUE(!parsed || parsed->upload_id != "upload") << n;
  }
  // Random bytes: a third bare, a third behind the right prefix, a third behind the prefix,
  // a due time and a kind, with separators among them. Whatever parses is the row those
  // bytes encode (a round trip), so a parser that reads past or around a byte fails here.
  std::mt19937_64 rng(99);
  int parsed_rows = 0;
  for (int i = 0; i < 6000; ++i) {
    std::string buf;
    if (i % 3 != 0) {
      buf = std::string(kLifecycleRowPrefix);
    }
    if (i % 3 == 2) {
      buf.push_back(static_cast<char>(rng() % 0x80));  // the due time's high byte, <= INT64_MAX
      for (int j = 0; j < 7; ++j) {
        buf.push_back(static_cast<char>(rng()));
      }
      buf.push_back(rng() % 2 == 0 ? 'k' : 'u');
    }
    const std::size_t random_bytes = rng() % 24;
    for (std::size_t j = 0; j < random_bytes; ++j) {
      buf.push_back(rng() % 4 == 0 ? '\0' : static_cast<char>(rng()));
    }
    auto row = ParseLifecycleRowKey(buf);
    if (row) {
      ++parsed_rows;
      EXPECT_FALSE(row->bucket.empty()) << "input " << i;
      EXPECT_GE(row->due_ms, 0) << "input " << i;
      EXPECT_EQ(LifecycleRowKey(*row), buf) << "input " << i;
    }
  }
  EXPECT_GT(parsed_rows, 500);  // the round trip ran, not only the refusals
}

// ---------------------------------------------------------------------------------------
// Bucket records with rules (format 5).

void ExpectSameRule(const LifecycleRule& got, const LifecycleRule& want) {
  SCOPED_TRACE("rule " + want.id);
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.enabled, want.enabled);
  EXPECT_EQ(got.filter.form, want.filter.form);
  EXPECT_EQ(got.filter.prefix, want.filter.prefix);
  EXPECT_EQ(got.filter.tags, want.filter.tags);
  EXPECT_EQ(got.filter.size_greater_than, want.filter.size_greater_than);
  EXPECT_EQ(got.filter.size_less_than, want.filter.size_less_than);
  ASSERT_EQ(got.transitions.size(), want.transitions.size());
  for (std::size_t i = 0; i < want.transitions.size(); ++i) {
    EXPECT_EQ(got.transitions[i].days, want.transitions[i].days) << i;
    EXPECT_EQ(got.transitions[i].date_ms, want.transitions[i].date_ms) << i;
    EXPECT_EQ(got.transitions[i].storage_class, want.transitions[i].storage_class) << i;
  }
  ASSERT_EQ(got.noncurrent_transitions.size(), want.noncurrent_transitions.size());
  for (std::size_t i = 0; i < want.noncurrent_transitions.size(); ++i) {
    const auto& g = got.noncurrent_transitions[i];
    const auto& w = want.noncurrent_transitions[i];
    EXPECT_EQ(g.noncurrent_days, w.noncurrent_days) << i;
    EXPECT_EQ(g.newer_noncurrent_versions, w.newer_noncurrent_versions) << i;
    EXPECT_EQ(g.storage_class, w.storage_class) << i;
  }
  EXPECT_EQ(got.expiration_days, want.expiration_days);
  EXPECT_EQ(got.expiration_date_ms, want.expiration_date_ms);
  EXPECT_EQ(got.expired_object_delete_marker, want.expired_object_delete_marker);
  EXPECT_EQ(got.noncurrent_expiration_days, want.noncurrent_expiration_days);
  EXPECT_EQ(got.noncurrent_newer_versions, want.noncurrent_newer_versions);
  EXPECT_EQ(got.abort_incomplete_days, want.abort_incomplete_days);
}

BucketRecord BucketWithRules() {
  BucketRecord b;
  b.name = BucketName("photos");
  b.owner = "AKIA";
  b.created_ms = 1'700'000'000'000;
  b.region = "eu-west-1";
  b.versioning = "Enabled";
  b.tags = {{"team", "ml"}};
  b.upstream_tier = "cold";
  b.upstream_bucket = "photos-archive";

  // Every field set, in the And form.
  LifecycleRule archive;
  archive.id = "archive";
  archive.filter.form = LifecycleFilter::Form::kAnd;
  archive.filter.prefix = "raw/";
  archive.filter.tags = {{"tier", "cold"}, {"caf\xc3\xa9", ""}};
  archive.filter.size_greater_than = 1024;
  archive.filter.size_less_than = std::uint64_t{1} << 40;
  archive.transitions = {Transition(30, std::nullopt, "STANDARD_IA"),
                         Transition(90, std::nullopt, "GLACIER")};
  archive.noncurrent_transitions = {Noncurrent(30, 2, "STANDARD_IA"),
                                    Noncurrent(60, std::nullopt, "DEEP_ARCHIVE")};
  archive.expiration_days = 365;
  archive.noncurrent_expiration_days = 400;
  archive.noncurrent_newer_versions = 5;

  // Disabled, the old rule-level Prefix (present but empty), dates (one before the epoch,
  // for the signed encoding), the delete-marker flag and an abort.
  LifecycleRule cleanup;
  cleanup.id = "";
  cleanup.enabled = false;
  cleanup.filter.form = LifecycleFilter::Form::kRulePrefix;
  cleanup.filter.prefix = "";
  cleanup.transitions = {Transition(std::nullopt, -86'400'000, "GLACIER"),
                         Transition(std::nullopt, 1'767'225'600'000, "DEEP_ARCHIVE")};
  cleanup.noncurrent_transitions = {Noncurrent(0, std::nullopt, "GLACIER_IR")};
  cleanup.expiration_date_ms = 1'798'761'600'000;
  cleanup.expired_object_delete_marker = true;
  cleanup.noncurrent_expiration_days = 1;
  cleanup.noncurrent_newer_versions = 100;
  cleanup.abort_incomplete_days = 7;

  b.lifecycle = {archive, cleanup};
  return b;
}

TEST(LifecycleCodecTest, BucketWithRulesRoundTrips) {
  const BucketRecord b = BucketWithRules();
  auto decoded = DecodeBucket(EncodeBucket(b));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->name, b.name);
  EXPECT_EQ(decoded->owner, b.owner);
  EXPECT_EQ(decoded->created_ms, b.created_ms);
  EXPECT_EQ(decoded->region, b.region);
  EXPECT_EQ(decoded->versioning, b.versioning);
  EXPECT_EQ(decoded->tags, b.tags);
  EXPECT_EQ(decoded->upstream_tier, b.upstream_tier);
  EXPECT_EQ(decoded->upstream_bucket, b.upstream_bucket);
  ASSERT_EQ(decoded->lifecycle.size(), 2u);
  ExpectSameRule(decoded->lifecycle[0], b.lifecycle[0]);
  ExpectSameRule(decoded->lifecycle[1], b.lifecycle[1]);
}

// The smallest rule there is (every optional absent) still fits the count's size check.
TEST(LifecycleCodecTest, DefaultRuleRoundTrips) {
  BucketRecord b{BucketName("b"), "o", 1, ""};
  b.lifecycle = {LifecycleRule(), LifecycleRule()};
  auto decoded = DecodeBucket(EncodeBucket(b));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(decoded->lifecycle.size(), 2u);
  ExpectSameRule(decoded->lifecycle[0], LifecycleRule());
  ExpectSameRule(decoded->lifecycle[1], LifecycleRule());
  EXPECT_FALSE(decoded->lifecycle[0].filter.prefix.has_value()) << "absent, not empty";
}

TEST(LifecycleCodecTest, EveryTruncationIsCorruption) {
  const std::string full = EncodeBucket(BucketWithRules());
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto r = DecodeBucket(std::string_view(full).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.error().code, ErrorCode::kCorruption) << n;
  }
  auto trailing = DecodeBucket(full + "x");
  ASSERT_FALSE(trailing.ok());
  EXPECT_EQ(trailing.error().code, ErrorCode::kCorruption);
}

TEST(LifecycleCodecTest, FormatFourStillDecodesWithoutRules) {
  BucketRecord b{BucketName("b"), "o", 1, "", "Enabled", {{"k", "v"}}};
  b.upstream_tier = "cold";
  b.upstream_bucket = "up";
  std::string bytes = EncodeBucket(b);
  // Format 7's ACL and lock (no grants, lock off, no mode, no days, no years) last,
  // format 6's access settings (two empty strings, no flags, an empty string) before
  // them, and format 5's rule count before those.
  ASSERT_EQ(bytes.substr(bytes.size() - 10), std::string(10, '\0'));
  bytes.resize(bytes.size() - 10);
  bytes[0] = 4;
  auto decoded = DecodeBucket(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_TRUE(decoded->lifecycle.empty());
  EXPECT_EQ(decoded->upstream_bucket, "up");
  EXPECT_EQ(decoded->tags, b.tags);
}

TEST(LifecycleCodecTest, BadFlagAndFormBytesAreCorruption) {
  BucketRecord b{BucketName("b"), "o", 1, ""};
  // Where the rule count goes: before format 6's four bytes of empty access settings and
  // format 7's five of an empty ACL and no lock.
  const std::size_t count_at = EncodeBucket(b).size() - 10;
  LifecycleRule rule;
  rule.id = "x";
  b.lifecycle = {rule};
  const std::string bytes = EncodeBucket(b);
  ASSERT_TRUE(DecodeBucket(bytes).ok());
  ASSERT_EQ(bytes[count_at], '\x01');
  // The rule: id (length 1, "x"), enabled, form, prefix presence, ...
  const std::size_t enabled_at = count_at + 3;
  ASSERT_EQ(bytes[enabled_at], '\x01');
  for (auto [at, value] : {std::pair{enabled_at, '\x02'}, std::pair{enabled_at + 1, '\x03'},
                           std::pair{enabled_at + 2, '\x02'}}) {
    std::string bad = bytes;
    bad[at] = value;
    auto r = DecodeBucket(bad);
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_EQ(r.error().code, ErrorCode::kCorruption);
  }
}

}  // namespace
}  // namespace strata::metadata
