#include "gateway/metrics.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "auth/bearer_token.h"
#include "gateway/s3_target.h"
#include "gateway/send_budget.h"
#include "gateway/services.h"
#include "storage/integrity.h"
#include "storage/tier_engine.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::gateway {
namespace {

using Label = ExpositionWriter::Label;

std::string EscapeHelp(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The whole of a small /proc file, or nullopt.
std::optional<std::string> ReadProcFile(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// The `index`th (0-based) space-separated unsigned field of `text`.
std::optional<std::uint64_t> Field(std::string_view text, std::size_t index) {
  std::size_t pos = 0;
  for (std::size_t i = 0;; ++i) {
    while (pos < text.size() && text[pos] == ' ') {
      ++pos;
    }
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    if (pos >= end) {
      return std::nullopt;
    }
    if (i == index) {
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(text.data() + pos, text.data() + end, v);
      if (ec != std::errc() || p != text.data() + end) {
        return std::nullopt;
      }
      return v;
    }
    pos = end;
  }
}

std::optional<std::uint64_t> ResidentBytes() {
  auto statm = ReadProcFile("/proc/self/statm");
  if (!statm) {
    return std::nullopt;
  }
  std::string_view line(*statm);
  line = line.substr(0, line.find('\n'));
  auto pages = Field(line, 1);
  long page_size = ::sysconf(_SC_PAGESIZE);
  if (!pages || page_size <= 0) {
    return std::nullopt;
  }
  return *pages * static_cast<std::uint64_t>(page_size);
}

std::optional<std::uint64_t> OpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    return std::nullopt;
  }
  std::uint64_t n = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      ++n;
    }
  }
  ::closedir(dir);
  return n > 0 ? n - 1 : 0;  // not the descriptor that listed them
}

