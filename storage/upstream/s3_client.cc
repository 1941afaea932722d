#include "storage/upstream/s3_client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <charconv>
#include <random>

#include "auth/signer.h"
#include "common/text.h"
#include "storage/checksum.h"
#include "storage/upstream/s3_responses.h"

namespace strata::storage::upstream {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// Error bodies and the XML answers of listings are read whole, up to this much.
constexpr std::size_t kMaxSmallBody = 8u << 20;
constexpr std::size_t kMaxHeaderBytes = 64u << 10;

// Response headers worth handing back to whoever caches the object.
bool KeptHeader(std::string_view lower) {
  static constexpr std::string_view kKept[] = {
      "cache-control", "content-disposition", "content-encoding",   "content-language",
      "expires",       "x-amz-storage-class", "x-amz-tagging-count"};
  if (lower.starts_with("x-amz-meta-") || lower.starts_with("x-amz-checksum-")) {
    return true;
  }
  return std::find(std::begin(kKept), std::end(kKept), lower) != std::end(kKept);
}

Error TransportError(const Endpoint& ep, std::string_view step, const beast::error_code& ec) {
  const bool timed_out = ec == beast::error::timeout;
  return Error(timed_out ? ErrorCode::kTimedOut : ErrorCode::kUnavailable,
               "upstream " + ep.HostHeader() + ": " + std::string(step) + ": " + ec.message(),
               true);
}

// One keep-alive connection, plain or TLS.
struct Connection {
  std::optional<beast::tcp_stream> tcp;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;  // bytes read past one response: none with HTTP/1.1 without pipelining

