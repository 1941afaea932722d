// The gateway's metrics and their Prometheus text exposition (format 0.0.4), served on
// GET /metrics and GET /_strata/metrics (see gateway/README.md; who sees which series:
// gateway/metrics_access.h).
//
// Counting is per core: each core thread owns one MetricsShard and is its only writer, so
// recording a request costs a few relaxed loads and stores on memory no other core writes:
// no lock, no atomic read-modify-write, no cache line shared across cores. A scrape (any
// thread) reads every shard with relaxed loads and sums. Each counter only grows, so
// scrapes see monotonic values; one scrape may catch a request half-recorded (its status
// counted, its latency not yet), which the next scrape completes.
#pragma once

#include <array>
#include <atomic>
#include <boost/beast/http/message.hpp>  // http::verb; verb.hpp alone misses <ostream>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/forward.h"
#include "gateway/operation.h"
#include "gateway/usage_report.h"
#include "metadata/index.h"
#include "metadata/read_inline.h"
#include "storage/cluster.h"
#include "storage/engine_stats.h"
#include "storage/read_cache.h"
#include "storage/replication.h"

namespace strata::gateway {

struct Services;

// Which series a scrape may read. Bucket names are their owners' private data (every
// user's buckets would show on a shared page), so only kFull has series labelled by
// bucket; kAggregate has every other series, totals per tier included.
enum class MetricsScope { kAggregate, kFull };

// Query parameters of presigned URLs (SigV4, SigV2): a request with one of them is signed.
inline constexpr std::string_view kQuerySignatureParams[] = {
    "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Algorithm", "Signature", "AWSAccessKeyId"};

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Upper bounds, in seconds, of strata_request_duration_seconds' buckets (and +Inf).
inline constexpr std::array<double, 14> kLatencyBounds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// Writes the text exposition format: families of samples, each family introduced by its
// # HELP and # TYPE lines. Label values are escaped; metric and label names are the
// caller's constants and must already be valid ([a-zA-Z_:][a-zA-Z0-9_:]*).
class ExpositionWriter {
 public:
  struct Label {
    std::string_view name;
    std::string_view value;
  };

  // # HELP and # TYPE lines; `type` is "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, std::initializer_list<Label> labels, std::uint64_t value);
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value);
  // One histogram series: `counts` holds per-bucket (not cumulative) counts, one per bound
  // plus the last for observations above every bound; written as cumulative _bucket lines
  // with "le", then _sum and _count (the +Inf bucket's value).
  void Histogram(std::string_view name, std::initializer_list<Label> labels,
                 std::span<const double> bounds, std::span<const std::uint64_t> counts, double sum);

  const std::string& text() const { return out_; }

 private:
  void Line(std::string_view name, std::string_view suffix, std::span<const Label> labels,
            std::string_view value);

  std::string out_;
};

// A label value escaped for the exposition format: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view value);
// A sample value: shortest round-trip decimal, "NaN", "+Inf", "-Inf".
std::string FormatSampleValue(double value);

// One core's counters. Every method is called only on the thread that owns the shard.
class alignas(64) MetricsShard {
 public:
  // One answered request: its operation, the status sent (0: none), how long it took from
  // its complete header to the end of its response, and its body bytes in and out.
  void RecordRequest(S3Operation op, unsigned status, std::chrono::nanoseconds elapsed,
                     std::uint64_t bytes_in, std::uint64_t bytes_out);
  // Body bytes read outside a request's own handling (the drained rest of a refused body).
  void AddBytesReceived(std::uint64_t n) { bytes_received_.Add(n); }
  void ConnectionOpened() { connections_opened_.Add(1); }
  void ConnectionClosed() { connections_closed_.Add(1); }
  // A connection turned away at accept: at server.max_connections with none idle to
  // close, or out of file descriptors.
  void ConnectionRefused() { connections_refused_.Add(1); }
  // An idle keep-alive connection closed to make room for a new one at the cap.
  void IdleConnectionEvicted() { connections_evicted_.Add(1); }

 private:
  friend class GatewayMetrics;

  // A counter with one writer: a plain load and store, readable from any thread.
  class Counter {
   public:
    void Add(std::uint64_t n) {
      value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::uint64_t Get() const { return value_.load(std::memory_order_relaxed); }

   private:
    std::atomic<std::uint64_t> value_{0};
  };

