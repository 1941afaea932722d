// EtcdUsers: storage/shared_users.h's SharedUsers kept in etcd (private to storage/;
// storage::Cluster makes it with StartUsers).
//
// Keys: /<cluster name>/users/<access key> -> metadata::EncodeUser(record), no lease. A
// value that does not decode, or names another access key than its key, is refused with a
// log line and never mirrored.
//
//   Create  txn: create_revision(key) == 0 ? put : -   (an access key is taken once)
//   Remove  delete of the key
//   Replace txn: create_revision(key) > 0 ? put : -    (never makes a removed key again)
//
// The mirror (the gateway's index, metadata::BucketCatalog's user records): Start reads
// every user at one revision and makes the local records equal to it (missing ones put,
// changed ones replaced, ones gone from etcd deleted), then a watch from the next revision
// applies every put and delete (storage/cluster/prefix_follow.h, which also orders the
// watch's writes and the calls' own by revision).
//
// Threads: the SharedUsers methods as shared_users.h says; Start and Stop on the executor.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "common/task_group.h"
#include "metadata/bucket_catalog.h"
#include "storage/cluster/etcd_client.h"
#include "storage/cluster/prefix_follow.h"
#include "storage/shared_users.h"

namespace strata::storage::cluster {

class EtcdUsers final : public SharedUsers {
 public:
  // `io` is run by the cluster's thread, `client` belongs to it; `mirror` outlives this.
  EtcdUsers(boost::asio::io_context& io, std::string cluster_name,
            std::shared_ptr<EtcdClient> client, metadata::BucketCatalog& mirror);
  ~EtcdUsers() override;

  // On the executor: the reconcile, then the watch in the background. Errors: the read's.
  boost::asio::awaitable<Result<void>> Start();
  // On the executor: ends the watch and waits for it.
  boost::asio::awaitable<Result<void>> Stop();

  Result<bool> Create(const metadata::UserRecord& user) override;
  Result<void> Remove(const std::string& access_key) override;
  Result<bool> Replace(const metadata::UserRecord& user) override;

  static std::string UsersPrefix(std::string_view cluster);
  // A value read from `kv`, checked: the record, or kCorruption (and a log line).
  Result<metadata::UserRecord> Decode(const KeyValue& kv) const;

 private:
  template <typename T>
  Result<T> Await(Task<T> task);
  Task<std::int64_t> Reconcile();
  // Puts `user` if its key's create revision compares to 0 by `op` (kEqual: the key does
  // not exist; kGreater: it does); false when it does not, nothing changed.
  Result<bool> PutIfCreated(const metadata::UserRecord& user, Compare::Op op);
  // `user` (nullptr: its removal) as of `revision`, to the mirror unless newer was applied.
  void Apply(const std::string& access_key, const metadata::UserRecord* user,
             std::int64_t revision);

  boost::asio::io_context& io_;
  const std::string cluster_;
  const std::string prefix_;  // /<cluster>/users/
  const std::shared_ptr<EtcdClient> client_;
  metadata::BucketCatalog& mirror_;
  RevisionGate gate_;

  PrefixWatch watch_;  // last: stopped and gone before the rest
};

}  // namespace strata::storage::cluster