  beast::tcp_stream& Lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

// What one request attempt sends.
struct Outgoing {
  http::verb method = http::verb::get;
  std::string raw_path;
  std::string raw_query;
  std::vector<Header> headers;  // beyond host and the signature's
  std::uint64_t body_size = 0;
  const BodySource* source = nullptr;  // when body_size > 0
  std::string payload_sha256 = "UNSIGNED-PAYLOAD";
};

// What one attempt got back. A 2xx GET body went to the sink instead of `body`.
struct Answer {
  unsigned status = 0;
  http::fields headers;
  std::string body;
  bool keep_alive = false;
};

// How a GET attempt hands its 2xx body on. The facts of the first answer are taken
// from its header, before any byte reaches the sink, so a resume can pin its ETag.
struct SinkPlan {
  const BodySink* sink = nullptr;
  std::optional<ObjectInfo>* first = nullptr;  // set from the first 2xx header
  bool resuming = false;                       // a resumed GET: anything but 206 would repeat bytes
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string ObjectPath(std::string bucket, std::string key) {
  std::string path = "/" + auth::UriEncode(bucket, true);
  if (!key.empty()) {
    path += "/" + auth::UriEncode(key, false);
  }
  return path;
}

std::string QueryParam(std::string_view name, std::string_view value) {
  return std::string(name) + "=" + auth::UriEncode(value, true);
}

void AppendQuery(std::string& query, std::string_view name, std::string_view value) {
  if (!query.empty()) {
    query += '&';
  }
  query += QueryParam(name, value);
}

// A small request body (XML) held by the caller for the whole call.
BodySource MemorySource(const std::string& body) {
  return
      [&body](std::uint64_t offset, std::span<char> buf) -> asio::awaitable<Result<std::size_t>> {
        const std::size_t n = std::min<std::size_t>(buf.size(), body.size() - offset);
        std::copy_n(body.data() + offset, n, buf.data());
        co_return n;
      };
}

bool ParseUint(std::string_view text, std::uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// The object's total size from Content-Range "bytes a-b/total", or Content-Length.
std::optional<std::uint64_t> TotalSize(unsigned status, const http::fields& headers) {
  std::uint64_t size = 0;
  if (status == 206) {
    std::string_view range = headers[http::field::content_range];
    auto slash = range.rfind('/');
    if (slash != std::string_view::npos && ParseUint(range.substr(slash + 1), size)) {
      return size;
    }
    return std::nullopt;
  }
  if (ParseUint(headers[http::field::content_length], size)) {
    return size;
  }
  return std::nullopt;
}

ObjectInfo InfoFrom(unsigned status, const http::fields& headers) {
  ObjectInfo info;
  if (status == 304) {
    info.not_modified = true;
    return info;
  }
  info.size = TotalSize(status, headers).value_or(0);
  info.etag = std::string(headers[http::field::etag]);
  info.last_modified = std::string(headers[http::field::last_modified]);
  info.content_type = std::string(headers[http::field::content_type]);
  info.version_id = std::string(headers["x-amz-version-id"]);
  for (const auto& field : headers) {
    std::string name = Lower(field.name_string());
    if (KeptHeader(name)) {
      info.headers.emplace_back(std::move(name), std::string(field.value()));
    }
  }
  return info;
}

}  // namespace

std::string EtagValue(std::string_view quoted) {
  if (quoted.size() >= 2 && quoted.front() == '"' && quoted.back() == '"') {
    quoted = quoted.substr(1, quoted.size() - 2);
  }
  return std::string(quoted);
}

Result<Endpoint> Endpoint::Parse(std::string_view url) {
  Endpoint ep;
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    ep.tls = true;
    rest = url.substr(8);
  } else {
    return Error(ErrorCode::kInvalidArgument, "upstream endpoint '" + std::string(url) +
                                                  "' must start with http:// or https://");
  }
  if (rest.ends_with('/')) {
    rest.remove_suffix(1);
  }
  if (rest.empty() || rest.find('/') != std::string_view::npos ||
      rest.find_first_of("?#@ ") != std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 "upstream endpoint '" + std::string(url) + "' must be scheme://host[:port]");
  }
  std::string_view host = rest;
  std::string_view port;
  if (rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return Error(ErrorCode::kInvalidArgument,
                   "upstream endpoint '" + std::string(url) + "': unterminated IPv6 address");
    }
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Error(ErrorCode::kInvalidArgument,
                     "upstream endpoint '" + std::string(url) + "': junk after the address");
      }
      port = after.substr(1);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  std::uint64_t port_number = 0;
  if (!port.empty() && (!ParseUint(port, port_number) || port_number == 0 || port_number > 65535)) {
    return Error(ErrorCode::kInvalidArgument,
                 "upstream endpoint '" + std::string(url) + "': bad port");
  }
  if (host.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "upstream endpoint '" + std::string(url) + "': no host");
  }
  ep.host = std::string(host);
  ep.port = port.empty() ? (ep.tls ? "443" : "80") : std::string(port);
  return ep;
}

std::string Endpoint::HostHeader() const {
  const bool default_port = (tls && port == "443") || (!tls && port == "80");
  const bool v6 = host.find(':') != std::string::npos;
  std::string out = v6 ? "[" + host + "]" : host;
  return default_port ? out : out + ":" + port;
}

struct S3Client::State {
  asio::any_io_executor executor;
  Endpoint endpoint;
  ClientOptions options;
  std::optional<asio::ssl::context> tls;
  std::vector<std::unique_ptr<Connection>> idle;
  std::mt19937_64 rng{std::random_device{}()};

  State(asio::any_io_executor ex, Endpoint ep, ClientOptions opt)
      : executor(std::move(ex)), endpoint(std::move(ep)), options(opt) {}

  // A pooled connection, or a new one.
  asio::awaitable<Result<std::unique_ptr<Connection>>> Acquire(bool fresh);
  void Release(std::unique_ptr<Connection> connection);
  // One attempt: send `out` and read the answer; a 2xx body streams as `plan` says.
  asio::awaitable<Result<Answer>> Once(const Outgoing& out, const SinkPlan& plan, bool fresh);
  // Retries Once as the class comment says; 4xx/5xx answers become Errors.
  asio::awaitable<Result<Answer>> Call(const Outgoing& out);
  asio::awaitable<void> Backoff(int attempt);
  auth::SignRequest Sign(const Outgoing& out) const;
};

