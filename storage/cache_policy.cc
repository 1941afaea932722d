#include "storage/cache_policy.h"

#include <algorithm>
#include <bit>

namespace strata::storage {
namespace {

std::uint64_t Mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

constexpr std::uint8_t kMaxCount = 15;

}  // namespace

std::uint64_t HashParts(std::initializer_list<std::string_view> parts) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::string_view part : parts) {
    for (unsigned char c : part) {
      h = (h ^ c) * 0x100000001b3ull;
    }
    h = (h ^ 0) * 0x100000001b3ull;
  }
  return Mix(h);
}

FrequencySketch::FrequencySketch(std::size_t width) {
  width = std::bit_ceil(std::max<std::size_t>(width, 64));
  counters_.assign(width * kRows, 0);
  mask_ = width - 1;
  reset_after_ = 10 * static_cast<std::uint64_t>(width);
}

std::size_t FrequencySketch::Slot(std::uint64_t key, int row) const {
  const std::uint64_t h = Mix(key + 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(row + 1));
  return static_cast<std::size_t>(row) * (mask_ + 1) + (h & mask_);
}

void FrequencySketch::Increment(std::uint64_t key) {
  // Conservative update: only the smallest counters grow, which keeps estimates tighter.
  const unsigned estimate = Estimate(key);
  if (estimate < kMaxCount) {
    for (int row = 0; row < kRows; ++row) {
      std::uint8_t& c = counters_[Slot(key, row)];
      if (c == estimate) {
        ++c;
      }
    }
  }
  if (++increments_ >= reset_after_) {
    for (auto& c : counters_) {
      c = static_cast<std::uint8_t>(c / 2);
    }
    increments_ /= 2;
  }
}

unsigned FrequencySketch::Estimate(std::uint64_t key) const {
  unsigned least = kMaxCount;
  for (int row = 0; row < kRows; ++row) {
    least = std::min<unsigned>(least, counters_[Slot(key, row)]);
  }
  return least;
}

CachePolicy::CachePolicy(std::size_t sketch_width) : sketch_(sketch_width) {}

void CachePolicy::OnHit(std::uint64_t id, std::uint64_t key_hash) {
  sketch_.Increment(key_hash);
  auto it = index_.find(id);
  if (it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
}

CachePolicy::Admission CachePolicy::OnMiss(std::uint64_t key_hash, std::uint64_t size,
                                           std::int64_t room) {
  Admission admission;
  if (room >= 0 && size <= static_cast<std::uint64_t>(room)) {
    admission.admit = true;
  } else {
    const unsigned candidate = sketch_.Estimate(key_hash);
    const std::uint64_t needed = size - static_cast<std::uint64_t>(std::max<std::int64_t>(room, 0));
    std::uint64_t freed = 0;
    std::size_t victims = 0;
    bool beaten = true;
    for (auto it = lru_.rbegin(); it != lru_.rend() && freed < needed; ++it) {
      if (++victims > kMaxVictims || sketch_.Estimate(it->key_hash) >= candidate) {
        beaten = false;
        break;
      }
      freed += it->size;
    }
    if (beaten && freed >= needed) {
      admission.admit = true;
      for (std::size_t i = 0; i < victims; ++i) {
        CacheEntry victim;
        PopColdest(victim);
        admission.victims.push_back(std::move(victim));
      }
    }
  }
  sketch_.Increment(key_hash);
  return admission;
}

void CachePolicy::Insert(CacheEntry entry) {
  auto it = index_.find(entry.id);
  if (it != index_.end()) {
    bytes_ -= it->second->size;
    lru_.erase(it->second);
    index_.erase(it);
  }
  bytes_ += entry.size;
  lru_.push_front(std::move(entry));
  index_.emplace(lru_.front().id, lru_.begin());
}

void CachePolicy::Erase(std::uint64_t id) {
  CacheEntry gone;
  Take(id, gone);
}

bool CachePolicy::Take(std::uint64_t id, CacheEntry& out) {
  auto it = index_.find(id);
  if (it == index_.end()) {
    return false;
  }
  bytes_ -= it->second->size;
  out = std::move(*it->second);
  lru_.erase(it->second);
  index_.erase(it);
  return true;
}

bool CachePolicy::PopColdest(CacheEntry& out) {
  if (lru_.empty()) {
    return false;
  }
  out = std::move(lru_.back());
  index_.erase(out.id);
  bytes_ -= out.size;
  lru_.pop_back();
  return true;
}

}  // namespace strata::storage
