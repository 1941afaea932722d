// The memory XML request bodies and their parse trees hold at once, bounded per process.
//
// Each XML body is capped in size, but without a shared bound N concurrent bodies cost N
// times that: a 4 MiB CompleteMultipartUpload held its text, pugixml's copy of it and a
// 64-byte node per element (~12 MiB), so 16 at once took ~190 MiB. Every body now reads
// and parses under an XmlLease: the body's bytes and every allocation pugixml makes for
// it count against the lease's own cap (past it the body is MalformedXML: no S3 document
// needs that much) and against the process's budget (`server.xml_memory`; past it the
// request gets 503 SlowDown, which SDKs retry with backoff). Thread-safe: the budget is one
// atomic counter shared by every core.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/error.h"

namespace strata::gateway {

inline constexpr std::uint64_t kDefaultXmlBudget = std::uint64_t{64} << 20;

// The process's budget; main sets it from the configuration before serving.
void SetXmlBudget(std::uint64_t bytes);
std::uint64_t XmlBudgetCapacity();
// Bytes XML bodies and parse trees hold now, every core together (for tests and /metrics).
std::uint64_t XmlBudgetUsed();

// Why pugixml ran out of memory on this thread: the current lease's Refusal(), or
// kUnavailable outside any lease (malloc itself failed).
Error XmlOutOfMemory();

// One request's share of the budget: what its body and its parse hold, at most `cap`
// bytes. Returns everything it holds when destroyed. Used by one thread at a time (a
// request's coroutine may move between co_awaits only on its own core).
class XmlLease {
 public:
  explicit XmlLease(std::uint64_t cap);
  XmlLease(const XmlLease&) = delete;
  XmlLease& operator=(const XmlLease&) = delete;
  ~XmlLease();

  // Sets `bytes` aside from the budget for what this body will need (its text and its
  // parse), so that concurrent bodies are refused up front rather than each reading a
  // part and then failing to parse. False as for Take.
  bool Reserve(std::uint64_t bytes);
  // Uses `bytes` more, from the reservation first, then from the budget. False when that
  // passes the lease's cap or the process's budget; Refusal() then says which.
  bool Take(std::uint64_t bytes);
  // Returns `bytes` used; they stay reserved for this lease until it is destroyed.
  void Give(std::uint64_t bytes);
  std::uint64_t used() const { return used_; }
  std::uint64_t held() const { return held_; }  // reserved or used: counted in the budget
  // The error for the last refused Take: kUnavailable (503 SlowDown, retryable) when the
  // budget was spent, kMalformedXml when this body passed its own cap.
  Error Refusal() const;

  // Runs `parse` (synchronous) with pugixml's allocations on this thread counted against
  // this lease; a document made inside must be destroyed inside.
  template <class F>
  auto Run(F&& parse) {
    Account account(this);
    return std::forward<F>(parse)();
  }

 private:
  // Installs a lease as the current thread's pugixml account for its lifetime.
  class Account {
   public:
    explicit Account(XmlLease* lease);
    ~Account();

   private:
    XmlLease* saved_;
  };

  // Moves `bytes` from the process's budget into held_.
  bool Hold(std::uint64_t bytes);

  const std::uint64_t cap_;
  std::uint64_t held_ = 0;
  std::uint64_t used_ = 0;    // <= held_
  bool over_budget_ = false;  // the last refusal was the process's budget, not the cap
};

}  // namespace strata::gateway
