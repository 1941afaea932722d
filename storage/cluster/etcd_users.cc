#include "storage/cluster/etcd_users.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <map>
#include <optional>

#include "metadata/codec.h"

namespace strata::storage::cluster {

namespace asio = boost::asio;
using metadata::UserRecord;

namespace {

constexpr std::int64_t kReconcilePage = 512;  // users per range call (a record is ~100 bytes)

template <typename T>
asio::awaitable<std::optional<Result<T>>> Boxed(Task<T> task) {
  co_return co_await std::move(task);
}

}  // namespace

std::string EtcdUsers::UsersPrefix(std::string_view cluster) {
  return "/" + std::string(cluster) + "/users/";
}

EtcdUsers::EtcdUsers(asio::io_context& io, std::string cluster_name,
                     std::shared_ptr<EtcdClient> client, metadata::BucketCatalog& mirror)
    : io_(io),
      cluster_(std::move(cluster_name)),
      prefix_(UsersPrefix(cluster_)),
      client_(std::move(client)),
      mirror_(mirror),
      watch_(io, *client_, prefix_, "the users of cluster " + cluster_, gate_,
             PrefixEvents{
                 .put =
                     [this](const KeyValue& kv) {
                       if (auto user = Decode(kv); user.ok()) {
                         Apply(user->access_key, &*user, kv.mod_revision);
                       }
                     },
                 .remove = [this](const std::string& access_key,
                                  std::int64_t revision) { Apply(access_key, nullptr, revision); },
                 .reread = [this] { return Reconcile(); },
             }) {}

EtcdUsers::~EtcdUsers() = default;

Result<UserRecord> EtcdUsers::Decode(const KeyValue& kv) const {
  const std::string_view access_key = std::string_view(kv.key).substr(
      kv.key.compare(0, prefix_.size(), prefix_) == 0 ? prefix_.size() : kv.key.size());
  auto user = metadata::DecodeUser(kv.value);
  if (user.ok() && user->access_key == access_key && !access_key.empty()) {
    return user;
  }
  spdlog::warn("cluster {}: refusing etcd key {} (revision {}): not a user record", cluster_,
               kv.key, kv.mod_revision);
  return Error(ErrorCode::kCorruption, "the cluster's users hold a bad record at " + kv.key);
}

template <typename T>
Result<T> EtcdUsers::Await(Task<T> task) {
  if (io_.get_executor().running_in_this_thread()) {
    return Error(ErrorCode::kInternal, "the shared users were called blocking on their thread");
  }
  return *asio::co_spawn(io_, Boxed(std::move(task)), asio::use_future).get();
}

Result<bool> EtcdUsers::Create(const UserRecord& user) {
  return PutIfCreated(user, Compare::Op::kEqual);  // not yet: create_revision 0
}

Result<bool> EtcdUsers::Replace(const UserRecord& user) {
  return PutIfCreated(user, Compare::Op::kGreater);  // still there: create_revision > 0
}

Result<bool> EtcdUsers::PutIfCreated(const UserRecord& user, Compare::Op op) {
  const std::string key = prefix_ + user.access_key;
  TxnRequest txn;
  txn.compare.push_back(Compare{key, Compare::Target::kCreate, op, 0, {}});
  txn.success.push_back(TxnOp::Put(key, metadata::EncodeUser(user)));
  auto answer = Await(client_->Txn(std::move(txn)));
  if (!answer.ok()) {
    return std::move(answer).error();
  }
  if (!answer->succeeded) {
    return false;
  }
  Apply(user.access_key, &user, answer->revision);
  return true;
}

Result<void> EtcdUsers::Remove(const std::string& access_key) {
  auto deleted = Await(client_->DeleteRange(prefix_ + access_key, std::string()));
  if (!deleted.ok()) {
    return std::move(deleted).error();
  }
  if (deleted->deleted == 0) {
    return Error(ErrorCode::kNotFound, "no user " + access_key);
  }
  Apply(access_key, nullptr, deleted->revision);
  return Ok();
}

void EtcdUsers::Apply(const std::string& access_key, const UserRecord* user,
                      std::int64_t revision) {
  gate_.Apply(access_key, revision, [&] {
    Result<void> done = Ok();
    if (user != nullptr) {
      done = mirror_.PutUser(*user);
    } else if (auto removed = mirror_.DeleteUser(access_key);
               !removed.ok() && removed.error().code != ErrorCode::kNotFound) {
      done = std::move(removed).error();
    }
    if (!done.ok()) {
      spdlog::warn("cluster {}: user {} as of revision {} could not be applied here: {}", cluster_,
                   access_key, revision, done.error().message);
    }
  });
}

Task<std::int64_t> EtcdUsers::Reconcile() {
  auto snapshot = co_await ReadPrefix(*client_, prefix_, kReconcilePage);
  if (!snapshot.ok()) {
    co_return std::move(snapshot).error();
  }
  std::map<std::string, std::pair<UserRecord, std::int64_t>> remote;
  std::map<std::string, bool> refused;  // keys whose value is not a user: left alone here
  for (const KeyValue& kv : snapshot->kvs) {
    if (auto user = Decode(kv); user.ok()) {
      std::string access_key = user->access_key;
      remote.insert_or_assign(std::move(access_key), std::pair(std::move(*user), kv.mod_revision));
    } else {
      refused[kv.key.substr(prefix_.size())] = true;
    }
  }
  auto local = mirror_.ListUsers();
  if (!local.ok()) {
    co_return std::move(local).error();
  }
  for (const auto& [access_key, entry] : remote) {
    Apply(access_key, &entry.first, entry.second);
  }
  std::size_t removed = 0;
  for (const UserRecord& user : *local) {
    if (remote.contains(user.access_key) || refused.contains(user.access_key)) {
      continue;
    }
    // Gone from etcd (removed while this gateway was away, or made before it joined a
    // cluster): removed here as of the read, unless created since. A key the cluster does
    // not know must sign nothing.
    spdlog::warn("cluster {}: user {} is not one of the cluster's users: removed here", cluster_,
                 user.access_key);
    Apply(user.access_key, nullptr, snapshot->revision);
    ++removed;
  }
  gate_.Passed(snapshot->revision);
  spdlog::info("cluster {}: users at revision {}: {} users, {} removed here", cluster_,
               snapshot->revision, remote.size(), removed);
  co_return snapshot->revision;
}

asio::awaitable<Result<void>> EtcdUsers::Start() {
  auto read = co_await Reconcile();
  if (!read.ok()) {
    co_return std::move(read).error();
  }
  watch_.Start(*read + 1);
  co_return Ok();
}

asio::awaitable<Result<void>> EtcdUsers::Stop() {
  co_await watch_.Stop();
  co_return Ok();
}

}  // namespace strata::storage::cluster