S3Client::S3Client(asio::any_io_executor executor, Endpoint endpoint, ClientOptions options)
    : state_(std::make_shared<State>(std::move(executor), std::move(endpoint), options)) {
  if (state_->endpoint.tls) {
    state_->tls.emplace(asio::ssl::context::tls_client);
    state_->tls->set_options(asio::ssl::context::default_workarounds |
                             asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                             asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    if (state_->endpoint.ca_file.empty()) {
      state_->tls->set_default_verify_paths(ec);
    } else {
      state_->tls->load_verify_file(state_->endpoint.ca_file, ec);
    }
    // A bad CA file surfaces as a verification failure on the first request.
    state_->tls->set_verify_mode(asio::ssl::verify_peer);
  }
}

S3Client::~S3Client() = default;

const Endpoint& S3Client::endpoint() const { return state_->endpoint; }

asio::awaitable<Result<std::unique_ptr<Connection>>> S3Client::State::Acquire(bool fresh) {
  if (!fresh && !idle.empty()) {
    auto connection = std::move(idle.back());
    idle.pop_back();
    co_return connection;
  }
  tcp::resolver resolver(executor);
  auto [rec, results] = co_await resolver.async_resolve(endpoint.host, endpoint.port, kTuple);
  if (rec) {
    co_return TransportError(endpoint, "resolve", rec);
  }
  auto connection = std::make_unique<Connection>();
  if (tls) {
    connection->tls.emplace(executor, *tls);
  } else {
    connection->tcp.emplace(executor);
  }
  auto& lowest = connection->Lowest();
  lowest.expires_after(options.connect_timeout);
  auto [cec, peer] = co_await lowest.async_connect(results, kTuple);
  if (cec) {
    co_return TransportError(endpoint, "connect", cec);
  }
  lowest.socket().set_option(tcp::no_delay(true));
  if (tls) {
    if (!SSL_set_tlsext_host_name(connection->tls->native_handle(), endpoint.host.c_str())) {
      co_return Error(ErrorCode::kUnavailable, "upstream: cannot set the TLS server name", true);
    }
    connection->tls->set_verify_callback(asio::ssl::host_name_verification(endpoint.host));
    auto [hec] = co_await connection->tls->async_handshake(asio::ssl::stream_base::client, kTuple);
    if (hec) {
      co_return TransportError(endpoint, "TLS handshake", hec);
    }
  }
  co_return connection;
}

void S3Client::State::Release(std::unique_ptr<Connection> connection) {
  if (idle.size() < options.max_idle_connections) {
    idle.push_back(std::move(connection));
  }
}

auth::SignRequest S3Client::State::Sign(const Outgoing& out) const {
  auth::SignRequest request;
  request.method = std::string(http::to_string(out.method));
  request.raw_path = out.raw_path;
  request.raw_query = out.raw_query;
  request.headers.emplace_back("host", endpoint.HostHeader());
  for (const auto& [name, value] : out.headers) {
    request.headers.emplace_back(Lower(name), value);
  }
  request.payload_sha256 = out.payload_sha256;
  auth::SignV4(request, endpoint.credential, endpoint.region, "s3",
               std::chrono::system_clock::now());
  return request;
}

namespace {

// Sends `out` (signed as `signed_request`) on `stream` and reads the answer.
template <typename Stream>
asio::awaitable<Result<Answer>> Exchange(Stream& stream, Connection& connection,
                                         const Endpoint& endpoint, const ClientOptions& options,
                                         const Outgoing& out,
                                         const auth::SignRequest& signed_request,
                                         const SinkPlan& plan) {
  auto& lowest = connection.Lowest();
  std::string target = out.raw_path;
  if (!out.raw_query.empty()) {
    target += "?" + out.raw_query;
  }
  http::request<http::buffer_body> request{out.method, target, 11};
  for (const auto& [name, value] : signed_request.headers) {
    request.set(name, value);
  }
  if (out.body_size > 0 || out.method == http::verb::put || out.method == http::verb::post) {
    request.content_length(out.body_size);
  }
  request.keep_alive(true);
  std::vector<char> block(options.buffer_bytes);

  // The request: header, then the body pulled from the source block by block.
  request.body().data = nullptr;
  request.body().more = out.body_size > 0;
  http::request_serializer<http::buffer_body> serializer{request};
  lowest.expires_after(options.idle_timeout);
  auto [hec, hn] = co_await http::async_write_header(stream, serializer, kTuple);
  if (hec) {
    co_return TransportError(endpoint, "send", hec);
  }
  std::uint64_t sent = 0;
  while (sent < out.body_size) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), out.body_size - sent));
    auto got = co_await (*out.source)(sent, std::span<char>(block.data(), want));
    if (!got.ok()) {
      co_return std::move(got).error();
    }
    if (*got == 0 || *got > want) {
      co_return Error(ErrorCode::kInternal, "upstream upload: the source ended early");
    }
    request.body().data = block.data();
    request.body().size = *got;
    request.body().more = sent + *got < out.body_size;
    lowest.expires_after(options.idle_timeout);
    auto [wec, wn] = co_await http::async_write(stream, serializer, kTuple);
    if (wec && wec != http::error::need_buffer) {
      co_return TransportError(endpoint, "send", wec);
    }
    sent += *got;
  }
  if (!serializer.is_done()) {
    request.body().data = nullptr;
    request.body().size = 0;
    request.body().more = false;
    auto [fec, fn] = co_await http::async_write(stream, serializer, kTuple);
    if (fec && fec != http::error::need_buffer) {
      co_return TransportError(endpoint, "send", fec);
    }
  }

  // The answer: header, then the body into the sink (2xx with a sink) or into memory.
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(boost::none);
  if (out.method == http::verb::head) {
    parser.skip(true);
  }
  lowest.expires_after(options.idle_timeout);
  auto [rec, rn] = co_await http::async_read_header(stream, connection.buffer, parser, kTuple);
  if (rec) {
    co_return TransportError(endpoint, "read", rec);
  }
  Answer answer;
  answer.status = parser.get().result_int();
  const bool to_sink = plan.sink != nullptr && answer.status / 100 == 2;
  if (to_sink) {
    if (plan.resuming && answer.status != 206) {
      co_return Error(ErrorCode::kUnavailable,
                      "upstream " + endpoint.HostHeader() + " ignored the Range of a resumed GET");
    }
    if (!*plan.first) {
      *plan.first = InfoFrom(answer.status, parser.get().base());
    }
  }
  while (!parser.is_done()) {
    parser.get().body().data = block.data();
    parser.get().body().size = block.size();
    lowest.expires_after(options.idle_timeout);
    auto [bec, bn] = co_await http::async_read(stream, connection.buffer, parser, kTuple);
    const bool failed = bec && bec != http::error::need_buffer;
    // Bytes that arrived before a failure still count: a resume starts after them.
    const std::size_t got = block.size() - parser.get().body().size;
    if (got == 0) {
      if (failed) {
        co_return TransportError(endpoint, "read", bec);
      }
      continue;
    }
    if (to_sink) {
      auto delivered = co_await (*plan.sink)(std::string_view(block.data(), got));
      if (!delivered.ok()) {
        co_return std::move(delivered).error();
      }
    } else {
      if (answer.body.size() + got > kMaxSmallBody) {
        co_return Error(ErrorCode::kCorruption,
                        "upstream " + endpoint.HostHeader() + ": answer body too large", true);
      }
      answer.body.append(block.data(), got);
    }
    if (failed) {
      co_return TransportError(endpoint, "read", bec);
    }
  }
  answer.keep_alive = parser.get().keep_alive();
  answer.headers = std::move(parser.get().base());
  co_return answer;
}

}  // namespace

