#include "tools/bench/load.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "auth/signer.h"

namespace strata::bench {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// PUT bodies repeat this many bytes of a fixed pattern, so a 256 MiB upload costs the
// client no memory and the SHA-256 of a small body is computed once.
constexpr std::size_t kPatternBytes = 1 << 20;
constexpr std::size_t kReadChunk = 64 * 1024;

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") {
    return true;
  }
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

std::string Pattern() {
  std::string p(kPatternBytes, '\0');
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i + 8 <= p.size(); i += 8) {
    std::uint64_t v = rng();
    std::memcpy(p.data() + i, &v, 8);
  }
  return p;
}

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  auto a = text.find(open);
  if (a == std::string::npos) {
    return {};
  }
  a += open.size();
  auto b = text.find(close, a);
  return b == std::string::npos ? std::string() : text.substr(a, b - a);
}

// Everything the connections of one run share; read-only except the atomics.
struct Shared {
  Endpoint ep;
  LoadOptions opt;
  auth::Credential cred;
  std::string host_header;
  tcp::endpoint target;
  std::string pattern = Pattern();
  std::string body_sha256;  // of the first opt.size pattern bytes, when they fit
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<int> active{0};
  SteadyClock::time_point measure_from;
  SteadyClock::time_point deadline = SteadyClock::time_point::max();
};

struct ThreadStats {
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint32_t> latency_us;
  std::vector<std::uint32_t> ttfb_us;
  std::string first_error;

  void Error(std::string what) {
    ++errors;
    if (first_error.empty()) {
      first_error = std::move(what);
    }
  }
};

struct Outcome {
  bool transport_ok = false;
  int status = 0;
  bool keep_alive = false;
  std::string etag;
  std::string error;
  SteadyClock::time_point header_at;  // when the response header was in
};

// One connection's reusable state.
struct Conn {
  explicit Conn(asio::any_io_executor ex) : socket(ex), scratch(kReadChunk) {}
  tcp::socket socket;
  beast::flat_buffer buffer;
  std::vector<char> scratch;
  bool connected = false;
};

std::string BuildHeader(const Shared& s, const std::string& method, const std::string& path,
                        const std::string& query, bool has_body, std::uint64_t content_length,
                        const std::string& payload_hash) {
  std::string out;
  out.reserve(768);
  out += method;
  out += ' ';
  out += path;
  if (!query.empty()) {
    out += '?';
    out += query;
  }
  out += " HTTP/1.1\r\n";
  if (s.ep.sign) {
    auth::SignRequest req;
    req.method = method;
    req.raw_path = path;
    req.raw_query = query;
    req.headers.emplace_back("host", s.host_header);
    req.payload_sha256 = payload_hash;
    auth::SignV4(req, s.cred, s.ep.region, "s3", std::chrono::system_clock::now());
    for (const auto& [name, value] : req.headers) {
      out += name;
      out += ": ";
      out += value;
      out += "\r\n";
    }
  } else {
    out += "host: ";
    out += s.host_header;
    out += "\r\n";
  }
  if (has_body) {
    out += "content-length: ";
    out += std::to_string(content_length);
    out += "\r\n";
  }
  out += "\r\n";
  return out;
}

