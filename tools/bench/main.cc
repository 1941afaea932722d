// strata-bench: the load generator and micro benchmarks behind tools/bench/run.sh.
//
//   strata-bench load     --endpoint URL --method GET|HEAD|PUT|MIX [key and load options]
//   strata-bench populate --endpoint URL [key options] --size N   (PUTs every key once)
//   strata-bench list     --endpoint URL --bucket B [--duration S] [--max-pages N]
//   strata-bench request  --endpoint URL --method M --path /b[/k] [--query Q] [--body S]
//   strata-bench presign  --endpoint URL [key options] [--expires S]   (one path?query a line)
//   strata-bench crc      [--mib 256] [--rounds 5]
//   strata-bench sigv4    [--duration 2]
//   strata-bench policy   [--duration 2] [--statements 20]
//   strata-bench lifecycle [--objects 10000] [--due 1000] [--dir D]  (a pass's cost vs size)
//   strata-bench cache [--objects 100000] [--fraction 0.3] [--epochs 4] [--zipf 0.9]
//                      [--zipf-reads 2000000] [--zipf-fraction 0.05]  (eviction policy vs LRU)
//   strata-bench epoch --endpoint URL [key options] [--readers 8] [--batch 8] [--epochs 3]
//                      [--compute-ms 20] [--seed 1] [--misses]  (training reads; epoch.h)
//
// Key options: --bucket B --key-prefix P --first N --count N --step N
//   [--suffixes N --suffix-first N] (see KeySet in load.h)
// Load options: --connections N --threads N --duration S --requests N --warmup S --size N
//   --random --unsigned-payload --part-size N --read-percent P --mix-overwrite --read-rate
//   BYTES_PER_S
// Signing: --plain (no signature: nginx), else SigV4 in the Authorization header with
//   --access-key/--secret-key/--region (default: strata's bootstrap user).
// Every mode prints one JSON object on stdout (also to --json FILE) and exits 1 when any
// request failed (a non-2xx answer counts as a failure), so a run cannot hide errors.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "auth/signer.h"
#include "common/text.h"
#include "tools/bench/cache_sim.h"
#include "tools/bench/epoch.h"
#include "tools/bench/lifecycle_lag.h"
#include "tools/bench/load.h"
#include "tools/bench/micro.h"