asio::awaitable<Result<Answer>> S3Client::State::Once(const Outgoing& out, const SinkPlan& plan,
                                                      bool fresh) {
  auto acquired = co_await Acquire(fresh);
  if (!acquired.ok()) {
    co_return std::move(acquired).error();
  }
  std::unique_ptr<Connection> connection = std::move(acquired).value();
  const auth::SignRequest signed_request = Sign(out);
  Result<Answer> answer = Error(ErrorCode::kInternal, "unset");
  if (connection->tls) {
    answer = co_await Exchange(*connection->tls, *connection, endpoint, options, out,
                               signed_request, plan);
  } else {
    answer = co_await Exchange(*connection->tcp, *connection, endpoint, options, out,
                               signed_request, plan);
  }
  if (answer.ok() && answer->keep_alive) {
    Release(std::move(connection));
  }
  co_return answer;
}

asio::awaitable<void> S3Client::State::Backoff(int attempt) {
  const auto cap = std::min<std::int64_t>(options.backoff_max.count(),
                                          options.backoff_base.count() << std::min(attempt, 20));
  std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(cap, 0));
  asio::steady_timer timer(executor, std::chrono::milliseconds(jitter(rng)));
  co_await timer.async_wait(kTuple);
}

asio::awaitable<Result<Answer>> S3Client::State::Call(const Outgoing& out) {
  bool fresh = false;
  for (int attempt = 1;; ++attempt) {
    const bool reused = !fresh && !idle.empty();
    auto answer = co_await Once(out, SinkPlan{}, fresh);
    fresh = false;
    if (answer.ok() && answer->status / 100 != 2 && answer->status != 304) {
      auto [code, message] = ParseErrorBody(answer->body);
      answer = UpstreamError(answer->status, code, message);
    }
    if (answer.ok() || !answer.error().retryable) {
      co_return answer;
    }
    // A kept-alive connection the upstream closed meanwhile fails at once: try a new
    // one before counting it as a failure of the upstream.
    if (reused && answer.error().code == ErrorCode::kUnavailable) {
      fresh = true;
      --attempt;
      continue;
    }
    if (attempt >= options.max_attempts) {
      co_return answer;
    }
    co_await Backoff(attempt);
  }
}