// Sends one request and reads its answer. The body is `small_body` when given, else
// `body_size` bytes of the pattern. Received body bytes are added to `st.bytes` as they
// arrive (inside the measured window), so throughput counts transfers cut off by the end
// of the run too; `response_body` collects them when given.
asio::awaitable<Outcome> Exchange(Shared& s, ThreadStats& st, Conn& c, const std::string& method,
                                  const std::string& path, const std::string& query,
                                  std::uint64_t body_size, const std::string* small_body,
                                  std::string* response_body) {
  Outcome o;
  const bool has_body = method == "PUT" || method == "POST";
  std::string hash = "UNSIGNED-PAYLOAD";
  if (small_body != nullptr) {
    body_size = small_body->size();
    hash = auth::Sha256Hex(*small_body);
  } else if (has_body && s.opt.payload_sha256 && body_size == s.opt.size &&
             !s.body_sha256.empty()) {
    hash = s.body_sha256;
  }
  std::string header = BuildHeader(s, method, path, query, has_body, body_size, hash);

  auto in_window = [&s] {
    auto now = SteadyClock::now();
    return now >= s.measure_from && now <= s.deadline;
  };

  if (small_body != nullptr) {
    std::array<asio::const_buffer, 2> bufs{asio::buffer(header), asio::buffer(*small_body)};
    auto [ec, n] = co_await asio::async_write(c.socket, bufs, kTuple);
    if (ec) {
      o.error = "write: " + ec.message();
      co_return o;
    }
  } else {
    std::uint64_t remaining = has_body ? body_size : 0;
    std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, kPatternBytes));
    std::array<asio::const_buffer, 2> bufs{asio::buffer(header),
                                           asio::buffer(s.pattern.data(), first)};
    auto [ec, n] = co_await asio::async_write(c.socket, bufs, kTuple);
    if (ec) {
      o.error = "write: " + ec.message();
      co_return o;
    }
    remaining -= first;
    if (in_window()) {
      st.bytes += first;
    }
    while (remaining > 0) {
      std::size_t chunk =
          static_cast<std::size_t>(std::min<std::uint64_t>(remaining, kPatternBytes));
      auto [ec2, n2] =
          co_await asio::async_write(c.socket, asio::buffer(s.pattern.data(), chunk), kTuple);
      if (ec2) {
        o.error = "write body: " + ec2.message();
        co_return o;
      }
      remaining -= chunk;
      if (in_window()) {
        st.bytes += chunk;
      }
    }
  }

  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  if (method == "HEAD") {
    parser.skip(true);
  }
  auto [ec, n] = co_await http::async_read_header(c.socket, c.buffer, parser, kTuple);
  if (ec) {
    o.error = "read header: " + ec.message();
    co_return o;
  }
  const auto started = SteadyClock::now();
  o.header_at = started;
  std::uint64_t received = 0;
  while (!parser.is_done()) {
    parser.get().body().data = c.scratch.data();
    parser.get().body().size = c.scratch.size();
    auto [ec2, n2] = co_await http::async_read(c.socket, c.buffer, parser, kTuple);
    if (ec2 == http::error::need_buffer) {
      ec2 = {};
    }
    if (ec2) {
      o.error = "read body: " + ec2.message();
      co_return o;
    }
    std::size_t got = c.scratch.size() - parser.get().body().size;
    received += got;
    if (in_window()) {
      st.bytes += got;
    }
    if (response_body != nullptr) {
      response_body->append(c.scratch.data(), got);
    }
    if (s.opt.read_rate > 0) {
      // A slow reader: stay at read_rate bytes/s, leaving the rest in the socket buffers.
      auto due = started + std::chrono::microseconds(received * 1'000'000 / s.opt.read_rate);
      if (due > SteadyClock::now()) {
        asio::steady_timer timer(c.socket.get_executor(), due);
        co_await timer.async_wait(kTuple);
      }
    }
  }
  o.transport_ok = true;
  o.status = static_cast<int>(parser.get().result_int());
  o.keep_alive = parser.get().keep_alive();
  o.etag = std::string(parser.get()[http::field::etag]);
  co_return o;
}

bool Ok(const Outcome& o) { return o.transport_ok && o.status >= 200 && o.status < 300; }

