#include "storage/engine/tier_caches.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace strata::storage {
namespace {

std::uint64_t BytesOn(const metadata::ObjectRecord& record, std::string_view tier) {
  std::uint64_t bytes = 0;
  for (const auto& placement : record.placements) {
    if (placement.tier == tier) {
      for (const auto& extent : placement.extents) {
        bytes += extent.size;
      }
    }
  }
  return bytes;
}

constexpr std::size_t kMaxLooksPerPass = 4096;

// (copy id, key hash) of a version: the bucket and key are hashed once per read, the
// copy id from the key's hash and the version id.
std::pair<std::uint64_t, std::uint64_t> Hashes(const metadata::ObjectRecord& record) {
  const std::uint64_t key_hash = TierCaches::KeyHash(record.bucket, record.key);
  const std::string_view key_bytes(reinterpret_cast<const char*>(&key_hash), sizeof key_hash);
  return {HashParts({key_bytes, record.version_id.view()}), key_hash};
}

std::int64_t Mark(const TierConfig& tier, double fraction) {
  return static_cast<std::int64_t>(std::floor(static_cast<double>(tier.capacity) * fraction));
}

// ref: bucket 0x00 key 0x00 version.
struct Ref {
  BucketName bucket;
  ObjectKey key;
  VersionId version;
};
std::optional<Ref> ParseRef(const std::string& ref) {
  const auto first = ref.find('\0');
  const auto second = first == std::string::npos ? first : ref.find('\0', first + 1);
  if (second == std::string::npos) {
    return std::nullopt;
  }
  return Ref{BucketName(ref.substr(0, first)), ObjectKey(ref.substr(first + 1, second - first - 1)),
             VersionId(ref.substr(second + 1))};
}

}  // namespace

TierCaches::TierCaches(const Config& config, metadata::Index& index, ObjectStore& store,
                       TierCacheOptions options, const Clock& clock)
    : config_(config), index_(index), store_(store), options_(options), clock_(clock) {
  for (const auto& tier : config.tiers) {
    if (tier.kind == TierKind::kLocal && tier.capacity > 0) {
      tiers_.push_back(std::make_unique<Tier>(tier, options.sketch_width));
      tiers_.back()->stats.tier = tier.name;
      tiers_.back()->stats.capacity = tier.capacity;
      tiers_.back()->room = Mark(tier, tier.high_watermark);
    }
  }
}

