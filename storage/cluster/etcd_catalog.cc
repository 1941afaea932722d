#include "storage/cluster/etcd_catalog.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <set>

#include "metadata/codec.h"
#include "storage/object_store.h"

namespace strata::storage::cluster {

namespace asio = boost::asio;
using metadata::BucketRecord;

namespace {

// Update's read-modify-write rounds before it gives up on a record others keep changing.
constexpr int kUpdateTries = 16;
// Buckets per page of the reconcile's read: bounded answers (a record with many lifecycle
// rules is a few KiB, far below the client's 4 MiB bound at this count).
constexpr std::int64_t kReconcilePage = 256;
// After a failed watch, the next try waits this long.

// `task`'s answer in a default-constructible box, as co_spawn's completions need.
template <typename T>
asio::awaitable<std::optional<Result<T>>> Boxed(Task<T> task) {
  co_return co_await std::move(task);
}

}  // namespace

// `var` = the value of the Result `expr`, or return its error.
#define ASSIGN_OR_RETURN(var, expr)         \
  auto var##_result = (expr);               \
  if (!var##_result.ok()) {                 \
    return std::move(var##_result).error(); \
  }                                         \
  auto var = std::move(var##_result).value()

std::string EtcdCatalog::BucketsPrefix(std::string_view cluster) {
  return "/" + std::string(cluster) + "/buckets/";
}

std::string EtcdCatalog::BucketKey(std::string_view cluster, std::string_view bucket) {
  return BucketsPrefix(cluster) + std::string(bucket);
}

EtcdCatalog::EtcdCatalog(asio::io_context& io, std::string cluster_name,
                         std::shared_ptr<EtcdClient> client, BucketMirror& mirror)
    : io_(io),
      cluster_(std::move(cluster_name)),
      prefix_(BucketsPrefix(cluster_)),
      client_(std::move(client)),
      mirror_(mirror),
      check_([&mirror](const BucketName& name) -> Result<void> {
        auto empty = mirror.CheckBucketEmpty(name);
        // Not mirrored here yet (the watch is a moment behind): nothing of it here either.
        if (!empty.ok() && empty.error().code == ErrorCode::kNoSuchBucket) {
          return Ok();
        }
        return empty;
      }),
      watch_(io, *client_, prefix_, "the bucket catalog of cluster " + cluster_, gate_,
             PrefixEvents{
                 .put =
                     [this](const KeyValue& kv) {
                       if (auto record = Decode(kv); record.ok()) {
                         Apply(record->name.str(), &*record, kv.mod_revision);
                       }
                     },
                 .remove = [this](const std::string& name,
                                  std::int64_t revision) { Apply(name, nullptr, revision); },
                 .reread = [this] { return Reconcile(); },
             }) {}

EtcdCatalog::~EtcdCatalog() = default;

Result<BucketRecord> EtcdCatalog::Decode(const KeyValue& kv) const {
  const std::string_view name = std::string_view(kv.key).substr(
      kv.key.compare(0, prefix_.size(), prefix_) == 0 ? prefix_.size() : kv.key.size());
  auto record = metadata::DecodeBucket(kv.value);
  std::string why;
  if (!record.ok()) {
    why = record.error().message;
  } else if (record->name.view() != name || !IsValidBucketName(name)) {
    why = "the record names bucket \"" + record->name.str() + "\"";
  }
  if (why.empty()) {
    return record;
  }
  spdlog::warn("cluster {}: refusing etcd key {} (revision {}): not a bucket record: {}", cluster_,
               kv.key, kv.mod_revision, why);
  return Error(ErrorCode::kCorruption, "the cluster's catalog holds a bad record for " + kv.key);
}

template <typename T>
Result<T> EtcdCatalog::Await(Task<T> task) {
  if (io_.get_executor().running_in_this_thread()) {
    return Error(ErrorCode::kInternal, "the shared catalog was called blocking on its own thread");
  }
  return *asio::co_spawn(io_, Boxed(std::move(task)), asio::use_future).get();
}

Task<std::optional<KeyValue>> EtcdCatalog::Get(std::string key) {
  RangeRequest request;
  request.key = std::move(key);
  auto range = co_await client_->Range(std::move(request));
  if (!range.ok()) {
    co_return std::move(range).error();
  }
  if (range->kvs.empty()) {
    co_return std::optional<KeyValue>();
  }
  co_return std::optional<KeyValue>(std::move(range->kvs.front()));
}

Result<SharedCatalog::Claimed> EtcdCatalog::Claim(const BucketRecord& bucket) {
  const std::string key = BucketKey(cluster_, bucket.name.view());
  TxnRequest txn;
  txn.compare.push_back(Compare{key, Compare::Target::kCreate, Compare::Op::kEqual, 0, {}});
  txn.success.push_back(TxnOp::Put(key, metadata::EncodeBucket(bucket)));
  txn.failure.push_back(TxnOp::Range(key));
  ASSIGN_OR_RETURN(answer, Await(client_->Txn(std::move(txn))));
  if (answer.succeeded) {
    Apply(bucket.name.str(), &bucket, answer.revision);
    return Claimed{bucket, true};
  }
  if (answer.ranges.empty() || answer.ranges[0].kvs.empty()) {
    return Error(ErrorCode::kInternal, "etcd refused a claim of " + key + " without its holder");
  }
  const KeyValue& kv = answer.ranges[0].kvs[0];
  ASSIGN_OR_RETURN(holder, Decode(kv));
  Apply(holder.name.str(), &holder, kv.mod_revision);
  return Claimed{std::move(holder), false};
}

Result<std::optional<BucketRecord>> EtcdCatalog::Lookup(const BucketName& name) {
  ASSIGN_OR_RETURN(kv, Await(Get(BucketKey(cluster_, name.view()))));
  if (!kv) {
    return std::optional<BucketRecord>();
  }
  ASSIGN_OR_RETURN(record, Decode(*kv));
  Apply(record.name.str(), &record, kv->mod_revision);
  return std::optional<BucketRecord>(std::move(record));
}

Task<std::optional<BucketRecord>> EtcdCatalog::LookupHere(std::string name) {
  auto kv = co_await Get(BucketKey(cluster_, name));
  if (!kv.ok()) {
    co_return std::move(kv).error();
  }
  if (!kv->has_value()) {
    co_return std::optional<BucketRecord>();
  }
  auto record = Decode(**kv);
  if (!record.ok()) {
    co_return std::move(record).error();
  }
  Apply(record->name.str(), &*record, (*kv)->mod_revision);
  co_return std::optional<BucketRecord>(std::move(record).value());
}

asio::awaitable<Result<std::optional<BucketRecord>>> EtcdCatalog::LookupAsync(
    const BucketName& name) {
  std::string key_name = name.str();  // copied before the first suspension
  co_return *co_await asio::co_spawn(io_, Boxed(LookupHere(std::move(key_name))),
                                     asio::use_awaitable);
}

Result<BucketRecord> EtcdCatalog::Update(const BucketName& name, const Mutation& mutate) {
  const std::string key = BucketKey(cluster_, name.view());
  for (int attempt = 0; attempt < kUpdateTries; ++attempt) {
    ASSIGN_OR_RETURN(kv, Await(Get(key)));
    if (!kv) {
      return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist: " + name.str());
    }
    ASSIGN_OR_RETURN(record, Decode(*kv));
    STRATA_RETURN_IF_ERROR(mutate(record));
    std::string value = metadata::EncodeBucket(record);
    if (value == kv->value) {
      Apply(record.name.str(), &record, kv->mod_revision);
      return record;  // nothing to change
    }
    TxnRequest txn;
    txn.compare.push_back(
        Compare{key, Compare::Target::kMod, Compare::Op::kEqual, kv->mod_revision, {}});
    txn.success.push_back(TxnOp::Put(key, std::move(value)));
    ASSIGN_OR_RETURN(answer, Await(client_->Txn(std::move(txn))));
    if (answer.succeeded) {
      Apply(record.name.str(), &record, answer.revision);
      return record;
    }
    // Someone changed (or removed) the bucket between the read and the write: again.
  }
  return Error(ErrorCode::kUnavailable,
               "bucket " + name.str() + " kept changing while it was being updated",
               /*retryable=*/true);
}

Result<void> EtcdCatalog::Remove(const BucketName& name) {
  EmptinessCheck check;
  {
    std::lock_guard lock(check_mu_);
    check = check_;
  }
  STRATA_RETURN_IF_ERROR(check(name));
  ASSIGN_OR_RETURN(deleted,
                   Await(client_->DeleteRange(BucketKey(cluster_, name.view()), std::string())));
  if (deleted.deleted == 0) {
    return Error(ErrorCode::kNoSuchBucket, "The specified bucket does not exist: " + name.str());
  }
  Apply(name.str(), nullptr, deleted.revision);
  return Ok();
}

void EtcdCatalog::SetEmptinessCheck(EmptinessCheck check) {
  std::lock_guard lock(check_mu_);
  check_ = std::move(check);
}

void EtcdCatalog::Apply(const std::string& name, const BucketRecord* record,
                        std::int64_t revision) {
  gate_.Apply(name, revision, [&] {
    auto done = record != nullptr ? mirror_.MirrorBucket(*record)
                                  : mirror_.UnmirrorBucket(BucketName(name));
    if (!done.ok()) {
      // A removal refused for objects still here, or a failed index write: the local
      // catalog differs from etcd's until the next change of this bucket or the next start.
      spdlog::warn("cluster {}: bucket {} as of revision {} could not be applied here: {}",
                   cluster_, name, revision, done.error().message);
    }
  });
}

asio::awaitable<Result<void>> EtcdCatalog::Start() {
  auto read = co_await Reconcile();
  if (!read.ok()) {
    co_return std::move(read).error();
  }
  watch_.Start(*read + 1);
  co_return Ok();
}

asio::awaitable<Result<void>> EtcdCatalog::Stop() {
  co_await watch_.Stop();
  co_return Ok();
}

Task<std::int64_t> EtcdCatalog::Reconcile() {
  // Every bucket, page by page at the first page's revision: one consistent state.
  std::map<std::string, std::pair<BucketRecord, std::int64_t>> remote;
  std::set<std::string> refused;  // keys whose value is not a bucket: left alone locally
  auto snapshot = co_await ReadPrefix(*client_, prefix_, kReconcilePage);
  if (!snapshot.ok()) {
    co_return std::move(snapshot).error();
  }
  const std::int64_t revision = snapshot->revision;
  for (const KeyValue& kv : snapshot->kvs) {
    auto record = Decode(kv);
    if (record.ok()) {
      std::string name = record->name.str();
      remote.insert_or_assign(std::move(name),
                              std::pair(std::move(record).value(), kv.mod_revision));
    } else {
      refused.insert(kv.key.substr(prefix_.size()));
    }
  }
  auto local = mirror_.MirroredBuckets();
  if (!local.ok()) {
    co_return std::move(local).error();
  }
  std::size_t created = 0;
  std::size_t removed = 0;
  for (const auto& [name, entry] : remote) {
    Apply(name, &entry.first, entry.second);
    ++created;
  }
  for (const BucketRecord& bucket : *local) {
    const std::string& name = bucket.name.str();
    if (remote.contains(name) || refused.contains(name)) {
      continue;
    }
    // Gone from etcd (removed while this gateway was away). Removed here too when empty
    // (unless created after the read); a bucket with objects here stays, so no object is
    // ever dropped by a reconcile.
    gate_.Apply(name, revision, [&] {
      auto dropped = mirror_.UnmirrorBucket(bucket.name);
      if (dropped.ok()) {
        ++removed;
      } else {
        spdlog::warn(
            "cluster {}: bucket {} is gone from the cluster's catalog but still holds objects "
            "here ({}): kept on this gateway only (empty it, or create it again, to settle it)",
            cluster_, name, dropped.error().message);
      }
    });
  }
  gate_.Passed(revision);
  spdlog::info("cluster {}: bucket catalog at revision {}: {} buckets, {} removed here", cluster_,
               revision, created, removed);
  co_return revision;
}

}  // namespace strata::storage::cluster