// CreateMultipartUpload, UploadPart for each part_size slice, CompleteMultipartUpload.
asio::awaitable<Outcome> Multipart(Shared& s, ThreadStats& st, Conn& c, const std::string& path) {
  std::string body;
  Outcome o = co_await Exchange(s, st, c, "POST", path, "uploads=", 0, &body, &body);
  if (!Ok(o)) {
    co_return o;
  }
  // The POST's request body was the empty `body`; its answer was appended to it.
  std::string upload_id = Between(body, "<UploadId>", "</UploadId>");
  if (upload_id.empty()) {
    o.transport_ok = true;
    o.status = 500;
    o.error = "no UploadId in CreateMultipartUpload's answer";
    co_return o;
  }
  std::string encoded_id = auth::UriEncode(upload_id, true);
  std::string complete = "<CompleteMultipartUpload>";
  std::uint64_t offset = 0;
  for (int part = 1; offset < s.opt.size; ++part) {
    std::uint64_t len = std::min(s.opt.part_size, s.opt.size - offset);
    o = co_await Exchange(s, st, c, "PUT", path,
                          "partNumber=" + std::to_string(part) + "&uploadId=" + encoded_id, len,
                          nullptr, nullptr);
    if (!Ok(o)) {
      co_return o;
    }
    complete += "<Part><PartNumber>" + std::to_string(part) + "</PartNumber><ETag>" + o.etag +
                "</ETag></Part>";
    offset += len;
    if (!o.keep_alive) {
      o.error = "server closed the connection mid-upload";
      o.transport_ok = false;
      co_return o;
    }
  }
  complete += "</CompleteMultipartUpload>";
  std::string answer;
  o = co_await Exchange(s, st, c, "POST", path, "uploadId=" + encoded_id, 0, &complete, &answer);
  if (Ok(o) && answer.find("<Error>") != std::string::npos) {
    o.status = 500;  // S3 may report a failed completion inside a 200
    o.error = answer.substr(0, 200);
  }
  co_return o;
}

// Opens `c` when it is not open; false (an error counted, 10 ms waited) when it cannot.
asio::awaitable<bool> EnsureConnected(Shared& s, ThreadStats& st, Conn& c) {
  if (c.connected) {
    co_return true;
  }
  auto ex = co_await asio::this_coro::executor;
  c.socket = tcp::socket(ex);
  c.buffer.clear();
  auto [ec] = co_await c.socket.async_connect(s.target, kTuple);
  if (ec) {
    st.Error("connect: " + ec.message());
    asio::steady_timer timer(ex, std::chrono::milliseconds(10));
    co_await timer.async_wait(kTuple);
    co_return false;
  }
  c.socket.set_option(tcp::no_delay(true));
  c.connected = true;
  co_return true;
}

asio::awaitable<void> RunConnection(Shared& s, ThreadStats& st, int id) {
  auto ex = co_await asio::this_coro::executor;
  Conn c(ex);
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(id + 1));
  const std::uint64_t nkeys = s.opt.keys.Size();
  while (!s.stop.load(std::memory_order_relaxed)) {
    if (SteadyClock::now() >= s.deadline) {
      break;
    }
    std::uint64_t seq = s.next.fetch_add(1, std::memory_order_relaxed);
    if (s.opt.requests > 0 && seq >= s.opt.requests) {
      break;
    }
    std::uint64_t ki = s.opt.random_order ? rng() % nkeys : seq % nkeys;
    std::string path = s.opt.keys.PathAt(ki);
    std::string method = s.opt.method;
    if (method == "MIX") {
      method = static_cast<int>(rng() % 100) < s.opt.read_percent ? "GET" : "PUT";
      if (method == "PUT" && !s.opt.mix_overwrite) {
        // Writes go to sibling keys: a GET racing an overwrite of its own key is a
        // correctness test (--mix-overwrite), not part of the throughput figure.
        path += "-w";
      }
    }
    const bool connected = co_await EnsureConnected(s, st, c);
    if (!connected) {
      continue;
    }
    auto t0 = SteadyClock::now();
    // Not a conditional expression with co_await in both arms: GCC 12 miscompiles those
    // (the result is destroyed twice).
    Outcome o;
    if (method == "PUT" && s.opt.part_size > 0) {
      o = co_await Multipart(s, st, c, path);
    } else {
      o = co_await Exchange(s, st, c, method, path, "", s.opt.size, nullptr, nullptr);
    }
    auto t1 = SteadyClock::now();
    if (!o.transport_ok || !o.keep_alive) {
      boost::system::error_code ignored;
      c.socket.close(ignored);
      c.connected = false;
    }
    if (s.stop.load(std::memory_order_relaxed) && !o.transport_ok) {
      break;  // cut off by the end of the run, not a failure
    }
    if (t0 < s.measure_from || t1 > s.deadline) {
      continue;  // warm-up, or finished after the window closed
    }
    if (!Ok(o)) {
      st.Error(o.transport_ok ? method + " " + path + ": HTTP " + std::to_string(o.status)
                              : method + " " + path + ": " + o.error);
      continue;
    }
    ++st.requests;
    st.latency_us.push_back(static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
    st.ttfb_us.push_back(static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(o.header_at - t0).count()));
  }
  s.active.fetch_sub(1);
}

double Percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) {
    return 0;
  }
  std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1));
  return sorted[i] / 1000.0;
}

bool Prepare(Shared& s, const Endpoint& ep) {
  s.ep = ep;
  s.cred = auth::Credential{ep.access_key, ep.secret_key, false};
  bool v6 = ep.host.find(':') != std::string::npos;
  s.host_header = (v6 ? "[" + ep.host + "]" : ep.host) + ":" + ep.port;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
  if (ec) {
    return false;
  }
  s.target = tcp::endpoint(addr, static_cast<unsigned short>(std::stoi(ep.port)));
  return true;
}

}  // namespace

std::optional<Endpoint> ParseEndpoint(const std::string& url, std::string& error) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  } else {
    error = "endpoint must be http://HOST:PORT";
    return std::nullopt;
  }
  while (!rest.empty() && rest.back() == '/') {
    rest.pop_back();
  }
  Endpoint ep;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      error = "malformed endpoint " + url;
      return std::nullopt;
    }
    ep.host = rest.substr(1, close - 1);
    ep.port = rest.substr(close + 2);
  } else {
    auto colon = rest.rfind(':');
    if (colon == std::string::npos) {
      error = "endpoint needs a port: " + url;
      return std::nullopt;
    }
    ep.host = rest.substr(0, colon);
    ep.port = rest.substr(colon + 1);
  }
  if (ep.port.empty() || ep.port.find_first_not_of("0123456789") != std::string::npos ||
      ep.port.size() > 5) {
    error = "malformed port in " + url;
    return std::nullopt;
  }
  if (!IsLoopback(ep.host)) {
    error = "only loopback endpoints may be targets: " + url;
    return std::nullopt;
  }
  return ep;
}

std::string KeySet::PathAt(std::uint64_t i) const {
  std::uint64_t base = suffixes > 0 ? i % count : i;
  char digits[48];
  if (suffixes > 0) {
    std::snprintf(digits, sizeof digits, "%09llu-%06llu",
                  static_cast<unsigned long long>(first + base * step),
                  static_cast<unsigned long long>(suffix_first + i / count));
  } else {
    std::snprintf(digits, sizeof digits, "%09llu",
                  static_cast<unsigned long long>(first + base * step));
  }
  std::string out;
  out.reserve(bucket.size() + key_prefix.size() + 20);
  out += '/';
  out += bucket;
  out += '/';
  out += key_prefix;
  out += digits;
  return out;
}

