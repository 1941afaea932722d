// EtcdCatalog: storage/shared_catalog.h's SharedCatalog kept in etcd (private to storage/;
// storage::Cluster makes it with StartCatalog).
//
// Keys: /<cluster name>/buckets/<bucket> -> metadata::EncodeBucket(record), no lease (a
// bucket outlives every gateway). A value that does not decode, or names another bucket
// than its key, is outside input gone wrong: refused with a log line (kCorruption to a
// caller that asked for that bucket, skipped by the watch and the reconcile), never a crash.
//
//   Claim   txn: create_revision(key) == 0 ? put : range  (the name is taken once)
//   Lookup  range of the key (etcd's default, linearizable)
//   Update  range, mutate, txn: mod_revision(key) == read's ? put : -  (retried)
//   Remove  the emptiness check, then delete of the key
//
// The mirror: Start reads every bucket (one range, paged at one revision) and makes the
// local catalog equal to it: missing buckets created, changed ones updated, ones gone from
// etcd removed when empty; a non-empty one stays local (its objects are never dropped by a
// reconcile) with a warning at every start until an operator empties it. Then a watch from
// the read's revision + 1 applies every put and delete. A broken stream is reopened after
// the last revision applied; one compacted away is read whole again (the reconcile).
// Every application (watch, reconcile, and the calls' own, made before they return) goes
// through Apply, which drops a state older than the one last applied for that name, so the
// watch and the calls may race freely. Local writes of the watch and of LookupAsync run on
// the cluster's thread (a synced index write each; bucket changes are rare); the blocking
// calls' run on their caller's thread.
//
// Threads: the SharedCatalog methods as shared_catalog.h says; Start and Stop on the
// executor (co_spawn them there).
#pragma once

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/task_group.h"
#include "storage/cluster/etcd_client.h"
#include "storage/cluster/prefix_follow.h"
#include "storage/shared_catalog.h"

namespace strata::storage::cluster {

class EtcdCatalog final : public SharedCatalog {
 public:
  // `io` is run by the cluster's thread, `client` belongs to it; `mirror` outlives this.
  EtcdCatalog(boost::asio::io_context& io, std::string cluster_name,
              std::shared_ptr<EtcdClient> client, BucketMirror& mirror);
  ~EtcdCatalog() override;

  // On the executor: the reconcile, then the watch in the background. Errors: the read's
  // (kUnavailable when etcd cannot be reached); nothing runs after one.
  boost::asio::awaitable<Result<void>> Start();
  // On the executor: ends the watch and waits for it. Always ok.
  boost::asio::awaitable<Result<void>> Stop();

  Result<Claimed> Claim(const metadata::BucketRecord& bucket) override;
  Result<std::optional<metadata::BucketRecord>> Lookup(const BucketName& name) override;
  boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> LookupAsync(
      const BucketName& name) override;
  Result<metadata::BucketRecord> Update(const BucketName& name, const Mutation& mutate) override;
  Result<void> Remove(const BucketName& name) override;
  void SetEmptinessCheck(EmptinessCheck check) override;

  // The key layout, for tests and tools.
  static std::string BucketsPrefix(std::string_view cluster);
  static std::string BucketKey(std::string_view cluster, std::string_view bucket);
  // A value read from `key`, checked: the record, or kCorruption (and a log line).
  Result<metadata::BucketRecord> Decode(const KeyValue& kv) const;

 private:
  // Runs `task` on the executor and waits for it; kInternal on the executor's own thread.
  template <typename T>
  Result<T> Await(Task<T> task);
  Task<std::optional<KeyValue>> Get(std::string key);
  Task<std::optional<metadata::BucketRecord>> LookupHere(std::string name);
  // The reconcile: reads every bucket and applies the difference; the read's revision.
  Task<std::int64_t> Reconcile();

  // Applies `record` (nullptr: the bucket's removal) as of etcd's `revision` to the mirror,
  // unless a state at least as new was applied already. Any thread.
  void Apply(const std::string& name, const metadata::BucketRecord* record, std::int64_t revision);

  boost::asio::io_context& io_;
  const std::string cluster_;
  const std::string prefix_;  // /<cluster>/buckets/
  const std::shared_ptr<EtcdClient> client_;
  BucketMirror& mirror_;

  std::mutex check_mu_;  // guards check_
  EmptinessCheck check_;

  RevisionGate gate_;  // orders the mirror's writes by etcd's revision

  PrefixWatch watch_;  // last: stopped and gone before the rest
};

}  // namespace strata::storage::cluster