Task<std::vector<BucketInfo>> S3Client::ListBuckets() {
  auto state = state_;
  Outgoing out;
  out.raw_path = "/";
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return ParseListBuckets(answer->body);
}

Task<void> S3Client::CreateBucket(std::string bucket) {
  auto state = state_;
  Outgoing out;
  out.method = http::verb::put;
  out.raw_path = ObjectPath(bucket, "");
  std::string body;
  if (state->endpoint.region != "us-east-1") {
    body = "<CreateBucketConfiguration><LocationConstraint>" + state->endpoint.region +
           "</LocationConstraint></CreateBucketConfiguration>";
  }
  BodySource source = MemorySource(body);
  out.body_size = body.size();
  out.source = &source;
  out.payload_sha256 = auth::Sha256Hex(body);
  auto answer = co_await state->Call(out);
  if (!answer.ok() && answer.error().code != ErrorCode::kBucketAlreadyOwnedByYou) {
    co_return std::move(answer).error();
  }
  co_return Ok();
}

Task<void> S3Client::DeleteBucket(std::string bucket) {
  auto state = state_;
  Outgoing out;
  out.method = http::verb::delete_;
  out.raw_path = ObjectPath(bucket, "");
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return Ok();
}

Task<ListPage> S3Client::ListObjectsV2(std::string bucket, ListRequest request) {
  auto state = state_;
  Outgoing out;
  out.raw_path = ObjectPath(bucket, "");
  AppendQuery(out.raw_query, "list-type", "2");
  if (!request.continuation_token.empty()) {
    AppendQuery(out.raw_query, "continuation-token", request.continuation_token);
  }
  if (!request.delimiter.empty()) {
    AppendQuery(out.raw_query, "delimiter", request.delimiter);
  }
  AppendQuery(out.raw_query, "max-keys", std::to_string(request.max_keys));
  if (!request.prefix.empty()) {
    AppendQuery(out.raw_query, "prefix", request.prefix);
  }
  if (!request.start_after.empty()) {
    AppendQuery(out.raw_query, "start-after", request.start_after);
  }
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return ParseListObjectsV2(answer->body);
}