std::optional<double> CpuSeconds() {
  auto stat = ReadProcFile("/proc/self/stat");
  if (!stat) {
    return std::nullopt;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are
  // counted after its last ')'. utime and stime are fields 14 and 15 of the whole line.
  auto close = stat->rfind(')');
  if (close == std::string::npos || close + 2 > stat->size()) {
    return std::nullopt;
  }
  std::string_view rest(*stat);
  rest = rest.substr(close + 2);
  rest = rest.substr(0, rest.find('\n'));
  auto utime = Field(rest, 11);
  auto stime = Field(rest, 12);
  long ticks = ::sysconf(_SC_CLK_TCK);
  if (!utime || !stime || ticks <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(*utime + *stime) / static_cast<double>(ticks);
}

std::uint64_t NonNegative(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

// The usage counters per bucket and tier: these name buckets.
void RenderUsagePerBucket(ExpositionWriter& w, const UsageReport& usage) {
  w.Family("strata_usage_objects", "gauge",
           "Stored object versions with a copy on the tier, per bucket (index counters, "
           "exact through crashes).");
  for (const auto& line : usage.buckets) {
    w.Sample("strata_usage_objects", {{"bucket", line.bucket}, {"tier", line.tier}},
             NonNegative(line.objects));
  }
  w.Family("strata_usage_bytes", "gauge",
           "Bytes stored on the tier per bucket (object versions and uploaded parts).");
  for (const auto& line : usage.buckets) {
    w.Sample("strata_usage_bytes", {{"bucket", line.bucket}, {"tier", line.tier}},
             NonNegative(line.bytes));
  }
}

// The usage totals per tier, their capacity and cost.
void RenderUsagePerTier(ExpositionWriter& w, const UsageReport& usage) {
  w.Family("strata_tier_bytes", "gauge", "Bytes stored on the tier, every bucket.");
  for (const auto& tier : usage.tiers) {
    w.Sample("strata_tier_bytes", {{"tier", tier.total.tier}}, NonNegative(tier.total.bytes));
  }
  w.Family("strata_tier_capacity_bytes", "gauge",
           "The tier's configured capacity (local tiers with a capacity only).");
  for (const auto& tier : usage.tiers) {
    if (tier.capacity > 0) {
      w.Sample("strata_tier_capacity_bytes", {{"tier", tier.total.tier}}, tier.capacity);
    }
  }
  w.Family("strata_tier_cost_per_month", "gauge",
           "What a month of storing the tier's bytes costs at its price_per_gb_month.");
  for (const auto& tier : usage.tiers) {
    w.Sample("strata_tier_cost_per_month", {{"tier", tier.total.tier}}, tier.total.cost_per_month);
  }
}

// The usage counters and their cost (gateway/usage_report.h), per bucket (kFull only) and
// per tier.
void RenderUsage(ExpositionWriter& w, const UsageReport& usage, MetricsScope scope) {
  if (scope == MetricsScope::kFull) {
    RenderUsagePerBucket(w, usage);
  }
  RenderUsagePerTier(w, usage);
}

// Eviction and admission on the local tiers with a capacity (storage/engine/tier_caches.h).
void RenderTierCaches(ExpositionWriter& w, const std::vector<storage::TierCacheStats>& tiers) {
  w.Family("strata_evictions_total", "counter",
           "Clean local copies evicted to keep the tier under its capacity.");
  for (const auto& t : tiers) {
    w.Sample("strata_evictions_total", {{"tier", t.tier}}, t.evictions);
  }
  w.Family("strata_evicted_bytes_total", "counter", "Bytes of the local copies evicted.");
  for (const auto& t : tiers) {
    w.Sample("strata_evicted_bytes_total", {{"tier", t.tier}}, t.evicted_bytes);
  }
  w.Family("strata_read_through_fills_total", "counter",
           "Read-through misses the tier cached (admitted) or only streamed (refused: not "
           "read more often than what they would displace).");
  for (const auto& t : tiers) {
    w.Sample("strata_read_through_fills_total", {{"tier", t.tier}, {"decision", "admitted"}},
             t.admitted);
    w.Sample("strata_read_through_fills_total", {{"tier", t.tier}, {"decision", "refused"}},
             t.refused);
  }
  w.Family("strata_eviction_blocked_total", "counter",
           "Eviction passes that ended above the low mark with no clean copy left to evict.");
  for (const auto& t : tiers) {
    w.Sample("strata_eviction_blocked_total", {{"tier", t.tier}}, t.blocked);
  }
}

void RenderLifecycle(ExpositionWriter& w, const storage::LifecycleStats& l) {
  const std::pair<const char*, std::pair<const char*, std::uint64_t>> counters[] = {
      {"strata_lifecycle_passes_total", {"Passes of the lifecycle worker.", l.passes}},
      {"strata_lifecycle_transitions_total",
       {"Versions moved to another storage class by a rule.", l.transitions}},
      {"strata_lifecycle_expirations_total",
       {"Versions and delete markers expired by a rule.", l.expirations}},
      {"strata_lifecycle_aborted_uploads_total",
       {"Incomplete multipart uploads aborted by a rule.", l.aborted_uploads}},
      {"strata_lifecycle_errors_total",
       {"Due rows the worker could not apply (tried again next pass).", l.errors}},
  };
  for (const auto& [name, help_and_value] : counters) {
    w.Family(name, "counter", help_and_value.first);
    w.Sample(name, {}, help_and_value.second);
  }
}

void RenderScrub(ExpositionWriter& w, const storage::ScrubStats& s) {
  w.Family("strata_scrub_running", "gauge", "1 while a scrub pass is under way.");
  w.Sample("strata_scrub_running", {}, std::uint64_t{s.running ? 1u : 0u});
  w.Family("strata_scrub_passes_total", "counter", "Scrub passes completed over every local copy.");
  w.Sample("strata_scrub_passes_total", {}, s.passes_completed);
  w.Family("strata_scrub_objects_total", "counter", "Local copies the scrubber read.");
  w.Sample("strata_scrub_objects_total", {}, s.objects);
  w.Family("strata_scrub_chunks_total", "counter", "64 KiB chunks the scrubber verified.");
  w.Sample("strata_scrub_chunks_total", {}, s.chunks);
  w.Family("strata_scrub_bytes_total", "counter", "Bytes the scrubber read and verified.");
  w.Sample("strata_scrub_bytes_total", {}, s.bytes);
  w.Family("strata_scrub_errors_total", "counter",
           "Local copies the scrubber found damaged (a chunk, a trailer or the recorded "
           "CRC64NVME), by what became of them (skipped: changed or repaired meanwhile).");
  w.Sample("strata_scrub_errors_total", {{"outcome", "repaired"}}, s.repaired);
  w.Sample("strata_scrub_errors_total", {{"outcome", "unrepairable"}}, s.unrepairable);
  w.Sample("strata_scrub_errors_total", {{"outcome", "failed"}}, s.repair_failed);
  w.Sample("strata_scrub_errors_total", {{"outcome", "skipped"}},
           s.errors - std::min(s.errors, s.repaired + s.unrepairable + s.repair_failed));
}

void RenderCluster(ExpositionWriter& w, const storage::ClusterStatus& c) {
  w.Family("strata_cluster_members", "gauge", "Members in this gateway's view of its cluster.");
  w.Sample("strata_cluster_members", {}, std::uint64_t{c.view->members.size()});
  w.Family("strata_cluster_epoch", "gauge",
           "The membership epoch this gateway knows (etcd's revision of the last change).");
  w.Sample("strata_cluster_epoch", {}, static_cast<std::uint64_t>(c.view->epoch));
  w.Family("strata_cluster_may_accept_writes", "gauge",
           "1 while this gateway's membership lease is certainly alive (the write fence).");
  w.Sample("strata_cluster_may_accept_writes", {}, std::uint64_t{c.may_accept_writes ? 1u : 0u});
  w.Family("strata_cluster_keepalives_total", "counter", "Renewals of the membership lease.");
  w.Sample("strata_cluster_keepalives_total", {{"outcome", "ok"}}, c.membership.keepalives);
  w.Sample("strata_cluster_keepalives_total", {{"outcome", "failed"}},
           c.membership.keepalive_failures);
  w.Family("strata_cluster_watch_restarts_total", "counter",
           "Member-list watch streams reopened after a failure.");
  w.Sample("strata_cluster_watch_restarts_total", {}, c.membership.watch_restarts);
  w.Family("strata_peer_connections_total", "counter",
           "Peer transport connections, by what became of them.");
  w.Sample("strata_peer_connections_total", {{"outcome", "accepted"}}, c.transport.accepted);
  w.Sample("strata_peer_connections_total", {{"outcome", "refused"}}, c.transport.refused);
  w.Sample("strata_peer_connections_total", {{"outcome", "failed"}}, c.transport.sessions_failed);
  w.Sample("strata_peer_connections_total", {{"outcome", "connected"}}, c.transport.connects);
  w.Family("strata_peer_calls_served_total", "counter", "Peer calls this gateway served.");
  w.Sample("strata_peer_calls_served_total", {}, c.transport.calls_served);
}

void RenderReplication(ExpositionWriter& w, const storage::ReplicationStats& r) {
  w.Family("strata_replication_syncs_total", "counter",
           "Key syncs this gateway ran as a key's primary, by outcome (failed: the write "
           "answered 503).");
  w.Sample("strata_replication_syncs_total", {{"outcome", "ok"}}, r.syncs);
  w.Sample("strata_replication_syncs_total", {{"outcome", "failed"}}, r.sync_failures);
  w.Family("strata_replication_bytes_total", "counter",
           "Object bytes sent to replicas and received as one.");
  w.Sample("strata_replication_bytes_total", {{"direction", "sent"}}, r.bytes_sent);
  w.Sample("strata_replication_bytes_total", {{"direction", "received"}}, r.bytes_received);
  w.Family("strata_replication_replica_writes_total", "counter",
           "Key syncs applied here as a replica, and refused (not from the key's primary, "
           "or malformed).");
  w.Sample("strata_replication_replica_writes_total", {{"outcome", "applied"}}, r.replica_writes);
  w.Sample("strata_replication_replica_writes_total", {{"outcome", "refused"}}, r.refused);
  w.Family("strata_replication_repair_scans_total", "counter",
           "Background scans after a membership change that finished.");
  w.Sample("strata_replication_repair_scans_total", {}, r.repair_scans);
  w.Family("strata_replication_keys_repaired_total", "counter",
           "Keys the background scans synced to new owners.");
  w.Sample("strata_replication_keys_repaired_total", {}, r.keys_repaired);
  w.Family("strata_replication_under_replicated_keys", "gauge",
           "Keys whose last background sync failed (tried again).");
  w.Sample("strata_replication_under_replicated_keys", {}, r.under_replicated);
  w.Family("strata_replication_repairing", "gauge", "1 while a background scan runs.");
  w.Sample("strata_replication_repairing", {}, std::uint64_t{r.repairing ? 1u : 0u});
  w.Family("strata_replication_keys_moved_total", "counter",
           "Keys moved by a join or a drain: pulled here from their primary, handed off by "
           "a drain of this gateway, and copies dropped here once their owners held them.");
  w.Sample("strata_replication_keys_moved_total", {{"kind", "pulled"}}, r.keys_pulled);
  w.Sample("strata_replication_keys_moved_total", {{"kind", "handed_off"}}, r.keys_handed_off);
  w.Sample("strata_replication_keys_moved_total", {{"kind", "dropped"}}, r.keys_dropped);
  w.Family("strata_replication_moved_bytes_total", "counter",
           "Object bytes background moves sent (held to [cluster] move_rate).");
  w.Sample("strata_replication_moved_bytes_total", {}, r.bytes_moved);
  w.Family("strata_replication_moving", "gauge",
           "1 while this gateway catches up (joining) or drains.");
  w.Sample("strata_replication_moving", {{"kind", "catching_up"}},
           std::uint64_t{r.catching_up ? 1u : 0u});
  w.Sample("strata_replication_moving", {{"kind", "draining"}},
           std::uint64_t{r.draining ? 1u : 0u});
}

void RenderReadCache(ExpositionWriter& w, const storage::ReadCacheStats& c) {
  w.Family("strata_read_cache_bytes", "gauge",
           "Bytes of the copies of versions read through their owners kept here.");
  w.Sample("strata_read_cache_bytes", {}, c.bytes);
  w.Family("strata_read_cache_capacity_bytes", "gauge", "[cluster] read_cache.");
  w.Sample("strata_read_cache_capacity_bytes", {}, c.capacity);
  w.Family("strata_read_cache_entries", "gauge", "Copies kept in the read cache.");
  w.Sample("strata_read_cache_entries", {}, c.entries);
  w.Family("strata_read_cache_events_total", "counter",
           "The read cache's events: hit (a GET's bytes sent from a copy after the key's "
           "primary confirmed its version), fill (a copy kept), refused (a fill dropped: too "
           "large, cut short or a CRC mismatch), eviction, error (a copy found damaged and "
           "dropped).");
  w.Sample("strata_read_cache_events_total", {{"event", "hit"}}, c.hits);
  w.Sample("strata_read_cache_events_total", {{"event", "fill"}}, c.fills);
  w.Sample("strata_read_cache_events_total", {{"event", "refused"}}, c.refused);
  w.Sample("strata_read_cache_events_total", {{"event", "eviction"}}, c.evictions);
  w.Sample("strata_read_cache_events_total", {{"event", "error"}}, c.errors);
}

void RenderFetches(ExpositionWriter& w, const FetchSample& f) {
  w.Family("strata_fetches_total", "counter",
           "Background fetches of upstream copies onto the hot tier (restore, prefetch), by "
           "outcome: fetched, skipped (local already or changed), failed.");
  w.Sample("strata_fetches_total", {{"outcome", "fetched"}}, f.fetches.fetched);
  w.Sample("strata_fetches_total", {{"outcome", "skipped"}}, f.fetches.skipped);
  w.Sample("strata_fetches_total", {{"outcome", "failed"}}, f.fetches.failed);
  w.Family("strata_fetched_bytes_total", "counter", "Bytes the background fetches landed.");
  w.Sample("strata_fetched_bytes_total", {}, f.fetches.fetched_bytes);
  w.Family("strata_fetches_in_flight", "gauge", "Background fetches running now.");
  w.Sample("strata_fetches_in_flight", {}, f.fetches.in_flight);
  w.Family("strata_fetches_waiting", "gauge", "Background fetches queued behind those.");
  w.Sample("strata_fetches_waiting", {}, f.fetches.waiting);
  w.Family("strata_prefetch_jobs_total", "counter",
           "Prefetch jobs started: bulk (the admin API) and learned (a scan recognised).");
  w.Sample("strata_prefetch_jobs_total", {{"kind", "bulk"}}, f.prefetch.jobs_started);
  w.Sample("strata_prefetch_jobs_total", {{"kind", "learned"}}, f.prefetch.learned_started);
  w.Family("strata_prefetched_bytes_total", "counter", "Bytes prefetch jobs brought in.");
  w.Sample("strata_prefetched_bytes_total", {}, f.prefetch.fetched_bytes);
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  char buf[400];
  // Plain decimals ("0.0005", as Prometheus' own le labels read), shortest round trip;
  // the exponent form only where a decimal would be unreadably long.
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e21);
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value,
                                 plain ? std::chars_format::fixed : std::chars_format::general);
  if (ec != std::errc()) {
    return "NaN";
  }
  return std::string(buf, end);
}

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += EscapeHelp(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void ExpositionWriter::Line(std::string_view name, std::string_view suffix,
                            std::span<const Label> labels, std::string_view value) {
  out_ += name;
  out_ += suffix;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& label : labels) {
      if (!first) {
        out_ += ',';
      }
      first = false;
      out_ += label.name;
      out_ += "=\"";
      out_ += EscapeLabelValue(label.value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void ExpositionWriter::Sample(std::string_view name, std::initializer_list<Label> labels,
                              std::uint64_t value) {
  Line(name, "", std::span<const Label>(labels.begin(), labels.size()), std::to_string(value));
}

void ExpositionWriter::Sample(std::string_view name, std::initializer_list<Label> labels,
                              double value) {
  Line(name, "", std::span<const Label>(labels.begin(), labels.size()), FormatSampleValue(value));
}

void ExpositionWriter::Histogram(std::string_view name, std::initializer_list<Label> labels,
                                 std::span<const double> bounds,
                                 std::span<const std::uint64_t> counts, double sum) {
  std::vector<Label> with_le(labels.begin(), labels.end());
  with_le.push_back({"le", ""});
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    std::string le = i < bounds.size() ? FormatSampleValue(bounds[i]) : "+Inf";
    with_le.back().value = le;
    Line(name, "_bucket", with_le, std::to_string(cumulative));
  }
  std::span<const Label> plain(labels.begin(), labels.size());
  Line(name, "_sum", plain, FormatSampleValue(sum));
  Line(name, "_count", plain, std::to_string(cumulative));
}

void MetricsShard::RecordRequest(S3Operation op, unsigned status, std::chrono::nanoseconds elapsed,
                                 std::uint64_t bytes_in, std::uint64_t bytes_out) {
  auto& stats = ops_[static_cast<std::size_t>(op)];
  const unsigned key = status + 1;  // 0 marks a free slot; status 0 (no response) counts too
  bool counted = false;
  for (auto& slot : stats.by_status) {
    unsigned seen = slot.status.load(std::memory_order_relaxed);
    if (seen == key) {
      slot.count.Add(1);
      counted = true;
      break;
    }
    if (seen == 0) {
      slot.count.Add(1);
      slot.status.store(key, std::memory_order_release);
      counted = true;
      break;
    }
  }
  if (!counted) {
    stats.other_status.Add(1);
  }
  double seconds = std::chrono::duration<double>(elapsed).count();
  std::size_t bucket = 0;
  while (bucket < kLatencyBounds.size() && seconds > kLatencyBounds[bucket]) {
    ++bucket;
  }
  stats.latency[bucket].Add(1);
  stats.latency_sum_ns.Add(static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed.count(), 0)));
  bytes_received_.Add(bytes_in);
  bytes_sent_.Add(bytes_out);
}

GatewayMetrics::GatewayMetrics() : started_(std::chrono::steady_clock::now()) {}

MetricsShard& GatewayMetrics::AddShard() {
  shards_.push_back(std::make_unique<MetricsShard>());
  return *shards_.back();
}

std::string GatewayMetrics::Render(const ScrapeSample& sample, MetricsScope scope) const {
  // Sums over the shards, per operation.
  struct OperationSum {
    std::map<unsigned, std::uint64_t> by_status;
    std::uint64_t other_status = 0;
    std::array<std::uint64_t, kLatencyBounds.size() + 1> latency{};
    std::uint64_t latency_sum_ns = 0;
  };
  std::vector<OperationSum> ops(kS3OperationCount);
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_sent = 0;
  std::int64_t connections_open = 0;
  std::uint64_t connections_total = 0;
  std::uint64_t connections_refused = 0;
  std::uint64_t connections_evicted = 0;
  for (const auto& shard : shards_) {
    for (std::size_t op = 0; op < kS3OperationCount; ++op) {
      const auto& in = shard->ops_[op];
      auto& out = ops[op];
      for (const auto& slot : in.by_status) {
        unsigned key = slot.status.load(std::memory_order_acquire);
        if (key == 0) {
          break;
        }
        out.by_status[key - 1] += slot.count.Get();
      }
      out.other_status += in.other_status.Get();
      for (std::size_t b = 0; b < in.latency.size(); ++b) {
        out.latency[b] += in.latency[b].Get();
      }
      out.latency_sum_ns += in.latency_sum_ns.Get();
    }
    bytes_received += shard->bytes_received_.Get();
    bytes_sent += shard->bytes_sent_.Get();
    // Closed before opened: a connection opens and closes on one shard, so the open count
    // read second is never below the closed count read first.
    std::uint64_t closed = shard->connections_closed_.Get();
    std::uint64_t opened = shard->connections_opened_.Get();
    connections_open += static_cast<std::int64_t>(opened) - static_cast<std::int64_t>(closed);
    connections_total += opened;
    connections_refused += shard->connections_refused_.Get();
    connections_evicted += shard->connections_evicted_.Get();
  }

  ExpositionWriter w;
  w.Family("strata_requests_total", "counter",
           "Requests answered, by S3 operation (HTTP method when none applies) and HTTP "
           "status (code=\"other\": beyond the statuses tracked per operation).");
  for (std::size_t op = 0; op < kS3OperationCount; ++op) {
    auto name = OperationName(static_cast<S3Operation>(op));
    for (const auto& [status, count] : ops[op].by_status) {
      w.Sample("strata_requests_total", {{"op", name}, {"code", std::to_string(status)}}, count);
    }
    if (ops[op].other_status > 0) {
      w.Sample("strata_requests_total", {{"op", name}, {"code", "other"}}, ops[op].other_status);
    }
  }
  w.Family("strata_request_duration_seconds", "histogram",
           "Time from a request's complete header to the end of its response, by operation.");
  for (std::size_t op = 0; op < kS3OperationCount; ++op) {
    const auto& sum = ops[op];
    std::uint64_t count = 0;
    for (auto c : sum.latency) {
      count += c;
    }
    if (count == 0) {
      continue;
    }
    w.Histogram("strata_request_duration_seconds",
                {{"op", OperationName(static_cast<S3Operation>(op))}}, kLatencyBounds, sum.latency,
                static_cast<double>(sum.latency_sum_ns) / 1e9);
  }
  w.Family("strata_bytes_received_total", "counter", "Request body bytes received.");
  w.Sample("strata_bytes_received_total", {}, bytes_received);
  w.Family("strata_bytes_sent_total", "counter", "Response body bytes sent.");
  w.Sample("strata_bytes_sent_total", {}, bytes_sent);
  w.Family("strata_connections_open", "gauge", "Client connections open now.");
  w.Sample("strata_connections_open", {},
           static_cast<std::uint64_t>(std::max<std::int64_t>(connections_open, 0)));
  w.Family("strata_connections_total", "counter", "Client connections accepted since start.");
  w.Sample("strata_connections_total", {}, connections_total);
  w.Family("strata_connections_refused_total", "counter",
           "Connections turned away at accept (503 SlowDown, then closed): at "
           "server.max_connections with no idle connection to close, or out of file "
           "descriptors.");
  w.Sample("strata_connections_refused_total", {}, connections_refused);
  w.Family("strata_connections_evicted_total", "counter",
           "Idle keep-alive connections closed to make room for a new one at "
           "server.max_connections.");
  w.Sample("strata_connections_evicted_total", {}, connections_evicted);
  w.Family("strata_checksum_mismatches_total", "counter",
           "Chunks of local data files whose CRC64NVME did not match when read; each read "
           "was refused.");
  w.Sample("strata_checksum_mismatches_total", {}, sample.checksum_mismatches);
  w.Family("strata_integrity_repairs_total", "counter",
           "Damaged local copies replaced by the upstream's copy, verified against the "
           "recorded CRC64NVME (read repair and the scrubber).");
  w.Sample("strata_integrity_repairs_total", {}, sample.integrity_repairs);
  w.Family("strata_integrity_unrepairable_total", "counter",
           "Damaged local copies with no other copy (not written back yet): each such read "
           "stays an error.");
  w.Sample("strata_integrity_unrepairable_total", {}, sample.integrity_unrepairable);
  w.Family("strata_integrity_repair_failures_total", "counter",
           "Repairs tried and failed (upstream unreachable, or its copy did not match the "
           "recorded CRC64NVME either); the damaged copy stays and its reads fail.");
  w.Sample("strata_integrity_repair_failures_total", {}, sample.integrity_repair_failures);
  w.Family("strata_get_send_block_bytes", "gauge",
           "Bytes of send blocks GET responses hold now (bounded per core; "
           "gateway/send_budget.h).");
  w.Sample("strata_get_send_block_bytes", {}, sample.send_block_bytes);
  if (sample.writeback) {
    const WritebackSample& wb = *sample.writeback;
    w.Family("strata_writeback_backlog_objects", "gauge",
             "Keys whose latest change waits to be written back upstream.");
    w.Sample("strata_writeback_backlog_objects", {}, wb.objects);
    w.Family("strata_writeback_backlog_bytes", "gauge",
             "Bytes of the versions waiting to be written back upstream.");
    w.Sample("strata_writeback_backlog_bytes", {}, wb.bytes);
    w.Family("strata_writeback_oldest_age_seconds", "gauge",
             "Age of the oldest change waiting to be written back (as of the worker's last "
             "scan); 0 when none waits.");
    w.Sample("strata_writeback_oldest_age_seconds", {}, wb.oldest_age_seconds);
    w.Family("strata_writeback_pushes_total", "counter",
             "Changes written back upstream (PUTs and DELETEs).");
    w.Sample("strata_writeback_pushes_total", {}, wb.pushes);
    w.Family("strata_writeback_failures_total", "counter",
             "Failed write-back attempts (each is retried with backoff).");
    w.Sample("strata_writeback_failures_total", {}, wb.failures);
  }
  if (sample.usage) {
    RenderUsage(w, *sample.usage, scope);
  }
  if (sample.index_cache) {
    w.Family("strata_index_cache_capacity_bytes", "gauge",
             "Size of the index's block cache (server.index_cache).");
    w.Sample("strata_index_cache_capacity_bytes", {}, sample.index_cache->capacity);
    w.Family("strata_index_cache_bytes", "gauge",
             "Bytes of index blocks the block cache holds now.");
    w.Sample("strata_index_cache_bytes", {}, sample.index_cache->used);
  }
  if (sample.index_reads) {
    w.Family("strata_index_reads_total", "counter",
             "Index reads of the request path: served inline from memory (memtables, block "
             "cache), or on the blocking pool because they needed the disk.");
    w.Sample("strata_index_reads_total", {{"path", "memory"}}, sample.index_reads->memory);
    w.Sample("strata_index_reads_total", {{"path", "pool"}}, sample.index_reads->pool);
  }
  if (!sample.tier_caches.empty()) {
    RenderTierCaches(w, sample.tier_caches);
  }
  if (sample.lifecycle) {
    RenderLifecycle(w, *sample.lifecycle);
  }
  if (sample.fetch) {
    RenderFetches(w, *sample.fetch);
  }
  if (sample.scrub) {
    RenderScrub(w, *sample.scrub);
  }
  if (sample.cluster) {
    RenderCluster(w, *sample.cluster);
  }
  if (sample.replication) {
    RenderReplication(w, *sample.replication);
  }
  if (sample.read_cache) {
    RenderReadCache(w, *sample.read_cache);
  }
  if (sample.forwarded_gets) {
    const auto& gets = *sample.forwarded_gets;
    w.Family("strata_forwarded_gets_total", "counter",
             "GETs forwarded to their key's primary, by where their bytes came from: the "
             "owner, this gateway's replica of the key, or its read cache.");
    w.Sample("strata_forwarded_gets_total", {{"bytes_from", "owner"}}, gets.from_owner);
    w.Sample("strata_forwarded_gets_total", {{"bytes_from", "replica"}}, gets.from_replica);
    w.Sample("strata_forwarded_gets_total", {{"bytes_from", "cache"}}, gets.from_cache);
  }
  w.Family("strata_build_info", "gauge", "The running strata's version; always 1.");
  w.Sample("strata_build_info", {{"version", STRATA_VERSION}}, std::uint64_t{1});
  w.Family("strata_uptime_seconds", "gauge", "Seconds since the server started.");
  w.Sample("strata_uptime_seconds", {}, sample.uptime_seconds);
  if (sample.resident_bytes) {
    w.Family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    w.Sample("process_resident_memory_bytes", {}, *sample.resident_bytes);
  }
  if (sample.open_fds) {
    w.Family("process_open_fds", "gauge", "Number of open file descriptors.");
    w.Sample("process_open_fds", {}, *sample.open_fds);
  }
  if (sample.cpu_seconds) {
    w.Family("process_cpu_seconds_total", "counter", "Total user and system CPU time in seconds.");
    w.Sample("process_cpu_seconds_total", {}, *sample.cpu_seconds);
  }
  return w.text();
}

std::string GatewayMetrics::Scrape() const {
  return Render(SampleProcess(), MetricsScope::kAggregate);
}

std::string GatewayMetrics::Scrape(const Services& services, MetricsScope scope) const {
  ScrapeSample sample = SampleProcess();
  // A few rows of a small column family, mostly in the memtable: cheap enough inline.
  auto usage = ReadUsageReport(services.config, services.index);
  if (usage.ok()) {
    sample.usage = std::move(usage).value();
  }
  sample.index_cache = services.index.BlockCache();
  sample.index_reads = metadata::ReadInlineCounts();
  if (services.cluster != nullptr) {
    sample.cluster = services.cluster->Status();
  }
  if (services.replication != nullptr) {
    sample.replication = services.replication->Stats();
  }
  if (services.read_cache != nullptr) {
    sample.read_cache = services.read_cache->Stats();
  }
  if (services.cluster != nullptr) {
    sample.forwarded_gets = ForwardedGets();
  }
  {
    storage::EngineStats engine = services.engine.Stats();
    sample.tier_caches = std::move(engine.tier_caches);
    sample.lifecycle = engine.lifecycle;
    sample.scrub = engine.scrub;
    if (engine.fetch && engine.prefetch) {
      sample.fetch = FetchSample{*engine.fetch, *engine.prefetch};
    }
    if (engine.writeback) {
      const auto totals = services.index.WritebackBacklog();
      const storage::WritebackStats& stats = *engine.writeback;
      const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      services.clock.Now().time_since_epoch())
                                      .count();
      sample.writeback = WritebackSample{
          totals.objects, totals.bytes,
          stats.oldest_enqueued_ms == 0 || totals.objects == 0
              ? 0.0
              : std::max<std::int64_t>(0, now_ms - stats.oldest_enqueued_ms) / 1000.0,
          stats.pushes, stats.failures};
    }
  }
  return Render(sample, scope);
}

