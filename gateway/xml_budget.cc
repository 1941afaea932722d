#include "gateway/xml_budget.h"

#include <cstdlib>
#include <new>
#include <pugixml.hpp>

namespace strata::gateway {
namespace {

std::atomic<std::uint64_t> g_capacity{kDefaultXmlBudget};
std::atomic<std::uint64_t> g_used{0};

// The lease pugixml's allocations on this thread count against; null outside
// XmlLease::Run (pugixml elsewhere, such as storage's reading of upstream answers, is
// not counted).
thread_local XmlLease* t_account = nullptr;

// pugixml frees without a size, so each block carries its size and the lease that paid
// for it. 16 bytes keep malloc's alignment.
struct alignas(16) BlockHeader {
  std::size_t size;
  XmlLease* lease;
};

void* Allocate(std::size_t size) {
  XmlLease* lease = t_account;
  const std::size_t total = size + sizeof(BlockHeader);
  if (lease != nullptr && !lease->Take(total)) {
    return nullptr;  // pugixml reports status_out_of_memory
  }
  void* raw = std::malloc(total);
  if (raw == nullptr) {
    if (lease != nullptr) {
      lease->Give(total);
    }
    return nullptr;
  }
  new (raw) BlockHeader{total, lease};
  return static_cast<char*>(raw) + sizeof(BlockHeader);
}

void Deallocate(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  auto* header = reinterpret_cast<BlockHeader*>(static_cast<char*>(ptr) - sizeof(BlockHeader));
  if (header->lease != nullptr) {
    header->lease->Give(header->size);
  }
  std::free(header);
}

// Installed during static initialisation, before any thread or document exists: pugixml
// must free every block with the functions that allocated it.
const bool kInstalled = [] {
  pugi::set_memory_management_functions(Allocate, Deallocate);
  return true;
}();

}  // namespace

void SetXmlBudget(std::uint64_t bytes) { g_capacity.store(bytes, std::memory_order_relaxed); }

std::uint64_t XmlBudgetCapacity() {
  (void)kInstalled;
  return g_capacity.load(std::memory_order_relaxed);
}

std::uint64_t XmlBudgetUsed() { return g_used.load(std::memory_order_relaxed); }

Error XmlOutOfMemory() {
  if (t_account != nullptr) {
    return t_account->Refusal();
  }
  return Error(ErrorCode::kUnavailable, "Please reduce your request rate: out of memory", true);
}

XmlLease::XmlLease(std::uint64_t cap) : cap_(cap) {}

XmlLease::~XmlLease() { g_used.fetch_sub(held_, std::memory_order_relaxed); }

bool XmlLease::Hold(std::uint64_t bytes) {
  if (held_ + bytes > cap_) {
    over_budget_ = false;
    return false;
  }
  const std::uint64_t capacity = g_capacity.load(std::memory_order_relaxed);
  const std::uint64_t before = g_used.fetch_add(bytes, std::memory_order_relaxed);
  if (before + bytes > capacity) {
    g_used.fetch_sub(bytes, std::memory_order_relaxed);
    over_budget_ = true;
    return false;
  }
  held_ += bytes;
  return true;
}

bool XmlLease::Reserve(std::uint64_t bytes) {
  return bytes <= held_ - used_ || Hold(bytes - (held_ - used_));
}

bool XmlLease::Take(std::uint64_t bytes) {
  if (used_ + bytes > held_ && !Hold(used_ + bytes - held_)) {
    return false;
  }
  used_ += bytes;
  return true;
}

void XmlLease::Give(std::uint64_t bytes) { used_ -= bytes; }

Error XmlLease::Refusal() const {
  if (over_budget_) {
    return Error(ErrorCode::kUnavailable,
                 "Please reduce your request rate: too many XML request bodies are being "
                 "processed",
                 true);
  }
  return Error(ErrorCode::kMalformedXml,
               "The XML you provided was not well-formed or did not validate against our "
               "published schema");
}

XmlLease::Account::Account(XmlLease* lease) : saved_(t_account) { t_account = lease; }

XmlLease::Account::~Account() { t_account = saved_; }

}  // namespace strata::gateway