namespace {

void AddGetHeaders(Outgoing& out, GetRequest request) {
  if (!request.if_none_match.empty()) {
    out.headers.emplace_back("if-none-match", request.if_none_match);
  }
  if (!request.if_match.empty()) {
    out.headers.emplace_back("if-match", request.if_match);
  }
  if (!request.version_id.empty()) {
    AppendQuery(out.raw_query, "versionId", request.version_id);
  }
}

}  // namespace

Task<ObjectInfo> S3Client::HeadObject(std::string bucket, std::string key, GetRequest request) {
  auto state = state_;
  Outgoing out;
  out.method = http::verb::head;
  out.raw_path = ObjectPath(bucket, key);
  AddGetHeaders(out, request);
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return InfoFrom(answer->status, answer->headers);
}

Task<ObjectInfo> S3Client::GetObject(std::string bucket, std::string key, GetRequest request,
                                     BodySink sink) {
  auto state = state_;
  std::optional<ObjectInfo> first;
  std::uint64_t delivered = 0;
  // Counts what reached the sink, so that a retry asks only for the rest.
  BodySink counting = [&sink, &delivered](std::string_view data) -> asio::awaitable<Result<void>> {
    auto passed = co_await sink(data);
    if (passed.ok()) {
      delivered += data.size();
    }
    co_return passed;
  };
  bool fresh = false;
  for (int attempt = 1;; ++attempt) {
    GetRequest this_try = request;
    if (first) {
      // A retry reads only from the object the first answer described, and resumes
      // after the bytes the sink already has.
      this_try.if_match = first->etag;
      this_try.if_none_match.clear();
      if (delivered > 0) {
        const std::uint64_t start = (request.range ? request.range->first : 0) + delivered;
        const std::uint64_t last = request.range ? request.range->second : first->size - 1;
        this_try.range = std::make_pair(start, last);
      }
    }
    Outgoing out;
    out.raw_path = ObjectPath(bucket, key);
    AddGetHeaders(out, this_try);
    if (this_try.range) {
      out.headers.emplace_back("range", "bytes=" + std::to_string(this_try.range->first) + "-" +
                                            std::to_string(this_try.range->second));
    }
    const bool reused = !fresh && !state->idle.empty();
    const std::uint64_t before = delivered;
    const SinkPlan plan{&counting, &first, delivered > 0};
    auto answer = co_await state->Once(out, plan, fresh);
    fresh = false;
    if (answer.ok() && answer->status / 100 != 2 && answer->status != 304) {
      auto [code, message] = ParseErrorBody(answer->body);
      answer = UpstreamError(answer->status, code, message);
    }
    if (answer.ok()) {
      if (!first) {
        first = InfoFrom(answer->status, answer->headers);  // a 304, or an empty body
      }
      co_return *first;
    }
    if (!answer.error().retryable) {
      co_return std::move(answer).error();
    }
    if (reused && delivered == before && answer.error().code == ErrorCode::kUnavailable) {
      fresh = true;
      --attempt;
      continue;
    }
    if (attempt >= state->options.max_attempts) {
      co_return std::move(answer).error();
    }
    co_await state->Backoff(attempt);
  }
}

Task<DeleteResult> S3Client::DeleteObject(std::string bucket, std::string key,
                                          std::string version_id) {
  auto state = state_;
  Outgoing out;
  out.method = http::verb::delete_;
  out.raw_path = ObjectPath(bucket, key);
  if (!version_id.empty()) {
    AppendQuery(out.raw_query, "versionId", version_id);
  }
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    const ErrorCode code = answer.error().code;
    if (code == ErrorCode::kNoSuchKey || code == ErrorCode::kNoSuchVersion) {
      co_return DeleteResult{};
    }
    co_return std::move(answer).error();
  }
  co_return DeleteResult{std::string(answer->headers["x-amz-version-id"]),
                         answer->headers["x-amz-delete-marker"] == "true"};
}

Task<std::string> S3Client::GetBucketVersioning(std::string bucket) {
  auto state = state_;
  Outgoing out;
  out.raw_path = ObjectPath(bucket, "");
  out.raw_query = "versioning=";
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return ParseVersioningStatus(answer->body);
}

