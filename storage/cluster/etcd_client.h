// EtcdClient: strata's client of etcd's v3 API through etcd's JSON gateway (etcd 3.4:
// POST /v3/kv/range, /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn, /v3/lease/grant,
// /v3/lease/keepalive, /v3/lease/revoke, /v3/watch). Private to storage/: membership
// (storage/cluster/etcd_membership.h) and, later, the bucket catalog talk to etcd through it.
//
// Why the JSON gateway and not gRPC: it is plain HTTP/1.1 that Boost.Beast already speaks
// (as the upstream S3 client does), so strata needs no gRPC/protobuf stack for a handful of
// small calls. Keys and values are bytes (base64 on the wire, any bytes here); int64 fields
// travel as JSON strings both ways (lease ids exceed a double's 53 bits).
//
// Connections: HTTP/1.1 keep-alive, a small idle pool; a new connection goes to the
// endpoint that answered last and, on a connection failure, tries the others in the
// configured order, once each. Every answer is bounded (max_response_bytes, 4 MiB): a larger
// one is refused (kEntityTooLarge), a range that may be large should set a limit. A call
// whose whole answer has not arrived within request_timeout fails (kTimedOut).
//
// Errors: no endpoint reachable, or a connection lost mid-call, is kUnavailable (retryable);
// a timeout kTimedOut (retryable); etcd's own errors map from their gRPC code
// (InvalidArgument -> kInvalidArgument, NotFound -> kNotFound, FailedPrecondition and
// OutOfRange (compacted) -> kPreconditionFailed, Unavailable and ResourceExhausted ->
// kUnavailable retryable, ...); an answer that is not the documented JSON is kCorruption,
// never a crash. A call that may have been applied (a Txn or Put whose answer was lost) is
// not repeated by the client: the caller decides, since only it knows whether a repeat is
// harmless. Only a pooled connection that etcd closed while idle, found dead before the
// request went out, is replaced silently.
//
// One EtcdClient belongs to one executor (an io_context run by one thread): call it only
// from coroutines running there. Several calls may be in flight at once. Coroutine methods
// take their arguments by value (an awaitable starts when awaited, after the caller's
// temporaries are gone). Destroying the client closes its idle connections; calls in flight
// keep what they use alive until they end.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata::storage::cluster {

template <typename T>
using Task = boost::asio::awaitable<Result<T>>;

struct EtcdOptions {
  std::chrono::milliseconds connect_timeout{2'000};
  // A unary call (request sent, whole answer read) and a watch's creation fail when they
  // take longer (a created watch then waits for events without limit: idle is normal).
  std::chrono::milliseconds request_timeout{5'000};
  // The largest answer accepted, and the largest single message of a watch stream.
  std::size_t max_response_bytes = 4u << 20;
  std::size_t max_idle_connections = 4;
};

// One etcd client URL, "http://host:port".
struct EtcdEndpoint {
  std::string host;
  std::string port;
  static Result<EtcdEndpoint> Parse(std::string_view url);
  std::string HostPort() const;
};

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;
};

struct RangeRequest {
  std::string key;
  // Empty: only `key`. Otherwise [key, range_end); PrefixEnd(prefix) for a prefix.
  std::string range_end;
  std::int64_t limit = 0;     // 0: no limit
  std::int64_t revision = 0;  // 0: the newest
};

struct RangeResponse {
  std::int64_t revision = 0;  // the store's revision when the range was read
  std::vector<KeyValue> kvs;  // in key order
  bool more = false;          // a limit cut the answer
  std::int64_t count = 0;     // keys in the range, whatever the limit
};

struct PutResponse {
  std::int64_t revision = 0;  // the revision the put made
};

struct DeleteResponse {
  std::int64_t revision = 0;
  std::int64_t deleted = 0;
};

// One comparison of a transaction: `key`'s target (a revision, its version or its value)
// compared with `number` (or `value` for kValue). A missing key has create, mod revision
// and version 0.
struct Compare {
  enum class Target { kVersion, kCreate, kMod, kValue };
  enum class Op { kEqual, kGreater, kLess, kNotEqual };
  std::string key;
  Target target = Target::kCreate;
  Op op = Op::kEqual;
  std::int64_t number = 0;
  std::string value;
};

struct TxnOp {
  enum class Kind { kRange, kPut, kDelete };
  Kind kind = Kind::kRange;
  std::string key;
  std::string value;       // kPut
  std::string range_end;   // kRange, kDelete
  std::int64_t lease = 0;  // kPut: 0 for none

