// S3Client: strata's client for the upstream S3 store behind the cold tier (private to
// storage/). It signs with auth/'s SigV4 and addresses buckets path-style, so any S3
// endpoint (AWS, Ceph RGW, MinIO, moto, another strata) works.
//
// Bodies stream both ways through one fixed buffer per request: a GET hands the body to a
// sink block by block, a PUT pulls it from a source by offset, so no object is held in
// memory whatever its size. Connections are kept alive and reused from a small idle pool.
//
// Failures that a retry may cure (connection errors, timeouts, 500/502/503/504,
// SlowDown, RequestTimeout, InternalError) are retried with exponential backoff and full
// jitter, up to `max_attempts`; a 4xx answer is final. A GET that fails after part of the
// body reached the sink resumes where it stopped (a Range request pinned to the first
// answer's ETag with If-Match), so the sink sees every byte exactly once.
//
// One S3Client belongs to one executor (an I/O thread's io_context): call it only from
// coroutines running there. Several requests may be in flight at once.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/credential_store.h"
#include "common/error.h"

namespace strata::storage::upstream {

template <typename T>
using Task = boost::asio::awaitable<Result<T>>;

struct Endpoint {
  bool tls = false;
  std::string host;  // name or address, without brackets for IPv6
  std::string port;  // "80"/"443" when the URL names none
  std::string region = "us-east-1";
  auth::Credential credential;
  std::string ca_file;  // HTTPS: trust anchors; empty: the system's default paths

  // "http://host:port" or "https://host[:port]" (a trailing '/' is allowed; no path).
  // kInvalidArgument naming the problem otherwise.
  static Result<Endpoint> Parse(std::string_view url);
  // "host:port" as the Host header wants it.
  std::string HostHeader() const;
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  // A request fails (and may be retried) when no byte moves for this long.
  std::chrono::milliseconds idle_timeout{30'000};
  int max_attempts = 5;
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_max{5'000};
  std::size_t max_idle_connections = 16;
  std::size_t buffer_bytes = 256 * 1024;  // the one body buffer of a request
  // PutObject switches to a multipart upload above this size, in parts of part_bytes.
  std::uint64_t multipart_threshold = 64ull << 20;
  std::uint64_t part_bytes = 16ull << 20;
};

using Header = std::pair<std::string, std::string>;

// An ETag as S3 sends it ("\"abc\"") without its quotes, as strata's records keep it.
std::string EtagValue(std::string_view quoted);

// What HEAD or GET tells of an object.
struct ObjectInfo {
  std::uint64_t size = 0;  // the whole object's, also for a ranged GET
  std::string etag;        // with its quotes, as S3 sends it
  std::string last_modified;
  std::string content_type;
  std::string version_id;
  // Every other response header a client may want back: Cache-Control,
  // Content-Disposition, Content-Encoding, Content-Language, Expires, x-amz-meta-*,
  // x-amz-checksum-*, x-amz-storage-class. Names lower-case.
  std::vector<Header> headers;
  bool not_modified = false;  // a conditional request answered 304: nothing else is set
};

struct BucketInfo {
  std::string name;
  std::string creation_date;
};

struct ListedObject {
  std::string key;
  std::uint64_t size = 0;
  std::string etag;
  std::string last_modified;
  std::string storage_class;
};

struct ListPage {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;
};

struct ListRequest {
  std::string prefix;
  std::string delimiter;
  std::string continuation_token;
  std::string start_after;
  int max_keys = 1000;
};

struct GetRequest {
  std::optional<std::pair<std::uint64_t, std::uint64_t>> range;  // first, last (inclusive)
  std::string if_none_match;  // an ETag: a 304 answers with not_modified set
  std::string if_match;
  std::string version_id;
};

struct PutResult {
  std::string etag;
  std::string version_id;  // x-amz-version-id: empty when the bucket keeps no versions
};

struct DeleteResult {
  std::string version_id;  // of the delete marker made, or of the version removed
  bool delete_marker = false;
};

// Receives a GET's body in order, block by block; a failure aborts the GET with it.
using BodySink = std::function<boost::asio::awaitable<Result<void>>(std::string_view)>;
// Fills `buf` with the body bytes starting at `offset`; returns how many (0 only past the
// end). Called again from offset 0 when an attempt is retried.
using BodySource =
    std::function<boost::asio::awaitable<Result<std::size_t>>(std::uint64_t, std::span<char>)>;

// Coroutine methods take their arguments by value: an awaitable starts when awaited, after
// the caller's temporaries are gone. Pass every argument explicitly: GCC 12 mishandles a
// defaulted class-type argument of a coroutine (ASan: a free of a frame address).
class S3Client {
 public:
  S3Client(boost::asio::any_io_executor executor, Endpoint endpoint, ClientOptions options = {});
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const Endpoint& endpoint() const;

  Task<std::vector<BucketInfo>> ListBuckets();
  // Succeeds also when the caller already owns the bucket.
  Task<void> CreateBucket(std::string bucket);
  Task<void> DeleteBucket(std::string bucket);
  Task<ListPage> ListObjectsV2(std::string bucket, ListRequest request);

  // kNoSuchKey, kNoSuchBucket, kNoSuchVersion, kPreconditionFailed as S3 answers; a 304 is
  // a success with not_modified set.
  Task<ObjectInfo> HeadObject(std::string bucket, std::string key, GetRequest request = {});
  // Streams the body (or the range) into `sink`. The returned info is the first answer's.
  Task<ObjectInfo> GetObject(std::string bucket, std::string key, GetRequest request,
                             BodySink sink);
  // Uploads `size` bytes from `source` with `headers` (Content-Type, x-amz-meta-*,
  // x-amz-checksum-*, ...) in one PUT, or as a multipart upload above the threshold
  // (aborted when it fails).
  Task<PutResult> PutObject(std::string bucket, std::string key, std::uint64_t size,
                            BodySource source, std::vector<Header> headers = {});
  // Succeeds when the key (or the version) is absent. Without a version id, in a bucket
  // that keeps versions, the upstream makes a delete marker and names it in the result.
  Task<DeleteResult> DeleteObject(std::string bucket, std::string key, std::string version_id);

  // The bucket's versioning status: "", "Enabled" or "Suspended".
  Task<std::string> GetBucketVersioning(std::string bucket);
  Task<void> PutBucketVersioning(std::string bucket, std::string status);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace strata::storage::upstream
