#include "storage/object_store.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "common/guard.h"
#include "storage/local/local_object_store.h"

namespace strata::storage {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool LooksLikeIpv4(std::string_view name) {
  int parts = 0;
  while (true) {
    const auto dot = name.find('.');
    if (!IsDigits(name.substr(0, dot))) {
      return false;
    }
    ++parts;
    if (dot == std::string_view::npos) {
      break;
    }
    name.remove_prefix(dot + 1);
  }
  return parts == 4;
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const Config& config, metadata::Index& index,
                                                       SweepOptions sweep, const Clock& clock) {
  return GuardExceptions("open object store", [&]() -> Result<std::unique_ptr<ObjectStore>> {
    const TierConfig* hot = config.HotTier();
    if (hot == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "no hot tier: map STANDARD to a local tier");
    }
    if (hot->kind != TierKind::kLocal) {
      return Error(ErrorCode::kNotImplemented,
                   "tier " + hot->name + ": only local hot tiers are supported");
    }
    const auto opened = clock.Now();
    auto tier = LocalTier::Open(hot->name, hot->path, config.server.fsync);
    if (!tier.ok()) {
      return std::move(tier).error();
    }
    // The other local tiers (warm), and the classes whose versions live on each.
    std::vector<std::unique_ptr<LocalTier>> others;
    for (const auto& t : config.tiers) {
      if (t.kind != TierKind::kLocal || t.name == hot->name) {
        continue;
      }
      auto other = LocalTier::Open(t.name, t.path, config.server.fsync);
      if (!other.ok()) {
        return std::move(other).error();
      }
      others.push_back(std::move(other).value());
    }
    std::map<std::string, std::string> class_tiers;
    for (const auto& [cls, name] : config.storage_classes) {
      const TierConfig* t = config.TierOfClass(cls);
      if (t != nullptr && t->kind == TierKind::kLocal) {
        class_tiers[cls] = name;
      }
    }
    auto store = std::make_unique<LocalObjectStore>(std::move(tier).value(), std::move(others),
                                                    std::move(class_tiers), index, sweep, clock);
    if (sweep.at_open) {
      // Nothing writes yet, so every unreferenced file from before the open is an orphan.
      store->SweepAndLog(opened, true);
    }
    store->StartSweeper();
    return std::unique_ptr<ObjectStore>(std::move(store));
  });
}

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return false;
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) {
    return false;
  }
  if (name.find("..") != std::string_view::npos || LooksLikeIpv4(name)) {
    return false;
  }
  // Prefixes and suffixes S3 reserves (access point aliases, Object Lambda, directory
  // buckets, punycode, ...).
  for (std::string_view prefix : {"xn--", "sthree-", "amzn-s3-demo-"}) {
    if (name.starts_with(prefix)) {
      return false;
    }
  }
  for (std::string_view suffix : {"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"}) {
    if (name.ends_with(suffix)) {
      return false;
    }
  }
  return true;
}

}  // namespace strata::storage
