// The two halves of mirroring an etcd prefix locally, shared by the bucket catalog
// (etcd_catalog.h) and the users (etcd_users.h): ReadPrefix reads every key under a prefix
// at one revision (paged, so each answer stays bounded), and FollowPrefix then applies
// every change after it through a watch that it reopens after the last revision seen when
// the stream breaks, reading everything again (the caller's `reread`) when etcd compacted
// that revision away (PrefixWatch). On the client's executor only.
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

#include "common/task_group.h"
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

// What a mirror does with the changes under its prefix.
struct PrefixEvents {
  // A key's new value (`kv.key` still carries the prefix).
  std::function<void(const KeyValue& kv)> put;
  // A key deleted: its name after the prefix, and the deletion's revision.
  std::function<void(const std::string& name, std::int64_t revision)> remove;
  // Reads the prefix whole again and applies it; the revision read.
  std::function<Task<std::int64_t>()> reread;
};

// The watch of a mirrored prefix, in the background from Start to Stop: every change after
// the reconcile's revision goes to `events` in revision order, and `gate` learns each
// batch's last revision. A broken stream is reopened after the last revision seen (every
// 500 ms until it opens); one compacted away calls `reread`. On the client's executor;
// destroyed before the client and the gate it uses.
class PrefixWatch {
 public:
  PrefixWatch(boost::asio::io_context& io, EtcdClient& client, std::string prefix, std::string what,
              RevisionGate& gate, PrefixEvents events);
  ~PrefixWatch();

  void Start(std::int64_t from_revision);
  // Ends the watch and waits for it.
  boost::asio::awaitable<void> Stop();

 private:
  boost::asio::awaitable<void> Loop(std::int64_t from_revision);
  void Apply(const WatchBatch& batch);

  boost::asio::io_context& io_;
  EtcdClient& client_;
  const std::string prefix_;
  const std::string what_;  // names the prefix in log lines ("the bucket catalog")
  RevisionGate& gate_;
  const PrefixEvents events_;
  bool stopping_ = false;
  EtcdWatch* watch_ = nullptr;  // the open stream, owned by Loop's frame
  TaskGroup tasks_;             // the loop; last, so it is joined before the rest goes
};

}  // namespace strata::storage::cluster