LoadResult RunLoad(const Endpoint& endpoint, const LoadOptions& options) {
  auto shared = std::make_unique<Shared>();
  Shared& s = *shared;
  s.opt = options;
  LoadResult result;
  if (!Prepare(s, endpoint) || options.keys.Size() == 0) {
    result.errors = 1;
    result.first_error = "bad endpoint or empty key set";
    return result;
  }
  if (options.size <= kPatternBytes) {
    s.body_sha256 = auth::Sha256Hex(std::string_view(s.pattern.data(), options.size));
  }
  const int threads = std::max(1, options.threads);
  const int connections = std::max(1, options.connections);
  std::vector<ThreadStats> stats(threads);
  for (auto& st : stats) {
    st.latency_us.reserve(1 << 16);
    st.ttfb_us.reserve(1 << 16);
  }
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (int t = 0; t < threads; ++t) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
  }
  auto start = SteadyClock::now();
  s.measure_from =
      start + std::chrono::microseconds(static_cast<std::int64_t>(options.warmup_s * 1e6));
  if (options.duration_s > 0) {
    s.deadline = s.measure_from +
                 std::chrono::microseconds(static_cast<std::int64_t>(options.duration_s * 1e6));
  }
  s.active = connections;
  for (int i = 0; i < connections; ++i) {
    asio::co_spawn(*contexts[i % threads], RunConnection(s, stats[i % threads], i), asio::detached);
  }
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&contexts, t] { contexts[t]->run(); });
  }
  // Wait for the connections to finish; past the deadline give in-flight requests a short
  // grace, then cut them off (a slow 64 MiB download must not stretch the run).
  while (s.active.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (SteadyClock::now() > s.deadline) {
      s.stop = true;
      if (SteadyClock::now() > s.deadline + std::chrono::seconds(2)) {
        break;
      }
    }
  }
  auto end = SteadyClock::now();
  for (auto& ctx : contexts) {
    ctx->stop();
  }
  for (auto& w : workers) {
    w.join();
  }
  contexts.clear();  // destroys the suspended coroutines while `s` and `stats` still live

  std::vector<std::uint32_t> all;
  std::vector<std::uint32_t> ttfb;
  for (auto& st : stats) {
    ttfb.insert(ttfb.end(), st.ttfb_us.begin(), st.ttfb_us.end());
    result.requests += st.requests;
    result.errors += st.errors;
    result.bytes += st.bytes;
    if (result.first_error.empty()) {
      result.first_error = st.first_error;
    }
    all.insert(all.end(), st.latency_us.begin(), st.latency_us.end());
  }
  result.seconds =
      std::chrono::duration<double>(std::min(end, s.deadline) - s.measure_from).count();
  std::sort(all.begin(), all.end());
  result.p50_ms = Percentile(all, 50);
  result.p90_ms = Percentile(all, 90);
  result.p99_ms = Percentile(all, 99);
  result.max_ms = all.empty() ? 0 : all.back() / 1000.0;
  std::sort(ttfb.begin(), ttfb.end());
  result.ttfb_p50_ms = Percentile(ttfb, 50);
  result.ttfb_p99_ms = Percentile(ttfb, 99);
  double sum = 0;
  for (auto v : all) {
    sum += v;
  }
  result.mean_ms = all.empty() ? 0 : sum / static_cast<double>(all.size()) / 1000.0;
  return result;
}