ScrapeSample GatewayMetrics::SampleProcess() const {
  ScrapeSample sample;
  sample.uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  sample.checksum_mismatches = storage::ChecksumMismatches();
  sample.integrity_repairs = storage::IntegrityRepairs();
  sample.integrity_unrepairable = storage::IntegrityUnrepairable();
  sample.integrity_repair_failures = storage::IntegrityRepairFailures();
  sample.send_block_bytes = SendBlockBytes();
  sample.resident_bytes = ResidentBytes();
  sample.open_fds = OpenFds();
  sample.cpu_seconds = CpuSeconds();
  return sample;
}

bool IsMetricsScrape(boost::beast::http::verb method, std::string_view target,
                     std::string_view host, std::string_view authorization,
                     std::string_view domain) {
  if (method != boost::beast::http::verb::get) {
    return false;
  }
  std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics" && path != "/_strata/metrics") {
    return false;
  }
  auto parsed = ParseS3Target(target, host, domain);
  if (!parsed.ok() || parsed->virtual_hosted) {
    return false;
  }
  if (!auth::BearerToken(authorization).empty()) {
    return true;  // no S3 client sends a bearer token: a scraper's
  }
  bool signed_request = !authorization.empty();
  for (auto name : kQuerySignatureParams) {
    signed_request = signed_request || parsed->HasParam(name);
  }
  return !signed_request || path == "/_strata/metrics";
}

}  // namespace strata::gateway