  // Statuses seen for one operation, filled in order; a slot's status is published (with
  // release) after its count, so a reader that sees the status sees the count.
  static constexpr std::size_t kStatusSlots = 12;
  struct StatusSlot {
    std::atomic<unsigned> status{0};  // the HTTP status + 1; 0: the slot is free
    Counter count;
  };
  struct OperationStats {
    std::array<StatusSlot, kStatusSlots> by_status;
    Counter other_status;  // more distinct statuses than slots
    std::array<Counter, kLatencyBounds.size() + 1> latency;
    Counter latency_sum_ns;
  };

  std::array<OperationStats, kS3OperationCount> ops_;
  Counter bytes_received_;
  Counter bytes_sent_;
  Counter connections_opened_;
  Counter connections_closed_;
  Counter connections_refused_;
  Counter connections_evicted_;
};

// The write-back backlog and worker (storage/upstream/writeback.h), with an upstream.
struct WritebackSample {
  std::uint64_t objects = 0;
  std::uint64_t bytes = 0;
  double oldest_age_seconds = 0;
  std::uint64_t pushes = 0;
  std::uint64_t failures = 0;
};

// The background fetches (restore, prefetch) and the prefetch jobs behind them.
struct FetchSample {
  storage::FetchStats fetches;
  storage::PrefetchStats prefetch;
};

// What a scrape reads besides the gateway's counters.
struct ScrapeSample {
  std::optional<storage::LifecycleStats> lifecycle;      // nullopt: no lifecycle worker
  std::optional<FetchSample> fetch;                      // nullopt: no upstream configured
  std::optional<storage::ScrubStats> scrub;              // nullopt: no scrubber
  std::optional<storage::ClusterStatus> cluster;         // nullopt: no [cluster]
  std::optional<storage::ReplicationStats> replication;  // nullopt: no [cluster]
  std::optional<storage::ReadCacheStats> read_cache;     // nullopt: none kept
  std::optional<ForwardedGetCounts> forwarded_gets;      // nullopt: no [cluster]
  std::optional<WritebackSample> writeback;              // nullopt: no upstream configured
  std::optional<UsageReport> usage;  // nullopt: not read (no index, or it failed)
  std::optional<metadata::IndexCacheStats> index_cache;   // nullopt: no index
  std::optional<metadata::InlineReadCounts> index_reads;  // the request path's, by where
  std::vector<storage::TierCacheStats> tier_caches;       // local tiers with a capacity
  double uptime_seconds = 0;
  std::uint64_t checksum_mismatches = 0;        // storage::ChecksumMismatches()
  std::uint64_t integrity_repairs = 0;          // storage::IntegrityRepairs()
  std::uint64_t integrity_unrepairable = 0;     // storage::IntegrityUnrepairable()
  std::uint64_t integrity_repair_failures = 0;  // storage::IntegrityRepairFailures()
  std::uint64_t send_block_bytes = 0;           // SendBlockBytes()
  std::optional<std::uint64_t> resident_bytes;  // /proc/self/statm; nullopt if unreadable
  std::optional<std::uint64_t> open_fds;        // /proc/self/fd
  std::optional<double> cpu_seconds;            // /proc/self/stat utime + stime
};

// The registry: owns one shard per core and renders the sum of them.
class GatewayMetrics {
 public:
  GatewayMetrics();
  GatewayMetrics(const GatewayMetrics&) = delete;
  GatewayMetrics& operator=(const GatewayMetrics&) = delete;

  // A new shard, alive as long as the registry. Only before any core serves: scrapes read
  // the list of shards without a lock.
  MetricsShard& AddShard();

  // The exposition of every counter plus `sample`, as much as `scope` may see. Any thread.
  std::string Render(const ScrapeSample& sample,
                     MetricsScope scope = MetricsScope::kAggregate) const;
  // Render() with a sample of this process taken now.
  std::string Scrape() const;
  // Render() with a sample of this process and the storage engine of `services` taken now.
  std::string Scrape(const Services& services, MetricsScope scope) const;

 private:
  ScrapeSample SampleProcess() const;

  std::vector<std::unique_ptr<MetricsShard>> shards_;
  std::chrono::steady_clock::time_point started_;
};

// Whether a request is a metrics scrape the session answers itself: GET of exactly
// /metrics or /_strata/metrics, path-style (a virtual-hosted bucket's key "metrics" is an
// object), either with no credentials, or with `Authorization: Bearer ...`, or (only
// /_strata/metrics, which no bucket name can shadow) signed with SigV4 or SigV2, in the
// header or the query. A signed request to /metrics stays an S3 request on the bucket
// "metrics". `authorization` is the Authorization header's value, empty when absent.
bool IsMetricsScrape(boost::beast::http::verb method, std::string_view target,
                     std::string_view host, std::string_view authorization,
                     std::string_view domain);

}  // namespace strata::gateway