TierCaches::~TierCaches() {
  {
    std::lock_guard lock(thread_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void TierCaches::Start() {
  if (tiers_.empty()) {
    return;  // nothing has a capacity: nothing to do
  }
  thread_ = std::thread([this] { Loop(); });
}

void TierCaches::Loop() {
  auto loaded = Load();
  if (!loaded.ok()) {
    spdlog::error("storage: tier caches: cannot load what the tiers hold: {}",
                  loaded.error().message);
  }
  while (!Stopping()) {
    auto pass = RunPass();
    if (!pass.ok()) {
      spdlog::warn("storage: eviction pass failed: {}", pass.error().message);
    }
    std::unique_lock lock(thread_mu_);
    clock_.WaitFor(lock, wake_, options_.interval, [&] { return stopping_ || wake_requested_; });
    wake_requested_ = false;
  }
}

std::int64_t TierCaches::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
      .count();
}

bool TierCaches::Stopping() const {
  std::lock_guard lock(thread_mu_);
  return stopping_;
}

Result<void> TierCaches::Load() {
  std::size_t loaded = 0;
  auto scanned = index_.ForEachVersion([&](const metadata::ObjectRecord& version) {
    if (TierOf(version) != nullptr) {
      OnResident(version);
      ++loaded;
    }
    return !Stopping();
  });
  if (!scanned.ok()) {
    return scanned;
  }
  for (const auto& tier : tiers_) {
    spdlog::info(
        "storage: tier {} holds {} copies (capacity {} bytes, evicting above {:.0f}% "
        "down to {:.0f}%)",
        tier->config.name, tier->policy.size(), tier->config.capacity,
        100 * tier->config.high_watermark, 100 * tier->config.low_watermark);
  }
  (void)loaded;
  return Ok();
}

TierCaches::Tier* TierCaches::TierNamed(std::string_view name) {
  for (const auto& tier : tiers_) {
    if (tier->config.name == name) {
      return tier.get();
    }
  }
  return nullptr;
}

TierCaches::Tier* TierCaches::TierOf(const metadata::ObjectRecord& record) {
  for (const auto& placement : record.placements) {
    if (Tier* tier = TierNamed(placement.tier)) {
      return tier;
    }
  }
  return nullptr;
}

CacheEntry TierCaches::EntryOf(const metadata::ObjectRecord& record, std::uint64_t bytes) {
  std::string ref = record.bucket.str();
  ref.push_back('\0');
  ref += record.key.str();
  ref.push_back('\0');
  ref += record.version_id.str();
  const auto [id, key_hash] = Hashes(record);
  return {id, key_hash, bytes, std::move(ref)};
}

bool TierCaches::AdmitFill(const metadata::ObjectRecord& record) {
  Tier* tier = HotTierState();
  if (tier == nullptr) {
    return true;
  }
  bool wake = false;
  bool admit = false;
  {
    std::lock_guard lock(tier->mu);
    auto admission =
        tier->policy.OnMiss(KeyHash(record.bucket, record.key), record.size, tier->room);
    admit = admission.admit;
    if (admit) {
      ++tier->stats.admitted;
      tier->room -= static_cast<std::int64_t>(record.size);
      tier->reserved += static_cast<std::int64_t>(record.size);
      for (auto& victim : admission.victims) {
        tier->room += static_cast<std::int64_t>(victim.size);
        tier->doomed.push_back(std::move(victim));
      }
      wake = !tier->doomed.empty();
    } else {
      ++tier->stats.refused;
    }
  }
  if (wake) {
    WakePass();  // evict what admission displaced now, not at the next interval
  }
  return admit;
}

void TierCaches::WakePass() {
  {
    std::lock_guard lock(thread_mu_);
    wake_requested_ = true;
  }
  wake_.notify_all();
}

std::pair<std::uint64_t, std::uint64_t> TierCaches::Ids(const metadata::ObjectRecord& record) {
  return Hashes(record);
}

std::uint64_t TierCaches::KeyHash(const BucketName& bucket, const ObjectKey& key) {
  return HashParts({bucket.view(), key.view()});
}

TierCaches::Tier* TierCaches::HotTierState() {
  const TierConfig* hot = config_.HotTier();
  return hot == nullptr ? nullptr : TierNamed(hot->name);
}

bool TierCaches::ReserveRoom(std::uint64_t bytes, std::vector<std::uint64_t>* displaceable) {
  Tier* tier = HotTierState();
  if (tier == nullptr) {
    return true;
  }
  const auto need = static_cast<std::int64_t>(bytes);
  bool displaced = false;
  bool reserved = false;
  {
    std::lock_guard lock(tier->mu);
    while (tier->room < need && displaceable != nullptr && !displaceable->empty()) {
      CacheEntry victim;
      if (tier->policy.Take(displaceable->back(), victim)) {
        tier->room += static_cast<std::int64_t>(victim.size);
        tier->doomed.push_back(std::move(victim));
        displaced = true;
      }
      displaceable->pop_back();
    }
    if (tier->room >= need) {
      tier->room -= need;
      tier->reserved += need;
      reserved = true;
    }
  }
  if (displaced) {
    WakePass();
  }
  return reserved;
}

void TierCaches::ReleaseRoom(std::uint64_t bytes) {
  Tier* tier = HotTierState();
  if (tier == nullptr) {
    return;
  }
  std::lock_guard lock(tier->mu);
  tier->reserved -= static_cast<std::int64_t>(bytes);
  tier->released_this_pass += static_cast<std::int64_t>(bytes);
}

void TierCaches::OnRead(const metadata::ObjectRecord& record) {
  Tier* tier = TierOf(record);
  if (tier == nullptr) {
    return;
  }
  std::unique_lock lock(tier->mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    return;
  }
  const auto [id, key_hash] = Hashes(record);
  tier->policy.OnHit(id, key_hash);
}

void TierCaches::OnResident(const metadata::ObjectRecord& record) {
  Tier* holder = TierOf(record);
  CacheEntry entry = EntryOf(record, holder == nullptr ? 0 : BytesOn(record, holder->config.name));
  for (const auto& tier : tiers_) {
    std::lock_guard lock(tier->mu);
    if (tier.get() == holder) {
      tier->policy.Insert(entry);
    } else {
      tier->policy.Erase(entry.id);  // it moved off this tier
    }
  }
}

TierCaches::Outcome TierCaches::Evict(const Tier& tier, const CacheEntry& entry,
                                      std::uint64_t& freed) {
  const auto ref = ParseRef(entry.ref);
  if (!ref) {
    return Outcome::kGone;
  }
  auto record = store_.HeadVersion(ref->bucket, ref->key, ref->version);
  if (!record.ok()) {
    return record.error().code == ErrorCode::kNoSuchKey ||
                   record.error().code == ErrorCode::kNoSuchVersion
               ? Outcome::kGone
               : Outcome::kKept;
  }
  // Only the copy on this tier is this tier's to evict; a version moved elsewhere was
  // forgotten here already or will be.
  const metadata::Placement* local = nullptr;
  const TierConfig* upstream = nullptr;
  for (const auto& placement : record->placements) {
    const TierConfig* placed = nullptr;
    for (const auto& t : config_.tiers) {
      if (t.name == placement.tier) {
        placed = &t;
      }
    }
    if (placed != nullptr && placed->kind == TierKind::kS3) {
      upstream = placed;
    } else if (local == nullptr && placed != nullptr && placed->kind == TierKind::kLocal) {
      local = &placement;
    }
  }
  if (local == nullptr || local->tier != tier.config.name) {
    return Outcome::kGone;
  }
  if (upstream == nullptr) {
    return Outcome::kKept;  // dirty: its only copy
  }
  if (record->restore_expiry_ms > NowMs()) {
    return Outcome::kKept;  // restored (RestoreObject): pinned until its expiry
  }
  const std::uint64_t bytes = BytesOn(*record, tier.config.name);
  auto evicted = store_.EvictLocalCopy(*record, upstream->name);
  if (!evicted.ok()) {
    spdlog::warn("storage: cannot evict {}/{} from tier {}: {}", ref->bucket.str(), ref->key.str(),
                 tier.config.name, evicted.error().message);
    return Outcome::kKept;
  }
  if (!*evicted) {
    return Outcome::kGone;  // changed meanwhile: a new version reports itself
  }
  freed = bytes;
  return Outcome::kEvicted;
}

Result<void> TierCaches::RunPass() {
  if (tiers_.empty()) {
    return Ok();
  }
  for (const auto& tier : tiers_) {
    std::lock_guard lock(tier->mu);
    tier->released_this_pass = 0;
  }
  auto rows = index_.Usage();
  if (options_.after_usage_read) {
    options_.after_usage_read();
  }
  if (!rows.ok()) {
    return std::move(rows).error();
  }
  std::map<std::string, std::int64_t, std::less<>> used;
  for (const auto& row : *rows) {
    used[row.tier] += row.bytes;
  }
  for (const auto& tier : tiers_) {
    PassOver(*tier, used[tier->config.name]);
  }
  return Ok();
}

void TierCaches::EvictDisplaced() {
  for (const auto& tier : tiers_) {
    EvictDoomed(*tier);
  }
}

std::uint64_t TierCaches::EvictOrKeep(const Tier& tier, CacheEntry entry,
                                      std::vector<CacheEntry>& kept, std::uint64_t& evictions) {
  std::uint64_t freed = 0;
  switch (Evict(tier, entry, freed)) {
    case Outcome::kEvicted:
      ++evictions;
      return freed;
    case Outcome::kKept:
      kept.push_back(std::move(entry));
      return 0;
    case Outcome::kGone:
      return 0;
  }
  return 0;
}

std::uint64_t TierCaches::EvictDoomed(Tier& tier) {
  std::lock_guard evicting(tier.evicting);
  std::vector<CacheEntry> doomed;
  {
    std::lock_guard lock(tier.mu);
    doomed.swap(tier.doomed);
  }
  std::vector<CacheEntry> kept;
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;
  for (auto& entry : doomed) {
    evicted_bytes += EvictOrKeep(tier, std::move(entry), kept, evictions);
  }
  std::lock_guard lock(tier.mu);
  for (auto& entry : kept) {
    tier.policy.Insert(std::move(entry));
  }
  tier.stats.evictions += evictions;
  tier.stats.evicted_bytes += evicted_bytes;
  return evicted_bytes;
}

void TierCaches::PassOver(Tier& tier, std::int64_t used) {
  const std::int64_t high = Mark(tier.config, tier.config.high_watermark);
  const std::int64_t low = Mark(tier.config, tier.config.low_watermark);
  // A fill may have evicted some of these since the usage read: `used` then errs high,
  // which evicts a little early, never late.
  used -= static_cast<std::int64_t>(EvictDoomed(tier));
  std::vector<CacheEntry> kept;
  std::uint64_t evictions = 0;
  std::uint64_t evicted_bytes = 0;
  auto evict = [&](CacheEntry entry) {
    const std::uint64_t freed = EvictOrKeep(tier, std::move(entry), kept, evictions);
    evicted_bytes += freed;
    used -= static_cast<std::int64_t>(freed);
  };
  bool blocked = false;
  if (used > high) {
    // Each copy is looked at once per pass at most: dirty ones go back afterwards.
    // Bounded per pass, so a tier full of dirty copies (an upstream outage) costs a few
    // thousand lookups every interval, not a walk over everything it holds.
    std::size_t budget;
    {
      std::lock_guard lock(tier.mu);
      budget = std::min<std::size_t>(tier.policy.size(), kMaxLooksPerPass);
    }
    while (used > low && budget-- > 0 && !Stopping()) {
      CacheEntry coldest;
      {
        std::lock_guard lock(tier.mu);
        if (!tier.policy.PopColdest(coldest)) {
          break;
        }
      }
      evict(std::move(coldest));
    }
    blocked = used > low;
  }
  std::lock_guard lock(tier.mu);
  for (auto& entry : kept) {
    tier.policy.Insert(std::move(entry));
  }
  // Fills and prefetches in flight are not in `used` yet; those that ended during the
  // pass may not be either.
  tier.room = high - used - tier.reserved - tier.released_this_pass;
  tier.stats.used = used;
  tier.stats.resident = tier.policy.size();
  tier.stats.evictions += evictions;
  tier.stats.evicted_bytes += evicted_bytes;
  if (blocked) {
    ++tier.stats.blocked;
    if (tier.stats.blocked == 1 || tier.stats.blocked % 240 == 0) {
      spdlog::warn(
          "storage: tier {} holds {} bytes, above its low mark {}, and has no clean "
          "copy left to evict (copies not written back yet are never evicted)",
          tier.config.name, used, low);
    }
  }
}

std::vector<TierCacheStats> TierCaches::stats() const {
  std::vector<TierCacheStats> out;
  for (const auto& tier : tiers_) {
    std::lock_guard lock(tier->mu);
    out.push_back(tier->stats);
  }
  return out;
}

}  // namespace strata::storage