  static TxnOp Range(std::string key, std::string range_end = {});
  static TxnOp Put(std::string key, std::string value, std::int64_t lease = 0);
  static TxnOp Delete(std::string key, std::string range_end = {});
};

struct TxnRequest {
  std::vector<Compare> compare;  // all must hold for `success` to run, else `failure`
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};

struct TxnResponse {
  std::int64_t revision = 0;
  bool succeeded = false;
  // The answers of the range ops of the branch that ran, in order.
  std::vector<RangeResponse> ranges;
};

struct Lease {
  std::int64_t id = 0;
  std::int64_t ttl_seconds = 0;  // as granted (etcd may raise a TTL below its minimum)
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // a delete carries the key and its mod_revision (the delete's) only
};

// One message of a watch stream.
struct WatchBatch {
  std::int64_t revision = 0;  // the store's revision when it was sent
  std::vector<WatchEvent> events;
};

// The end of a prefix's range: the prefix with its last byte that is not 0xff raised by one
// (etcd's clientv3.GetPrefixEnd); "\0" (every key) for an empty prefix or all 0xff bytes.
std::string PrefixEnd(std::string_view prefix);

class EtcdWatch;

class EtcdClient {
 public:
  // `endpoints` as EtcdEndpoint::Parse takes them; kInvalidArgument for a bad one or none.
  static Result<std::shared_ptr<EtcdClient>> Make(boost::asio::any_io_executor executor,
                                                  const std::vector<std::string>& endpoints,
                                                  EtcdOptions options);
  EtcdClient(boost::asio::any_io_executor executor, std::vector<EtcdEndpoint> endpoints,
             EtcdOptions options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  Task<RangeResponse> Range(RangeRequest request);
  Task<PutResponse> Put(std::string key, std::string value, std::int64_t lease);
  Task<DeleteResponse> DeleteRange(std::string key, std::string range_end);
  Task<TxnResponse> Txn(TxnRequest request);

  Task<Lease> LeaseGrant(std::int64_t ttl_seconds);
  // Renews the lease once; its TTL (seconds) as etcd now counts it. kNotFound when the lease
  // is gone (expired or revoked): its keys are gone with it.
  Task<std::int64_t> LeaseKeepAlive(std::int64_t id);
  // kNotFound when the lease was already gone.
  Task<void> LeaseRevoke(std::int64_t id);

  // Opens a watch of [key, range_end) from `start_revision` (0: from now) on a connection
  // of its own. The answer arrives once etcd created the watch; events then come from
  // EtcdWatch::Next. kPreconditionFailed when start_revision was compacted away.
  Task<std::unique_ptr<EtcdWatch>> Watch(std::string key, std::string range_end,
                                         std::int64_t start_revision);

 private:
  friend class EtcdWatch;
  struct State;
  std::shared_ptr<State> state_;
};

// A watch stream: etcd's long-lived streamed answer to POST /v3/watch, newline-separated
// JSON messages, read incrementally through a bounded buffer (max_response_bytes per
// message). Used on the client's executor only, by one coroutine at a time.
class EtcdWatch {
 public:
  struct Impl;
  explicit EtcdWatch(std::unique_ptr<Impl> impl);
  ~EtcdWatch();
  EtcdWatch(const EtcdWatch&) = delete;
  EtcdWatch& operator=(const EtcdWatch&) = delete;

  // The next message with events (progress messages without events are skipped). Errors:
  // kUnavailable (retryable) when the stream ended or the connection failed, or Close was
  // called; kPreconditionFailed when etcd cancelled the watch because the revision it was
  // at was compacted away (watch again from a fresh read); kCorruption for a message that
  // is not etcd's JSON; kEntityTooLarge for a message over the bound.
  Task<WatchBatch> Next();
  // Ends the stream: a Next in progress (or the next one) fails with kUnavailable. Call on
  // the client's executor.
  void Close();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::storage::cluster
