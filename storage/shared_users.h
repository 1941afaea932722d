// SharedUsers: the users created through the admin API (`strata-admin user add`), kept in
// etcd in cluster mode (DESIGN.md, "Cluster": the bucket catalog, users and keys live in
// etcd), so an access key made through one gateway signs requests on every gateway, and
// one removed through any gateway is refused on all of them. Each gateway keeps a local
// mirror of the users (its index's user records, which the request path reads), made equal
// to etcd at start and kept so by a watch: a change reaches every gateway within a watch's
// latency (milliseconds), like a change of IAM credentials in AWS, eventually consistent.
// Users of the configuration file are not in etcd: each gateway has its own file.
//
// Made by storage::Cluster::StartUsers (storage/cluster.h) in cluster mode only.
//
// Threads: blocking calls, for the blocking pool (never the cluster's own thread, where
// they answer kInternal). Errors: kUnavailable (retryable) when etcd cannot be reached,
// kTimedOut when it does not answer in time.
#pragma once

#include <string>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::storage {

class SharedUsers {
 public:
  virtual ~SharedUsers() = default;

  // Creates `user` cluster-wide unless its access key is taken (an etcd transaction that
  // creates the key only when absent): false then, nothing changed. Mirrored here before
  // it returns.
  virtual Result<bool> Create(const metadata::UserRecord& user) = 0;
  // Removes the user cluster-wide; kNotFound when there is none. Mirrored here before it
  // returns.
  virtual Result<void> Remove(const std::string& access_key) = 0;
  // Replaces the record of `user`'s access key cluster-wide (its admin flag changed) if the
  // key still exists (a transaction: a key removed meanwhile is not made again): false
  // then, nothing changed. Mirrored here before it returns.
  virtual Result<bool> Replace(const metadata::UserRecord& user) = 0;
};

}  // namespace strata::storage
