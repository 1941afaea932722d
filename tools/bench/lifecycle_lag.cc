// strata-bench lifecycle: what a lifecycle pass costs as the bucket grows. A real index and
// object store in a scratch directory; `objects` versions whose rule is not due, and `due`
// versions that are; one LifecycleWorker pass expires the due ones. A queue-driven worker
// costs the same at 1e4 and 1e6 objects; a scanner would cost 100 times more.
#include "tools/bench/lifecycle_lag.h"

#include <chrono>
#include <filesystem>
#include <string>

#include "common/clock.h"
#include "common/config.h"
#include "metadata/index.h"
#include "storage/tier_engine.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

metadata::LifecycleRule ExpireAfter(const std::string& prefix, std::int64_t days) {
  metadata::LifecycleRule rule;
  rule.id = prefix;
  rule.filter.prefix = prefix;
  rule.expiration_days = days;
  return rule;
}

}  // namespace

Result<LifecycleLagResult> RunLifecycleLag(const std::string& dir, std::uint64_t objects,
                                           std::uint64_t due) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Config config;
  config.server.fsync = false;
  config.lifecycle.day = std::chrono::milliseconds(1000);
  TierConfig hot;
  hot.name = "hot";
  hot.path = dir + "/hot";
  config.tiers = {hot};
  config.storage_classes = {{"STANDARD", "hot"}};
  const std::int64_t day_ms = config.lifecycle.day.count();

  auto index = metadata::Index::Open(dir + "/index", {.sync = false, .lifecycle_day_ms = day_ms});
  if (!index.ok()) {
    return std::move(index).error();
  }
  SystemClock clock;
  boost::asio::thread_pool blocking_pool(1);
  auto engine = storage::TierEngine::Open(config, **index, clock, blocking_pool);
  if (!engine.ok()) {
    return std::move(engine).error();
  }
  storage::ObjectStore* store = &(*engine)->store();
  const BucketName bucket("lag");
  STRATA_RETURN_IF_ERROR(store->CreateBucket(bucket, "bench", ""));
  // "keep/" expires in a million days: queued, never due. "due/" after one day.
  STRATA_RETURN_IF_ERROR((*index)->SetBucketLifecycle(
      bucket, {ExpireAfter("keep/", 1'000'000), ExpireAfter("due/", 1)}));

  LifecycleLagResult r;
  r.objects = objects;
  r.due = due;
  const auto fill = Clock::now();
  const auto put = [&](const std::string& key, std::int64_t when) -> Result<void> {
    metadata::ObjectRecord o;
    o.bucket = bucket;
    o.key = ObjectKey(key);
    o.version_id = VersionId("null");
    o.size = 1;
    o.etag = "00";
    o.last_modified_ms = when;
    auto done = (*index)->PutObject(o);
    if (!done.ok()) {
      return std::move(done).error();
    }
    return Ok();
  };
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  for (std::uint64_t i = 0; i < objects; ++i) {
    STRATA_RETURN_IF_ERROR(put("keep/" + std::to_string(i), now_ms));
  }
  // Written "three days ago": due already.
  for (std::uint64_t i = 0; i < due; ++i) {
    STRATA_RETURN_IF_ERROR(put("due/" + std::to_string(i), now_ms - 3 * day_ms));
  }
  r.fill_s = SecondsSince(fill);

  // The rules' reseed (a one-off walk of the bucket when rules change) first, timed apart.
  const auto reseed = Clock::now();
  STRATA_RETURN_IF_ERROR((*engine)->RunLifecyclePass());
  r.first_pass_s = SecondsSince(reseed);
  // Everything due was expired by that pass; due versions written now are the steady state.
  for (std::uint64_t i = 0; i < due; ++i) {
    STRATA_RETURN_IF_ERROR(put("due/again-" + std::to_string(i), now_ms - 3 * day_ms));
  }
  const auto pass = Clock::now();
  STRATA_RETURN_IF_ERROR((*engine)->RunLifecyclePass());
  r.pass_s = SecondsSince(pass);
  const auto idle = Clock::now();
  STRATA_RETURN_IF_ERROR((*engine)->RunLifecyclePass());
  r.idle_pass_s = SecondsSince(idle);
  r.expired = (*engine)->Stats().lifecycle.value_or(storage::LifecycleStats{}).expirations;
  auto left = (*index)->ListObjects(bucket, "due/", "", 10);
  if (!left.ok()) {
    return std::move(left).error();
  }
  r.due_left = left->objects.size();
  engine->reset();  // before the index closes
  blocking_pool.join();
  index->reset();
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace strata::bench
