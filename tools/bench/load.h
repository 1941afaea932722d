// The HTTP side of strata-bench: a closed-loop load generator (N keep-alive connections
// over T threads, each sending its next request as soon as the last answer is read), a
// ListObjectsV2 pager and single control requests. It speaks plain HTTP/1.1 to any server
// (nginx as the baseline, strata under test), signing with SigV4 in the Authorization
// header the way boto3 does when asked, so one program drives both sides of every ratio.
// Only loopback endpoints are accepted: this is a benchmark, not a load-testing tool.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::bench {

// Where requests go and how they are signed.
struct Endpoint {
  std::string host;  // a loopback address: 127.0.0.0/8, ::1 or localhost
  std::string port;
  std::string access_key = "strata";
  std::string secret_key = "strata-secret-key";
  std::string region = "us-east-1";
  bool sign = true;  // false: plain unsigned requests (nginx)
};

// Parses "http://127.0.0.1:9000" (a trailing '/' is allowed); nullopt with `error` set when
// it is malformed or not a loopback address.
std::optional<Endpoint> ParseEndpoint(const std::string& url, std::string& error);

// The keys a run touches: key_prefix + 9-digit decimal index, for index = first,
// first+step, ... (count of them). With suffixes = N > 0 the set is instead N rounds over
// those indexes, each key followed by "-" and its 6-digit round number (suffix_first + r):
// how the index-scale workload adds filler keys evenly between the keys it measures, so
// the measured keys sit inside a large index however many fillers fit in the time budget.
struct KeySet {
  std::string bucket = "bench";
  std::string key_prefix = "k";
  std::uint64_t first = 0;
  std::uint64_t count = 1;
  std::uint64_t step = 1;
  std::uint64_t suffixes = 0;
  std::uint64_t suffix_first = 0;

  std::uint64_t Size() const { return suffixes > 0 ? count * suffixes : count; }
  // The raw (already URI-safe) path "/bucket/prefix000000042" of the i-th key, i < Size().
  std::string PathAt(std::uint64_t i) const;
};

struct LoadOptions {
  std::string method = "GET";  // GET, HEAD, PUT, or MIX (GET/PUT by read_percent)
  KeySet keys;
  bool random_order = false;  // else round-robin over the key set in order
  int connections = 1;
  int threads = 1;
  double duration_s = 0;        // stop after this long (0: no limit)
  std::uint64_t requests = 0;   // stop after this many requests (0: no limit)
  std::uint64_t size = 4096;    // PUT body bytes
  bool payload_sha256 = true;   // PUT: sign the body's SHA-256 (boto3 over http), else UNSIGNED
  std::uint64_t part_size = 0;  // PUT: > 0 uploads each object as a multipart upload
  int read_percent = 90;        // MIX: share of GETs
  bool mix_overwrite = false;   // MIX: PUT the keys being read (else sibling keys "<key>-w")
  std::uint64_t read_rate = 0;  // GET: bytes/s per connection, 0 = as fast as possible
  double warmup_s = 0;          // requests in the first warmup_s seconds are not counted
};

struct LoadResult {
  std::uint64_t requests = 0;  // completed with 2xx
  std::uint64_t errors = 0;    // non-2xx answers, connection and protocol errors
  std::uint64_t bytes = 0;     // body bytes sent (PUT) plus received (GET)
  double seconds = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  // Time to first byte: from sending the request to having the response header.
  double ttfb_p50_ms = 0, ttfb_p99_ms = 0;
  std::string first_error;  // what the first error was, for the log
};

LoadResult RunLoad(const Endpoint& endpoint, const LoadOptions& options);

// Keep-alive connections for a workload that decides its own requests (the epoch
// workload, tools/bench/epoch.h), on the executor of the coroutine that first uses each.
class Connections {
 public:
  Connections(const Endpoint& endpoint, int count);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  struct Answer {
    int status = 0;  // 0: no answer (the error says why)
    std::uint64_t bytes = 0;
    std::string body;  // kept only when asked for
    std::string error;
  };
  // A GET of the raw path (and query) on connection `conn`, signed as the endpoint says.
  boost::asio::awaitable<Answer> Get(int conn, std::string path, std::string query, bool keep_body);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct ListOptions {
  std::string bucket = "bench";
  std::string prefix;
  int max_keys = 1000;
  double duration_s = 5;  // pages are fetched one after another for this long
  std::uint64_t max_pages = 0;
};

struct ListResult {
  std::uint64_t pages = 0;
  std::uint64_t keys = 0;
  std::uint64_t errors = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, mean_ms = 0;
  std::string first_error;
};

// Walks the bucket with ListObjectsV2 pages (continuation tokens), from the start again
// when a walk ends, and times each page.
ListResult RunList(const Endpoint& endpoint, const ListOptions& options);

// One request with a small body; returns the status (0 on a transport error) and fills
// `response_body`.
int SendOne(const Endpoint& endpoint, const std::string& method, const std::string& path,
            const std::string& query, const std::string& body, std::string& response_body);

}  // namespace strata::bench
