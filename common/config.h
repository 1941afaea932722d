// Config: the parsed, validated contents of strata's one TOML file.
//
// Loading either yields a complete Config or an Error whose message names the offending
// key (unknown keys, bad values, missing required keys): nothing starts half-configured.
// A Config is immutable once loaded; share it by const reference or shared_ptr.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace strata {

struct ServerConfig {
  std::vector<std::string> listen = {"127.0.0.1:9000"};  // "host:port", "[::1]:port"
  std::string region = "us-east-1";
  std::string data_dir = "./var/strata";
  int threads = 0;  // 0: one per core
  std::string tls_cert;
  std::string tls_key;
  std::string domain;  // non-empty: virtual-hosted-style buckets under this domain
  bool fsync = true;   // fsync object data and the index before acknowledging a write
  // Local tier files read and written through io_uring when the kernel allows it;
  // false: pread/pwrite on the I/O threads (storage/data_path.h).
  bool io_uring = true;
  std::size_t max_header_bytes = 16 * 1024;
  // The index's block cache (RocksDB, shared by its column families): the index rows of
  // recently read keys stay decompressed in memory.
  std::size_t index_cache_bytes = std::size_t{64} << 20;
  // XML request bodies and their parse trees, every request together (gateway/xml_budget.h);
  // past it such requests get 503 SlowDown.
  std::uint64_t xml_memory_bytes = std::uint64_t{64} << 20;
  std::chrono::milliseconds header_timeout{10'000};  // whole request header must arrive
  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive and body inactivity
  std::chrono::milliseconds shutdown_grace{10'000};  // in-flight requests on SIGTERM
  // A request body must average at least this many bytes a second over the time spent
  // waiting for it, after a grace period (Apache's mod_reqtimeout model): a client
  // trickling a byte at a time cannot hold a connection. 0: only idle_timeout applies.
  std::uint64_t body_min_rate_bytes_per_s = 500;
  std::chrono::milliseconds body_rate_grace{20'000};
  // Client connections open at once, over every core; past it the oldest idle keep-alive
  // connection is closed to make room, or the new one is refused. 0: derived from
  // RLIMIT_NOFILE at start (gateway/connection_limit.h).
  std::size_t max_connections = 0;
  std::string log_level = "info";
  // What a bucket created without x-amz-object-ownership starts with: "ObjectWriter" (the
  // default: ACLs apply, as in Ceph RGW and in S3 before April 2023, so tools and test
  // suites that rely on ACLs work), "BucketOwnerPreferred", or "BucketOwnerEnforced"
  // (AWS's default now: ACLs are off).
  std::string default_object_ownership = "ObjectWriter";
  // Whether a new bucket starts with all four public access block flags on (AWS's default
  // now) or with none (the default).
  bool default_public_access_block = false;
  // Serve Prometheus metrics on GET /metrics and GET /_strata/metrics.
  bool metrics = true;
  // Whether a scrape without credentials gets the aggregate series (true) or 403 (false).
  // Series that name buckets (usage per bucket) always need metrics_token or an admin's
  // signature: bucket names are every user's private data.
  bool metrics_public = true;
  // `Authorization: Bearer <token>` on a scrape (what Prometheus sends) reads every series.
  // Empty: no token is accepted. Compared in constant time.
  std::string metrics_token;
  bool tls_enabled() const { return !tls_cert.empty() && !tls_key.empty(); }
};

struct UserConfig {
  std::string access_key;
  std::string secret_key;
  bool admin = false;
};

enum class TierKind { kLocal, kPeer, kS3 };
// The kind as the configuration spells it: "local", "peer", "s3".
std::string_view TierKindName(TierKind kind);

struct TierConfig {
  std::string name;
  TierKind kind = TierKind::kLocal;
  std::string path;            // local
  std::uint64_t capacity = 0;  // bytes; 0: unlimited
  // local tiers with a capacity: above high_watermark x capacity, clean copies are
  // evicted until the tier is under low_watermark x capacity (storage/engine/eviction).
  double high_watermark = 0.95;
  double low_watermark = 0.85;
  double price_per_gb_month = 0.0;
  std::string endpoint;              // s3
  std::string access_key;            // s3
  std::string secret_key;            // s3
  std::string region = "us-east-1";  // s3
  // s3, https endpoints: the PEM file of the certificates to trust (a private CA, a
  // self-signed upstream); empty: the system's trust store.
  std::string ca_file;
  // s3: a cached copy is checked against the upstream (a conditional GET) when it was
  // last checked longer ago than this.
  std::chrono::milliseconds revalidate_after{300'000};
};

struct WritebackConfig {
  std::chrono::milliseconds delay{5'000};
  // Bytes of acknowledged writes not yet upstream above which PUTs get 503 SlowDown.
  std::uint64_t dirty_limit = 10ull << 30;
};

struct LifecycleConfig {
  std::chrono::milliseconds day{86'400'000};
  std::chrono::milliseconds interval{60'000};
};

// The scrubber (storage/engine/scrubber.h): reads every local copy at most
// bytes_per_second, verifying each chunk and the recorded CRC64NVME, and repairs what it
// can from the upstream. A pass starts `interval` after the previous one ended (the first
// `interval` after start); bytes_per_second = 0 runs no background passes (one asked for
// with `strata-admin scrub start` then runs unthrottled).
struct ScrubConfig {
  std::uint64_t bytes_per_second = 16ull << 20;
  std::chrono::milliseconds interval{86'400'000};
};

// Learned prefetch (storage/engine/prefetch_jobs.h): a run of read-through misses under
// one prefix (a key's "directory": up to its last '/') is taken for a scan once
// scan_threshold different keys there missed within scan_window; the rest of the prefix
// is then fetched ahead of the reader, at most `budget` bytes per scan and only into the
// hot tier's room below its high mark (what the scan still needs is never evicted for it).
struct PrefetchConfig {
  bool learned = true;
  int scan_threshold = 8;
  std::chrono::milliseconds scan_window{30'000};
  std::uint64_t budget = 4ull << 30;
  // Fetches in flight at once, shared by RestoreObject, bulk and learned prefetch.
  int concurrency = 4;
};

// [cluster]: several gateways sharing one namespace (DESIGN.md, "Cluster"). Present only
// when the file has the section; without it strata is one gateway, as before. Membership
// (storage/membership.h) registers `node` in etcd under `/<name>/members/<node>` with a
// lease of lease_ttl.
// [cluster] transport: which peer transport (storage/peer_transport.h) to use.
enum class ClusterTransport {
  kAuto,  // RDMA when the machine has an RDMA device, else TCP (one log line says so)
  kTcp,
  kRdma,  // RDMA or a start error
};

struct ClusterConfig {
  // This gateway's name, unique in the cluster (required): letters, digits, '.', '_', '-',
  // at most 64 characters (it is part of an etcd key).
  std::string node;
  std::string zone = "default";  // its failure domain (rack, switch)
  std::string peer_listen;       // the peer transport's "host:port" (required)
  // etcd's client URLs, "http://host:port" (at least one); a connection failure tries the
  // next.
  std::vector<std::string> etcd;
  int replicas = 3;  // copies of every object in the warm pool, >= 1
  // Shared by the gateways; keys the peers' HMAC handshake (required, >= 16 characters).
  std::string secret;
  // The membership lease: a gateway that cannot renew it for this long leaves the cluster.
  // Whole seconds (etcd's unit), at least 2s (etcd's own minimum).
  std::chrono::milliseconds lease_ttl{5'000};
  // The cluster's name: the prefix of its keys in etcd, so clusters may share one etcd.
  std::string name = "strata";
  // "auto" | "tcp" | "rdma".
  ClusterTransport transport = ClusterTransport::kAuto;
  // Bytes a second this gateway sends to move keys in the background (a join, a drain, the
  // repair after a death); writes and reads are not held to it.
  std::uint64_t move_rate = std::uint64_t{256} << 20;
  // Bytes of copies of versions this gateway read through their owners, kept in
  // <hot tier path>/read-cache (storage/read_cache.h) besides the hot tier's capacity;
  // 0 keeps none.
  std::uint64_t read_cache = std::uint64_t{4} << 30;
};

struct Config {
  ServerConfig server;
  std::vector<UserConfig> users;
  std::vector<TierConfig> tiers;
  std::map<std::string, std::string> storage_classes;  // S3 storage class -> tier name
  WritebackConfig writeback;
  LifecycleConfig lifecycle;
  PrefetchConfig prefetch;
  ScrubConfig scrub;
  std::optional<ClusterConfig> cluster;  // empty: no [cluster] section, a single gateway

  // The upstream: the first tier of kind s3, or nullptr.
  const TierConfig* UpstreamTier() const;
  // The tier that new writes land on: the one STANDARD maps to.
  const TierConfig* HotTier() const;
  // The tier a storage class names: [storage_classes], else HOT, WARM and COLD name the
  // tiers "hot", "warm" and "cold" (COLD: the upstream when no tier is named "cold", HOT:
  // the hot tier). nullptr when the class names no tier here.
  const TierConfig* TierOfClass(std::string_view storage_class) const;
};

// Parses TOML text. `origin` names the source in error messages (a path or "<embedded>").
Result<Config> ParseConfig(std::string_view toml_text, std::string_view origin);
// Reads and parses a file; a missing or unreadable file is an error naming the path.
Result<Config> LoadConfigFile(const std::string& path);

// "20GiB", "512MiB", "1000", "4KB" -> bytes.
Result<std::uint64_t> ParseByteSize(std::string_view text);
// "5s", "250ms", "2m", "1h", "86400s" -> milliseconds.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// The default configuration compiled into the binary (conf/strata.toml).
std::string_view EmbeddedDefaultConfig();

}  // namespace strata