Task<void> S3Client::PutBucketVersioning(std::string bucket, std::string status) {
  auto state = state_;
  const std::string body = VersioningBody(status);
  Md5 md5;
  md5.Update(body);
  Outgoing out;
  out.method = http::verb::put;
  out.raw_path = ObjectPath(bucket, "");
  out.raw_query = "versioning=";
  out.headers.emplace_back("content-md5", md5.FinalBase64());
  BodySource source = MemorySource(body);
  out.body_size = body.size();
  out.source = &source;
  out.payload_sha256 = auth::Sha256Hex(body);
  auto answer = co_await state->Call(out);
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return Ok();
}

namespace {

bool IsChecksumHeader(const Header& header) {
  return Lower(header.first).starts_with("x-amz-checksum-");
}

}  // namespace

Task<PutResult> S3Client::PutObject(std::string bucket, std::string key, std::uint64_t size,
                                    BodySource source, std::vector<Header> headers) {
  auto state = state_;
  if (size <= state->options.multipart_threshold) {
    Outgoing out;
    out.method = http::verb::put;
    out.raw_path = ObjectPath(bucket, key);
    out.headers = std::move(headers);
    out.body_size = size;
    out.source = &source;
    auto answer = co_await state->Call(out);
    if (!answer.ok()) {
      co_return std::move(answer).error();
    }
    co_return PutResult{std::string(answer->headers[http::field::etag]),
                        std::string(answer->headers["x-amz-version-id"])};
  }

  // Multipart: a whole-object checksum header does not apply to the parts.
  std::erase_if(headers, IsChecksumHeader);
  Outgoing create;
  create.method = http::verb::post;
  create.raw_path = ObjectPath(bucket, key);
  create.raw_query = "uploads=";
  create.headers = std::move(headers);
  auto created = co_await state->Call(create);
  if (!created.ok()) {
    co_return std::move(created).error();
  }
  auto upload_id = ParseUploadId(created->body);
  if (!upload_id.ok()) {
    co_return std::move(upload_id).error();
  }
  const std::string upload_query = QueryParam("uploadId", *upload_id);

  Result<PutResult> outcome = Error(ErrorCode::kInternal, "unset");
  std::vector<std::string> etags;
  bool all_parts = true;
  for (std::uint64_t first = 0; first < size; first += state->options.part_bytes) {
    const std::uint64_t part_size = std::min(state->options.part_bytes, size - first);
    BodySource part_source = [&source, first](std::uint64_t offset, std::span<char> buf) {
      return source(first + offset, buf);
    };
    Outgoing part;
    part.method = http::verb::put;
    part.raw_path = ObjectPath(bucket, key);
    part.raw_query = "partNumber=" + std::to_string(etags.size() + 1) + "&" + upload_query;
    part.body_size = part_size;
    part.source = &part_source;
    auto answer = co_await state->Call(part);
    if (!answer.ok()) {
      outcome = std::move(answer).error();
      all_parts = false;
      break;
    }
    etags.emplace_back(answer->headers[http::field::etag]);
  }
  if (all_parts) {
    const std::string body = CompleteMultipartBody(etags);
    BodySource body_source = MemorySource(body);
    Outgoing complete;
    complete.method = http::verb::post;
    complete.raw_path = ObjectPath(bucket, key);
    complete.raw_query = upload_query;
    complete.body_size = body.size();
    complete.source = &body_source;
    complete.payload_sha256 = auth::Sha256Hex(body);
    auto answer = co_await state->Call(complete);
    if (answer.ok()) {
      auto etag = ParseCompleteResult(answer->body);
      if (etag.ok()) {
        co_return PutResult{*etag, std::string(answer->headers["x-amz-version-id"])};
      }
      outcome = std::move(etag).error();
    } else {
      outcome = std::move(answer).error();
    }
  }
  // Best effort: an upload left behind costs storage upstream, not correctness.
  Outgoing abort;
  abort.method = http::verb::delete_;
  abort.raw_path = ObjectPath(bucket, key);
  abort.raw_query = upload_query;
  auto aborted = co_await state->Call(abort);
  (void)aborted;
  co_return outcome;
}

}  // namespace strata::storage::upstream
