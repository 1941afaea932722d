// The two halves of mirroring an etcd prefix locally, shared by the bucket catalog
// (etcd_catalog.h) and the users (etcd_users.h): ReadPrefix reads every key under a prefix
// at one revision (paged, so each answer stays bounded), and FollowPrefix then applies
// every change after it through a watch that it reopens after the last revision seen when
// the stream breaks, reading everything again (the caller's `reread`) when etcd compacted
// that revision away. On the client's executor only.
#pragma once

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "storage/cluster/etcd_client.h"

namespace strata::storage::cluster {

// Orders the local writes of a mirrored prefix by etcd's revision, so that the watch, the
// reread and a caller's own change (applied before it returns) may race freely: a state
// older than the one last applied for that name is dropped. Thread-safe; the write runs
// under the gate's lock, so the mirror sees one write at a time, in order.
class RevisionGate {
 public:
  // Runs `write` unless a state of `name` at least as new as `revision` was applied.
  template <typename Write>
  void Apply(const std::string& name, std::int64_t revision, Write&& write) {
    std::lock_guard lock(mu_);
    if (revision <= passed_) {
      return;  // the watch applied this state, or a newer one
    }
    auto [it, fresh] = applied_.emplace(name, revision);
    if (!fresh) {
      if (revision <= it->second) {
        return;
      }
      it->second = revision;
    }
    write();
  }
  // Every change up to `revision` is applied (the watch's position): forgets what no longer
  // matters.
  void Passed(std::int64_t revision) {
    std::lock_guard lock(mu_);
    passed_ = std::max(passed_, revision);
    std::erase_if(applied_, [this](const auto& entry) { return entry.second <= passed_; });
  }
  // Whether `name` was applied at a revision above `revision` (after a read at it).
  bool NewerThan(const std::string& name, std::int64_t revision) {
    std::lock_guard lock(mu_);
    auto it = applied_.find(name);
    return it != applied_.end() && it->second > revision;
  }

 private:
  std::mutex mu_;
  std::int64_t passed_ = 0;
  std::map<std::string, std::int64_t> applied_;  // names applied above passed_
};

struct PrefixSnapshot {
  std::int64_t revision = 0;  // the state read is etcd's at this revision
  std::vector<KeyValue> kvs;  // in key order
};

// Every key under `prefix`, `page` keys per range call, all at the first call's revision.
Task<PrefixSnapshot> ReadPrefix(EtcdClient& client, std::string prefix, std::int64_t page);

struct PrefixFollower {
  std::string prefix;
  std::string what;  // names the prefix in log lines ("the bucket catalog")
  // Each batch's events, in revision order.
  std::function<void(const WatchBatch&)> apply;
  // Reads the prefix whole again and applies it; the revision read.
  std::function<Task<std::int64_t>()> reread;
};

// Follows `follower.prefix` from `from_revision` until `stopping` is set (and the stream
// closed through `open_watch`, which points at the open stream meanwhile) or the coroutine
// is cancelled. Failures are logged and retried every `retry`.
boost::asio::awaitable<void> FollowPrefix(boost::asio::io_context& io, EtcdClient& client,
                                          const PrefixFollower& follower,
                                          std::int64_t from_revision, const bool& stopping,
                                          EtcdWatch*& open_watch, std::chrono::milliseconds retry);

}  // namespace strata::storage::cluster