namespace {

asio::awaitable<void> ListLoop(Shared& s, ThreadStats& st, const ListOptions& lo,
                               std::vector<std::uint32_t>& page_us, std::uint64_t& keys) {
  auto ex = co_await asio::this_coro::executor;
  Conn c(ex);
  std::string token;
  const std::string path = "/" + lo.bucket;
  while (SteadyClock::now() < s.deadline && (lo.max_pages == 0 || page_us.size() < lo.max_pages)) {
    if (!c.connected) {
      c.socket = tcp::socket(ex);
      c.buffer.clear();
      auto [ec] = co_await c.socket.async_connect(s.target, kTuple);
      if (ec) {
        st.Error("connect: " + ec.message());
        co_return;
      }
      c.connected = true;
    }
    // Parameters in canonical (sorted) order.
    std::string query;
    if (!token.empty()) {
      query += "continuation-token=" + auth::UriEncode(token, true) + "&";
    }
    query += "list-type=2&max-keys=" + std::to_string(lo.max_keys);
    if (!lo.prefix.empty()) {
      query += "&prefix=" + auth::UriEncode(lo.prefix, true);
    }
    std::string body;
    auto t0 = SteadyClock::now();
    Outcome o = co_await Exchange(s, st, c, "GET", path, query, 0, nullptr, &body);
    auto t1 = SteadyClock::now();
    if (!Ok(o)) {
      st.Error(o.transport_ok ? "list: HTTP " + std::to_string(o.status) + " " + body.substr(0, 200)
                              : "list: " + o.error);
      co_return;
    }
    if (!o.keep_alive) {
      c.connected = false;
    }
    page_us.push_back(static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
    for (std::size_t at = body.find("<Key>"); at != std::string::npos;
         at = body.find("<Key>", at + 5)) {
      ++keys;
    }
    token = body.find("<IsTruncated>true</IsTruncated>") != std::string::npos
                ? Between(body, "<NextContinuationToken>", "</NextContinuationToken>")
                : std::string();
  }
}

}  // namespace

ListResult RunList(const Endpoint& endpoint, const ListOptions& options) {
  Shared s;
  ListResult result;
  if (!Prepare(s, endpoint)) {
    result.errors = 1;
    return result;
  }
  s.opt.payload_sha256 = false;
  s.measure_from = SteadyClock::now();
  s.deadline = s.measure_from +
               std::chrono::microseconds(static_cast<std::int64_t>(options.duration_s * 1e6));
  ThreadStats st;
  std::vector<std::uint32_t> page_us;
  asio::io_context ioc(1);
  asio::co_spawn(ioc, ListLoop(s, st, options, page_us, result.keys), asio::detached);
  ioc.run();
  result.seconds = std::chrono::duration<double>(SteadyClock::now() - s.measure_from).count();
  result.pages = page_us.size();
  result.errors = st.errors;
  result.first_error = st.first_error;
  double sum = 0;
  for (auto v : page_us) {
    sum += v;
  }
  std::sort(page_us.begin(), page_us.end());
  result.p50_ms = Percentile(page_us, 50);
  result.p99_ms = Percentile(page_us, 99);
  result.mean_ms = page_us.empty() ? 0 : sum / static_cast<double>(page_us.size()) / 1000.0;
  return result;
}

int SendOne(const Endpoint& endpoint, const std::string& method, const std::string& path,
            const std::string& query, const std::string& body, std::string& response_body) {
  Shared s;
  if (!Prepare(s, endpoint)) {
    return 0;
  }
  s.opt.payload_sha256 = false;
  s.measure_from = SteadyClock::now();
  ThreadStats st;
  int status = 0;
  asio::io_context ioc(1);
  // A named closure: the coroutine refers to its captures, so it must outlive run().
  auto exchange = [&]() -> asio::awaitable<void> {
    Conn c(co_await asio::this_coro::executor);
    auto [ec] = co_await c.socket.async_connect(s.target, kTuple);
    if (ec) {
      response_body = "connect: " + ec.message();
      co_return;
    }
    Outcome o = co_await Exchange(s, st, c, method, path, query, 0, &body, &response_body);
    status = o.transport_ok ? o.status : 0;
    if (!o.transport_ok) {
      response_body = o.error;
    }
  };
  asio::co_spawn(ioc, exchange(), asio::detached);
  ioc.run();
  return status;
}

struct Connections::State {
  Shared shared;
  std::vector<std::unique_ptr<Conn>> conns;
  ThreadStats stats;  // the connections' coroutines share one thread
};

Connections::Connections(const Endpoint& endpoint, int count) : state_(std::make_unique<State>()) {
  Prepare(state_->shared, endpoint);
  state_->shared.opt.payload_sha256 = false;
  state_->shared.measure_from = SteadyClock::now();
  state_->conns.resize(static_cast<std::size_t>(count));
}

Connections::~Connections() = default;

asio::awaitable<Connections::Answer> Connections::Get(int conn, std::string path, std::string query,
                                                      bool keep_body) {
  Answer answer;
  auto& slot = state_->conns.at(static_cast<std::size_t>(conn));
  if (!slot) {
    slot = std::make_unique<Conn>(co_await asio::this_coro::executor);
  }
  Conn& c = *slot;
  const bool connected = co_await EnsureConnected(state_->shared, state_->stats, c);
  if (!connected) {
    answer.error = state_->stats.first_error;
    co_return answer;
  }
  const std::uint64_t before = state_->stats.bytes;
  Outcome o = co_await Exchange(state_->shared, state_->stats, c, "GET", path, query, 0, nullptr,
                                keep_body ? &answer.body : nullptr);
  answer.bytes = state_->stats.bytes - before;
  if (!o.transport_ok || !o.keep_alive) {
    boost::system::error_code ignored;
    c.socket.close(ignored);
    c.connected = false;
  }
  answer.status = o.transport_ok ? o.status : 0;
  answer.error = o.error;
  co_return answer;
}

}  // namespace strata::bench