namespace {

using strata::bench::Endpoint;

int Usage(const char* why) {
  std::fprintf(stderr,
               "strata-bench: %s\n"
               "usage: strata-bench "
               "load|populate|list|request|presign|crc|sigv4|policy|lifecycle|cache|epoch "
               "[--option value]...\n"
               "       (see the comment at the top of tools/bench/main.cc, or "
               "tools/bench/README.md)\n",
               why);
  return 2;
}

// --name value pairs; flags without a value map to "1".
class Args {
 public:
  bool Parse(int argc, char** argv, int from, std::string& error) {
    static const char* kFlags[] = {"--random", "--plain", "--unsigned-payload", "--mix-overwrite",
                                   "--misses"};
    for (int i = from; i < argc; ++i) {
      std::string name = argv[i];
      if (name.rfind("--", 0) != 0) {
        error = "unexpected argument " + name;
        return false;
      }
      bool flag = false;
      for (const char* f : kFlags) {
        flag = flag || name == f;
      }
      if (!flag && i + 1 >= argc) {
        error = name + " needs a value";
        return false;
      }
      std::string value(flag ? "1" : argv[++i]);
      values_.insert_or_assign(name.substr(2), std::move(value));
    }
    return true;
  }
  std::string Str(const std::string& name, const std::string& fallback = "") {
    used_[name] = true;
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  std::uint64_t U64(const std::string& name, std::uint64_t fallback) {
    std::string v = Str(name);
    return v.empty() ? fallback : std::strtoull(v.c_str(), nullptr, 10);
  }
  double Num(const std::string& name, double fallback) {
    std::string v = Str(name);
    return v.empty() ? fallback : std::strtod(v.c_str(), nullptr);
  }
  bool Has(const std::string& name) {
    used_[name] = true;
    return values_.count(name) > 0;
  }
  // An option nobody asked for is a typo; refuse it rather than run the wrong benchmark.
  std::string Unused() const {
    for (const auto& [name, value] : values_) {
      if (!used_.count(name)) {
        return "--" + name;
      }
    }
    return {};
  }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> used_;
};

std::string JsonString(const std::string& s) { return "\"" + strata::JsonEscape(s) + "\""; }

// Prints `json` and writes it to --json FILE when given.
int Emit(Args& args, const std::string& json, bool failed) {
  std::printf("%s\n", json.c_str());
  std::string file = args.Str("json");
  if (!file.empty()) {
    FILE* f = std::fopen(file.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "strata-bench: cannot write %s\n", file.c_str());
      return 1;
    }
    std::fprintf(f, "%s\n", json.c_str());
    std::fclose(f);
  }
  return failed ? 1 : 0;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

strata::bench::KeySet Keys(Args& args) {
  strata::bench::KeySet k;
  k.bucket = args.Str("bucket", "bench");
  k.key_prefix = args.Str("key-prefix", "k");
  k.first = args.U64("first", 0);
  k.count = args.U64("count", 1);
  k.step = args.U64("step", 1);
  k.suffixes = args.U64("suffixes", 0);
  k.suffix_first = args.U64("suffix-first", 0);
  return k;
}

std::optional<Endpoint> GetEndpoint(Args& args) {
  std::string error;
  auto ep = strata::bench::ParseEndpoint(args.Str("endpoint", "http://127.0.0.1:9000"), error);
  if (!ep) {
    std::fprintf(stderr, "strata-bench: %s\n", error.c_str());
    return std::nullopt;
  }
  ep->sign = !args.Has("plain");
  ep->access_key = args.Str("access-key", ep->access_key);
  ep->secret_key = args.Str("secret-key", ep->secret_key);
  ep->region = args.Str("region", ep->region);
  return ep;
}

int Load(Args& args, bool populate) {
  auto ep = GetEndpoint(args);
  if (!ep) {
    return 2;
  }
  strata::bench::LoadOptions o;
  o.keys = Keys(args);
  o.method = populate ? "PUT" : args.Str("method", "GET");
  if (o.method != "GET" && o.method != "HEAD" && o.method != "PUT" && o.method != "MIX") {
    return Usage("--method must be GET, HEAD, PUT or MIX");
  }
  o.random_order = args.Has("random");
  o.connections = static_cast<int>(args.U64("connections", 16));
  o.threads = static_cast<int>(args.U64("threads", 1));
  o.requests = populate ? o.keys.Size() : args.U64("requests", 0);
  o.duration_s = args.Num("duration", o.requests > 0 ? 0 : 5);
  o.warmup_s = args.Num("warmup", 0);
  o.size = args.U64("size", 4096);
  o.payload_sha256 = !args.Has("unsigned-payload");
  o.part_size = args.U64("part-size", 0);
  o.read_percent = static_cast<int>(args.U64("read-percent", 90));
  o.read_rate = args.U64("read-rate", 0);
  o.mix_overwrite = args.Has("mix-overwrite");
  std::string label = args.Str("label", o.method);
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  if (o.duration_s <= 0 && o.requests == 0) {
    return Usage("give --duration or --requests");
  }
  auto r = strata::bench::RunLoad(*ep, o);
  double secs = r.seconds > 0 ? r.seconds : 1e-9;
  std::string json =
      "{\"mode\":\"" + std::string(populate ? "populate" : "load") +
      "\",\"label\":" + JsonString(label) + ",\"method\":\"" + o.method +
      "\",\"signed\":" + (ep->sign ? "true" : "false") +
      ",\"connections\":" + std::to_string(o.connections) +
      ",\"threads\":" + std::to_string(o.threads) + ",\"keys\":" + std::to_string(o.keys.Size()) +
      ",\"size\":" + std::to_string(o.size) + ",\"requests\":" + std::to_string(r.requests) +
      ",\"errors\":" + std::to_string(r.errors) + ",\"bytes\":" + std::to_string(r.bytes) +
      ",\"seconds\":" + Fmt("%.3f", r.seconds) +
      ",\"req_per_s\":" + Fmt("%.1f", static_cast<double>(r.requests) / secs) +
      ",\"mb_per_s\":" + Fmt("%.1f", static_cast<double>(r.bytes) / secs / 1e6) +
      ",\"p50_ms\":" + Fmt("%.3f", r.p50_ms) + ",\"p90_ms\":" + Fmt("%.3f", r.p90_ms) +
      ",\"p99_ms\":" + Fmt("%.3f", r.p99_ms) + ",\"max_ms\":" + Fmt("%.3f", r.max_ms) +
      ",\"mean_ms\":" + Fmt("%.3f", r.mean_ms) + ",\"ttfb_p50_ms\":" + Fmt("%.3f", r.ttfb_p50_ms) +
      ",\"ttfb_p99_ms\":" + Fmt("%.3f", r.ttfb_p99_ms) +
      ",\"first_error\":" + JsonString(r.first_error) + "}";
  if (r.errors > 0) {
    std::fprintf(stderr, "strata-bench: %" PRIu64 " errors; first: %s\n", r.errors,
                 r.first_error.c_str());
  }
  return Emit(args, json, r.errors > 0 || r.requests == 0);
}

int List(Args& args) {
  auto ep = GetEndpoint(args);
  if (!ep) {
    return 2;
  }
  strata::bench::ListOptions o;
  o.bucket = args.Str("bucket", "bench");
  o.prefix = args.Str("prefix");
  o.max_keys = static_cast<int>(args.U64("max-keys", 1000));
  o.duration_s = args.Num("duration", 5);
  o.max_pages = args.U64("max-pages", 0);
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  auto r = strata::bench::RunList(*ep, o);
  std::string json =
      "{\"mode\":\"list\",\"bucket\":" + JsonString(o.bucket) +
      ",\"max_keys\":" + std::to_string(o.max_keys) + ",\"pages\":" + std::to_string(r.pages) +
      ",\"keys\":" + std::to_string(r.keys) + ",\"errors\":" + std::to_string(r.errors) +
      ",\"seconds\":" + Fmt("%.3f", r.seconds) + ",\"p50_ms\":" + Fmt("%.3f", r.p50_ms) +
      ",\"p99_ms\":" + Fmt("%.3f", r.p99_ms) + ",\"mean_ms\":" + Fmt("%.3f", r.mean_ms) +
      ",\"first_error\":" + JsonString(r.first_error) + "}";
  if (r.errors > 0) {
    std::fprintf(stderr, "strata-bench: list failed: %s\n", r.first_error.c_str());
  }
  return Emit(args, json, r.errors > 0 || r.pages == 0);
}

int Request(Args& args) {
  auto ep = GetEndpoint(args);
  if (!ep) {
    return 2;
  }
  std::string method = args.Str("method", "GET");
  std::string path = args.Str("path", "/");
  std::string query = args.Str("query");
  std::string body = args.Str("body");
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  std::string answer;
  int status = strata::bench::SendOne(*ep, method, path, query, body, answer);
  std::printf("%d\n%s\n", status, answer.c_str());
  return status >= 200 && status < 300 ? 0 : 1;
}

int Presign(Args& args) {
  auto ep = GetEndpoint(args);
  if (!ep) {
    return 2;
  }
  auto keys = Keys(args);
  auto expires = std::chrono::seconds(args.U64("expires", 3600));
  std::string method = args.Str("method", "GET");
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  bool v6 = ep->host.find(':') != std::string::npos;
  std::string host = (v6 ? "[" + ep->host + "]" : ep->host) + ":" + ep->port;
  strata::auth::Credential cred{ep->access_key, ep->secret_key, false};
  auto now = std::chrono::system_clock::now();
  for (std::uint64_t i = 0; i < keys.Size(); ++i) {
    strata::auth::SignRequest req;
    req.method = method;
    req.raw_path = keys.PathAt(i);
    req.headers.emplace_back("host", host);
    std::string query = strata::auth::PresignV4(req, cred, ep->region, "s3", now, expires);
    std::printf("%s?%s\n", req.raw_path.c_str(), query.c_str());
  }
  return 0;
}

int Crc(Args& args) {
  std::uint64_t mib = args.U64("mib", 256);
  int rounds = static_cast<int>(args.U64("rounds", 5));
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  auto r = strata::bench::RunCrc(mib, rounds);
  std::string json = "{\"mode\":\"crc\",\"buffer_bytes\":" + std::to_string(r.buffer_bytes) +
                     ",\"clmul\":" + (r.clmul ? "true" : "false") +
                     ",\"crc64nvme_gb_per_s\":" + Fmt("%.3f", r.crc_gbps) +
                     ",\"crc64nvme_portable_gb_per_s\":" + Fmt("%.3f", r.portable_gbps) +
                     ",\"memcpy_gb_per_s\":" + Fmt("%.3f", r.memcpy_gbps) + "}";
  return Emit(args, json, r.crc_gbps <= 0);
}

int Lifecycle(Args& args) {
  const std::string dir = args.Str("dir", "/tmp/strata-bench-lifecycle");
  const std::uint64_t objects = args.U64("objects", 10'000);
  const std::uint64_t due = args.U64("due", 1'000);
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  auto r = strata::bench::RunLifecycleLag(dir, objects, due);
  if (!r.ok()) {
    std::fprintf(stderr, "strata-bench: lifecycle: %s\n", r.error().message.c_str());
    return 1;
  }
  std::string json =
      "{\"mode\":\"lifecycle\",\"objects\":" + std::to_string(r->objects) +
      ",\"due\":" + std::to_string(r->due) + ",\"fill_s\":" + Fmt("%.3f", r->fill_s) +
      ",\"first_pass_s\":" + Fmt("%.3f", r->first_pass_s) +
      ",\"pass_s\":" + Fmt("%.4f", r->pass_s) + ",\"idle_pass_s\":" + Fmt("%.5f", r->idle_pass_s) +
      ",\"expired\":" + std::to_string(r->expired) +
      ",\"due_left\":" + std::to_string(r->due_left) + "}";
  // Every due version must have gone, in the two passes that had any.
  return Emit(args, json, r->expired != 2 * r->due || r->due_left != 0);
}

int Cache(Args& args) {
  strata::bench::CacheSimOptions o;
  o.objects = args.U64("objects", o.objects);
  o.capacity_fraction = args.Num("fraction", o.capacity_fraction);
  o.epochs = static_cast<int>(args.U64("epochs", static_cast<std::uint64_t>(o.epochs)));
  o.zipf_s = args.Num("zipf", o.zipf_s);
  o.zipf_reads = args.U64("zipf-reads", o.zipf_reads);
  o.zipf_capacity_fraction = args.Num("zipf-fraction", o.zipf_capacity_fraction);
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  if (o.objects < 10 || !(o.capacity_fraction > 0 && o.capacity_fraction < 1) || o.epochs < 2 ||
      !(o.zipf_capacity_fraction > 0 && o.zipf_capacity_fraction < 1)) {
    return Usage("cache needs --objects >= 10, fractions in (0, 1) and --epochs >= 2");
  }
  const auto r = strata::bench::RunCacheSim(o);
  std::string json = "{\"mode\":\"cache\",\"objects\":" + std::to_string(o.objects) +
                     ",\"capacity_fraction\":" + Fmt("%.3f", o.capacity_fraction) +
                     ",\"epochs\":" + std::to_string(o.epochs) +
                     ",\"optimum\":" + Fmt("%.4f", r.optimum) +
                     ",\"epoch_hit_ratio\":" + Fmt("%.4f", r.epoch_policy) +
                     ",\"epoch_hit_ratio_lru\":" + Fmt("%.4f", r.epoch_lru) +
                     ",\"zipf_s\":" + Fmt("%.2f", o.zipf_s) +
                     ",\"zipf_capacity_fraction\":" + Fmt("%.3f", o.zipf_capacity_fraction) +
                     ",\"zipf_hit_ratio\":" + Fmt("%.4f", r.zipf_policy) +
                     ",\"zipf_hit_ratio_lru\":" + Fmt("%.4f", r.zipf_lru) +
                     ",\"seconds\":" + Fmt("%.2f", r.seconds) + "}";
  return Emit(args, json, false);
}

int Epoch(Args& args) {
  auto ep = GetEndpoint(args);
  if (!ep) {
    return 2;
  }
  strata::bench::EpochOptions o;
  o.keys = Keys(args);
  o.readers = static_cast<int>(args.U64("readers", 8));
  o.batch = static_cast<int>(args.U64("batch", 8));
  o.epochs = static_cast<int>(args.U64("epochs", 3));
  o.compute_ms = args.Num("compute-ms", 20);
  o.seed = args.U64("seed", 1);
  o.count_misses = args.Has("misses");
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  if (o.readers < 1 || o.batch < 1 || o.epochs < 1 || o.compute_ms < 0) {
    return Usage("epoch needs --readers, --batch and --epochs >= 1 and --compute-ms >= 0");
  }
  const auto results = strata::bench::RunEpochs(*ep, o);
  std::string json = "{\"mode\":\"epoch\",\"keys\":" + std::to_string(o.keys.Size()) +
                     ",\"readers\":" + std::to_string(o.readers) +
                     ",\"batch\":" + std::to_string(o.batch) +
                     ",\"compute_ms\":" + Fmt("%.1f", o.compute_ms) + ",\"epochs\":[";
  bool failed = results.empty();
  for (std::size_t e = 0; e < results.size(); ++e) {
    const auto& r = results[e];
    failed = failed || r.errors > 0;
    if (r.errors > 0) {
      std::fprintf(stderr, "strata-bench: epoch %zu: %" PRIu64 " errors; first: %s\n", e + 1,
                   r.errors, r.first_error.c_str());
    }
    json += std::string(e == 0 ? "" : ",") + "{\"seconds\":" + Fmt("%.3f", r.seconds) +
            ",\"utilisation\":" + Fmt("%.4f", r.utilisation) +
            ",\"requests\":" + std::to_string(r.requests) +
            ",\"errors\":" + std::to_string(r.errors) +
            ",\"mb_per_s\":" + Fmt("%.1f", static_cast<double>(r.bytes) / r.seconds / 1e6) +
            ",\"misses\":" + std::to_string(r.misses) + "}";
  }
  json += "]}";
  return Emit(args, json, failed);
}

int SigV4(Args& args) {
  double seconds = args.Num("duration", 2);
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  auto r = strata::bench::RunSigV4(seconds);
  std::string json = "{\"mode\":\"sigv4\",\"verify_header_per_s\":" + Fmt("%.0f", r.header_per_s) +
                     ",\"verify_presigned_per_s\":" + Fmt("%.0f", r.presign_per_s) +
                     ",\"sign_per_s\":" + Fmt("%.0f", r.sign_per_s) + "}";
  if (r.header_per_s <= 0) {
    std::fprintf(stderr, "strata-bench: a signature failed to verify\n");
  }
  return Emit(args, json, r.header_per_s <= 0);
}

int Policy(Args& args) {
  double seconds = args.Num("duration", 2);
  int statements = static_cast<int>(args.Num("statements", 20));
  if (std::string unused = args.Unused(); !unused.empty()) {
    return Usage(("unknown option " + unused).c_str());
  }
  auto r = strata::bench::RunPolicy(seconds, statements);
  std::string json = "{\"mode\":\"policy\",\"statements\":" + std::to_string(r.statements) +
                     ",\"evaluations_per_s\":" + Fmt("%.0f", r.evaluations_per_s) +
                     ",\"parses_per_s\":" + Fmt("%.0f", r.parses_per_s) + "}";
  if (!r.allowed) {
    std::fprintf(stderr, "strata-bench: the bench policy did not parse or did not allow\n");
  }
  return Emit(args, json, !r.allowed);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return Usage("no mode given");
  }
  std::string mode = argv[1];
  Args args;
  std::string error;
  if (!args.Parse(argc, argv, 2, error)) {
    return Usage(error.c_str());
  }
  if (mode == "load") {
    return Load(args, false);
  }
  if (mode == "populate") {
    return Load(args, true);
  }
  if (mode == "list") {
    return List(args);
  }
  if (mode == "request") {
    return Request(args);
  }
  if (mode == "presign") {
    return Presign(args);
  }
  if (mode == "crc") {
    return Crc(args);
  }
  if (mode == "lifecycle") {
    return Lifecycle(args);
  }
  if (mode == "cache") {
    return Cache(args);
  }
  if (mode == "sigv4") {
    return SigV4(args);
  }
  if (mode == "epoch") {
    return Epoch(args);
  }
  if (mode == "policy") {
    return Policy(args);
  }
  return Usage(("unknown mode " + mode).c_str());
}
