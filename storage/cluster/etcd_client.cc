// EtcdClient over etcd's JSON gateway. Boost.Beast for HTTP/1.1 (this file is the one
// place below gateway/ besides the upstream S3 client that may speak HTTP:
// tests/unit/check_layering.cmake), nlohmann-json for the bodies. nlohmann throws: every
// parse and every field access goes through the helpers below, which never let an
// exception out, and a body etcd did not write as documented becomes kCorruption.
#include "storage/cluster/etcd_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "storage/checksum.h"

namespace strata::storage::cluster {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using json = nlohmann::json;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxHeaderBytes = 64u << 10;
constexpr std::size_t kWatchBlock = 64u << 10;

Error Corrupt(std::string_view what, std::string_view why) {
  return Error(ErrorCode::kCorruption,
               "etcd " + std::string(what) + ": answer is not etcd's JSON: " + std::string(why));
}

// etcd's errors carry their gRPC status code.
Error FromGrpc(std::int64_t code, std::string_view what, std::string message) {
  std::string text = "etcd " + std::string(what) + ": " + message;
  switch (code) {
    case 3:  // InvalidArgument
      return Error(ErrorCode::kInvalidArgument, std::move(text));
    case 5:  // NotFound
      return Error(ErrorCode::kNotFound, std::move(text));
    case 6:  // AlreadyExists
      return Error(ErrorCode::kAlreadyExists, std::move(text));
    case 7:   // PermissionDenied
    case 16:  // Unauthenticated
      return Error(ErrorCode::kAccessDenied, std::move(text));
    case 9:   // FailedPrecondition
    case 11:  // OutOfRange: a revision compacted away or not yet written
      return Error(ErrorCode::kPreconditionFailed, std::move(text));
    case 4:  // DeadlineExceeded
      return Error(ErrorCode::kTimedOut, std::move(text), true);
    case 8:   // ResourceExhausted
    case 10:  // Aborted
    case 14:  // Unavailable
      return Error(ErrorCode::kUnavailable, std::move(text), true);
    default:
      return Error(ErrorCode::kInternal, std::move(text));
  }
}

Error Transport(const EtcdEndpoint& ep, std::string_view what, std::string_view step,
                const beast::error_code& ec) {
  const std::string text =
      "etcd " + ep.HostPort() + " " + std::string(what) + ": " + std::string(step) + ": ";
  if (ec == beast::error::timeout) {
    return Error(ErrorCode::kTimedOut, text + "timed out", true);
  }
  if (ec == http::error::body_limit || ec == http::error::header_limit ||
      ec == http::error::buffer_overflow) {
    return Error(ErrorCode::kEntityTooLarge, text + "answer too large (" + ec.message() + ")");
  }
  if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return Error(ErrorCode::kCorruption, text + "not an HTTP answer (" + ec.message() + ")");
  }
  return Error(ErrorCode::kUnavailable, text + ec.message(), true);
}

// Reads the fields of etcd's answers: int64 as a JSON string of digits (or a number), bytes
// as base64, booleans; a field proto3 left out is its zero value. The first field of the
// wrong shape is remembered and every later read returns a zero value, so callers read
// everything and check ok() once.
class Fields {
 public:
  explicit Fields(std::string_view what) : what_(what) {}

  std::int64_t Int(const json& o, const char* name) {
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return 0;
    }
    if (it->is_number_integer()) {
      return it->get<std::int64_t>();
    }
    if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) {
        return v;
      }
    }
    Fail(std::string(name) + " is not an integer");
    return 0;
  }

  std::string Bytes(const json& o, const char* name) {
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return {};
    }
    if (it->is_string()) {
      auto decoded = Base64Decode(it->get_ref<const std::string&>());
      if (decoded) {
        return std::move(*decoded);
      }
    }
    Fail(std::string(name) + " is not base64");
    return {};
  }

  std::string String(const json& o, const char* name) {
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return {};
    }
    if (it->is_string()) {
      return it->get<std::string>();
    }
    Fail(std::string(name) + " is not a string");
    return {};
  }

  bool Bool(const json& o, const char* name) {
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return false;
    }
    if (it->is_boolean()) {
      return it->get<bool>();
    }
    Fail(std::string(name) + " is not a boolean");
    return false;
  }

  // The object under `name`: an empty object when absent.
  const json& Object(const json& o, const char* name) {
    static const json kEmpty = json::object();
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return kEmpty;
    }
    if (it->is_object()) {
      return *it;
    }
    Fail(std::string(name) + " is not an object");
    return kEmpty;
  }

  // The array under `name`: an empty array when absent.
  const json& Array(const json& o, const char* name) {
    static const json kEmpty = json::array();
    const auto it = o.find(name);
    if (it == o.end() || it->is_null()) {
      return kEmpty;
    }
    if (it->is_array()) {
      return *it;
    }
    Fail(std::string(name) + " is not an array");
    return kEmpty;
  }

  bool ok() const { return why_.empty(); }
  Error error() const { return Corrupt(what_, why_); }
  void Fail(std::string why) {
    if (why_.empty()) {
      why_ = std::move(why);
    }
  }

 private:
  std::string what_;
  std::string why_;
};

Result<json> ParseObject(std::string_view text, std::string_view what) {
  try {
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return Corrupt(what, "malformed JSON");
    }
    if (!j.is_object()) {
      return Corrupt(what, "not a JSON object");
    }
    return j;
  } catch (const std::exception& e) {
    return Corrupt(what, e.what());
  }
}

// An error etcd put in a 200 answer or a stream message: {"error": {"grpc_code", "message"}}
// (a stream's) or {"error": "...", "code": n} (a unary one's, also LeaseGrant's own error
// field). nullopt when there is none.
std::optional<Error> ErrorIn(const json& j, std::string_view what) {
  const auto it = j.find("error");
  if (it == j.end() || it->is_null()) {
    return std::nullopt;
  }
  Fields f(what);
  if (it->is_object()) {
    const std::int64_t code = f.Int(*it, "grpc_code");
    std::string message = f.String(*it, "message");
    return FromGrpc(code, what, message.empty() ? "error" : message);
  }
  if (it->is_string()) {
    if (it->get_ref<const std::string&>().empty()) {
      return std::nullopt;
    }
    const std::int64_t code = j.contains("code") ? f.Int(j, "code") : 14;
    return FromGrpc(code, what, it->get<std::string>());
  }
  return Corrupt(what, "error is neither a string nor an object");
}

// A unary answer's body, or a stream answer's first message, as its result object.
Result<json> Decode(unsigned status, std::string_view body, std::string_view what) {
  // A streamed answer (keepalive) is newline-separated messages; a unary answer has one.
  const std::size_t start = body.find_first_not_of(" \r\n\t");
  if (start != std::string_view::npos) {
    body.remove_prefix(start);
    const std::size_t nl = body.find('\n');
    if (nl != std::string_view::npos && body.find_first_not_of(" \r\n\t", nl) != body.npos) {
      body = body.substr(0, nl);
    }
  }
  auto j = ParseObject(body, what);
  if (!j.ok()) {
    if (status / 100 == 5) {
      return Error(ErrorCode::kUnavailable,
                   "etcd " + std::string(what) + ": answered " + std::to_string(status), true);
    }
    return std::move(j).error();
  }
  if (auto e = ErrorIn(*j, what)) {
    return std::move(*e);
  }
  if (status != 200) {
    return Corrupt(what, "status " + std::to_string(status) + " without an error");
  }
  const auto result = j->find("result");
  if (result != j->end()) {
    if (!result->is_object()) {
      return Corrupt(what, "result is not an object");
    }
    json inner = *result;
    if (auto e = ErrorIn(inner, what)) {
      return std::move(*e);
    }
    return inner;
  }
  return std::move(*j);
}

std::string I64(std::int64_t v) { return std::to_string(v); }

KeyValue ReadKv(Fields& f, const json& o) {
  KeyValue kv;
  kv.key = f.Bytes(o, "key");
  kv.value = f.Bytes(o, "value");
  kv.create_revision = f.Int(o, "create_revision");
  kv.mod_revision = f.Int(o, "mod_revision");
  kv.version = f.Int(o, "version");
  kv.lease = f.Int(o, "lease");
  return kv;
}

// Every answer of etcd's KV API names the store's revision, and it is never 0: an answer
// without one is not etcd's.
std::int64_t Revision(Fields& f, const json& o) {
  const std::int64_t revision = f.Int(f.Object(o, "header"), "revision");
  if (revision <= 0) {
    f.Fail("no header revision");
  }
  return revision;
}

RangeResponse ReadRange(Fields& f, const json& o) {
  RangeResponse r;
  r.revision = Revision(f, o);
  for (const json& kv : f.Array(o, "kvs")) {
    if (!kv.is_object()) {
      f.Fail("kvs holds a non-object");
      break;
    }
    r.kvs.push_back(ReadKv(f, kv));
  }
  r.more = f.Bool(o, "more");
  r.count = f.Int(o, "count");
  return r;
}

json RangeJson(const std::string& key, const std::string& range_end, std::int64_t limit,
               std::int64_t revision) {
  json j = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) {
    j["range_end"] = Base64Encode(range_end);
  }
  if (limit > 0) {
    j["limit"] = I64(limit);
  }
  if (revision > 0) {
    j["revision"] = I64(revision);
  }
  return j;
}

json OpJson(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::kRange:
      return {{"request_range", RangeJson(op.key, op.range_end, 0, 0)}};
    case TxnOp::Kind::kPut: {
      json put = {{"key", Base64Encode(op.key)}, {"value", Base64Encode(op.value)}};
      if (op.lease != 0) {
        put["lease"] = I64(op.lease);
      }
      return {{"request_put", put}};
    }
    case TxnOp::Kind::kDelete: {
      json del = {{"key", Base64Encode(op.key)}};
      if (!op.range_end.empty()) {
        del["range_end"] = Base64Encode(op.range_end);
      }
      return {{"request_delete_range", del}};
    }
  }
  return json::object();
}

json CompareJson(const Compare& c) {
  static constexpr const char* kTargets[] = {"VERSION", "CREATE", "MOD", "VALUE"};
  static constexpr const char* kOps[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
  json j = {{"key", Base64Encode(c.key)},
            {"target", kTargets[static_cast<int>(c.target)]},
            {"result", kOps[static_cast<int>(c.op)]}};
  switch (c.target) {
    case Compare::Target::kVersion:
      j["version"] = I64(c.number);
      break;
    case Compare::Target::kCreate:
      j["create_revision"] = I64(c.number);
      break;
    case Compare::Target::kMod:
      j["mod_revision"] = I64(c.number);
      break;
    case Compare::Target::kValue:
      j["value"] = Base64Encode(c.value);
      break;
  }
  return j;
}

// A JSON text of a request, or an error: nlohmann throws on strings that are not UTF-8,
// but every byte string here is base64 already, so this is belt and braces.
Result<std::string> Dump(const json& j) {
  try {
    return j.dump();
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string("etcd request: ") + e.what());
  }
}

}  // namespace

// One keep-alive HTTP connection to one endpoint.
struct Connection {
  explicit Connection(const asio::any_io_executor& executor) : stream(executor) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::size_t endpoint = 0;
};

Result<EtcdEndpoint> EtcdEndpoint::Parse(std::string_view url) {
  const std::string quoted = "etcd endpoint '" + std::string(url) + "'";
  if (!url.starts_with("http://")) {
    return Error(ErrorCode::kInvalidArgument, quoted + " must be http://host:port");
  }
  std::string_view rest = url.substr(7);
  if (rest.ends_with('/')) {
    rest.remove_suffix(1);
  }
  EtcdEndpoint ep;
  std::string_view port;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || rest.substr(close + 1).size() < 2 ||
        rest[close + 1] != ':') {
      return Error(ErrorCode::kInvalidArgument, quoted + " must be http://[v6]:port");
    }
    ep.host = std::string(rest.substr(1, close - 1));
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Error(ErrorCode::kInvalidArgument, quoted + " must be http://host:port");
    }
    ep.host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
  }
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535 ||
      ep.host.find_first_of("/?#@ ") != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, quoted + ": bad host or port");
  }
  ep.port = std::string(port);
  return ep;
}

std::string EtcdEndpoint::HostPort() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

TxnOp TxnOp::Range(std::string key, std::string range_end) {
  TxnOp op;
  op.kind = Kind::kRange;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  return op;
}

TxnOp TxnOp::Put(std::string key, std::string value, std::int64_t lease) {
  TxnOp op;
  op.kind = Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

TxnOp TxnOp::Delete(std::string key, std::string range_end) {
  TxnOp op;
  op.kind = Kind::kDelete;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  return op;
}

struct EtcdClient::State {
  State(asio::any_io_executor ex, std::vector<EtcdEndpoint> eps, EtcdOptions opt)
      : executor(std::move(ex)), endpoints(std::move(eps)), options(opt) {}

  asio::any_io_executor executor;
  std::vector<EtcdEndpoint> endpoints;
  EtcdOptions options;
  std::size_t current = 0;  // the endpoint that answered last
  std::vector<std::unique_ptr<Connection>> idle;

  // A new connection: the current endpoint first, then the others in order.
  asio::awaitable<Result<std::unique_ptr<Connection>>> Connect(std::string_view what);
  // A pooled connection etcd has not closed, else a new one.
  asio::awaitable<Result<std::unique_ptr<Connection>>> Acquire(std::string_view what);
  void Release(std::unique_ptr<Connection> connection);
  // POSTs `body` to `path` and returns the answer's result object.
  asio::awaitable<Result<json>> Call(std::string path, json body, std::string what);
};

asio::awaitable<Result<std::unique_ptr<Connection>>> EtcdClient::State::Connect(
    std::string_view what) {
  std::string failures;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const std::size_t index = (current + i) % endpoints.size();
    const EtcdEndpoint& ep = endpoints[index];
    tcp::resolver resolver(executor);
    auto [rec, results] = co_await resolver.async_resolve(ep.host, ep.port, kTuple);
    if (rec) {
      failures += (failures.empty() ? "" : "; ") + ep.HostPort() + ": resolve: " + rec.message();
      continue;
    }
    auto connection = std::make_unique<Connection>(executor);
    connection->stream.expires_after(options.connect_timeout);
    auto [cec, peer] = co_await connection->stream.async_connect(results, kTuple);
    if (cec) {
      failures += (failures.empty() ? "" : "; ") + ep.HostPort() + ": connect: " +
                  (cec == beast::error::timeout ? std::string("timed out") : cec.message());
      continue;
    }
    connection->stream.expires_never();
    beast::error_code ignored;
    connection->stream.socket().set_option(tcp::no_delay(true), ignored);
    connection->endpoint = index;
    current = index;
    co_return connection;
  }
  co_return Error(ErrorCode::kUnavailable,
                  "etcd " + std::string(what) + ": no endpoint answers (" + failures + ")", true);
}

asio::awaitable<Result<std::unique_ptr<Connection>>> EtcdClient::State::Acquire(
    std::string_view what) {
  while (!idle.empty()) {
    auto connection = std::move(idle.back());
    idle.pop_back();
    // etcd may have closed it while idle: a peek that reads end-of-stream (or anything:
    // nothing is due between answers) finds that out before a request is lost on it.
    char byte = 0;
    const ssize_t n =
        ::recv(connection->stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      co_return connection;
    }
  }
  co_return co_await Connect(what);
}

void EtcdClient::State::Release(std::unique_ptr<Connection> connection) {
  if (idle.size() < options.max_idle_connections) {
    idle.push_back(std::move(connection));
  }
}

asio::awaitable<Result<json>> EtcdClient::State::Call(std::string path, json body,
                                                      std::string what) {
  auto text = Dump(body);
  if (!text.ok()) {
    co_return std::move(text).error();
  }
  auto acquired = co_await Acquire(what);
  if (!acquired.ok()) {
    co_return std::move(acquired).error();
  }
  std::unique_ptr<Connection> connection = std::move(acquired).value();
  const EtcdEndpoint& ep = endpoints[connection->endpoint];

  http::request<http::string_body> request{http::verb::post, path, 11};
  request.set(http::field::host, ep.HostPort());
  request.set(http::field::content_type, "application/json");
  request.keep_alive(true);
  request.body() = std::move(*text);
  request.prepare_payload();
  connection->stream.expires_after(options.request_timeout);
  auto [wec, wn] = co_await http::async_write(connection->stream, request, kTuple);
  if (wec) {
    co_return Transport(ep, what, "send", wec);
  }
  http::response_parser<http::string_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(options.max_response_bytes);
  auto [rec, rn] =
      co_await http::async_read(connection->stream, connection->buffer, parser, kTuple);
  if (rec) {
    co_return Transport(ep, what, "read", rec);
  }
  connection->stream.expires_never();
  const unsigned status = parser.get().result_int();
  const bool keep_alive = parser.get().keep_alive();
  auto decoded = Decode(status, parser.get().body(), what);
  if (keep_alive) {
    Release(std::move(connection));
  }
  co_return decoded;
}

Result<std::shared_ptr<EtcdClient>> EtcdClient::Make(asio::any_io_executor executor,
                                                     const std::vector<std::string>& endpoints,
                                                     EtcdOptions options) {
  if (endpoints.empty()) {
    return Error(ErrorCode::kInvalidArgument, "etcd: no endpoint");
  }
  std::vector<EtcdEndpoint> parsed;
  for (const auto& url : endpoints) {
    auto ep = EtcdEndpoint::Parse(url);
    if (!ep.ok()) {
      return std::move(ep).error();
    }
    parsed.push_back(std::move(*ep));
  }
  return std::make_shared<EtcdClient>(std::move(executor), std::move(parsed), options);
}

EtcdClient::EtcdClient(asio::any_io_executor executor, std::vector<EtcdEndpoint> endpoints,
                       EtcdOptions options)
    : state_(std::make_shared<State>(std::move(executor), std::move(endpoints), options)) {}

EtcdClient::~EtcdClient() = default;

Task<RangeResponse> EtcdClient::Range(RangeRequest request) {
  std::shared_ptr<State> state = state_;
  auto answer = co_await state->Call(
      "/v3/kv/range", RangeJson(request.key, request.range_end, request.limit, request.revision),
      "range");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("range");
  RangeResponse r = ReadRange(f, *answer);
  if (!f.ok()) {
    co_return f.error();
  }
  co_return r;
}

Task<PutResponse> EtcdClient::Put(std::string key, std::string value, std::int64_t lease) {
  std::shared_ptr<State> state = state_;
  json body = json::object();
  body["key"] = Base64Encode(key);
  body["value"] = Base64Encode(value);
  if (lease != 0) {
    body["lease"] = I64(lease);
  }
  auto answer = co_await state->Call("/v3/kv/put", std::move(body), "put");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("put");
  PutResponse r;
  r.revision = Revision(f, *answer);
  if (!f.ok()) {
    co_return f.error();
  }
  co_return r;
}

Task<DeleteResponse> EtcdClient::DeleteRange(std::string key, std::string range_end) {
  std::shared_ptr<State> state = state_;
  auto answer =
      co_await state->Call("/v3/kv/deleterange", RangeJson(key, range_end, 0, 0), "deleterange");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("deleterange");
  DeleteResponse r;
  r.revision = Revision(f, *answer);
  r.deleted = f.Int(*answer, "deleted");
  if (!f.ok()) {
    co_return f.error();
  }
  co_return r;
}

Task<TxnResponse> EtcdClient::Txn(TxnRequest request) {
  std::shared_ptr<State> state = state_;
  json body = json::object();
  body["compare"] = json::array();
  body["success"] = json::array();
  body["failure"] = json::array();
  for (const auto& c : request.compare) {
    body["compare"].push_back(CompareJson(c));
  }
  for (const auto& op : request.success) {
    body["success"].push_back(OpJson(op));
  }
  for (const auto& op : request.failure) {
    body["failure"].push_back(OpJson(op));
  }
  auto answer = co_await state->Call("/v3/kv/txn", std::move(body), "txn");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("txn");
  TxnResponse r;
  r.revision = Revision(f, *answer);
  r.succeeded = f.Bool(*answer, "succeeded");
  for (const json& op : f.Array(*answer, "responses")) {
    if (!op.is_object()) {
      f.Fail("responses holds a non-object");
      break;
    }
    if (op.contains("response_range")) {
      r.ranges.push_back(ReadRange(f, f.Object(op, "response_range")));
    }
  }
  if (!f.ok()) {
    co_return f.error();
  }
  co_return r;
}

Task<Lease> EtcdClient::LeaseGrant(std::int64_t ttl_seconds) {
  std::shared_ptr<State> state = state_;
  // Bodies are built before the co_await: GCC 12 miscompiles an initializer list with
  // string literals inside a coroutine's co_await expression ("array used as initializer").
  json body = json::object();
  body["TTL"] = I64(ttl_seconds);
  auto answer = co_await state->Call("/v3/lease/grant", std::move(body), "lease grant");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("lease grant");
  Lease lease;
  lease.id = f.Int(*answer, "ID");
  lease.ttl_seconds = f.Int(*answer, "TTL");
  if (f.ok() && (lease.id == 0 || lease.ttl_seconds <= 0)) {
    f.Fail("no lease id or TTL");
  }
  if (!f.ok()) {
    co_return f.error();
  }
  co_return lease;
}

Task<std::int64_t> EtcdClient::LeaseKeepAlive(std::int64_t id) {
  std::shared_ptr<State> state = state_;
  json body = json::object();
  body["ID"] = I64(id);
  auto answer = co_await state->Call("/v3/lease/keepalive", std::move(body), "lease keepalive");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  Fields f("lease keepalive");
  const std::int64_t ttl = f.Int(*answer, "TTL");
  if (!f.ok()) {
    co_return f.error();
  }
  if (ttl <= 0) {
    // etcd answers a keepalive of a lease it no longer has with TTL 0 (left out).
    co_return Error(ErrorCode::kNotFound, "etcd lease keepalive: lease " + I64(id) + " not found");
  }
  co_return ttl;
}

Task<void> EtcdClient::LeaseRevoke(std::int64_t id) {
  std::shared_ptr<State> state = state_;
  json body = json::object();
  body["ID"] = I64(id);
  auto answer = co_await state->Call("/v3/lease/revoke", std::move(body), "lease revoke");
  if (!answer.ok()) {
    co_return std::move(answer).error();
  }
  co_return Ok();
}

// ---------------------------------------------------------------------------------------
// Watch.

struct EtcdWatch::Impl {
  std::shared_ptr<EtcdClient::State> state;  // options and endpoints outlive the stream
  std::unique_ptr<Connection> connection;
  http::response_parser<http::buffer_body> parser;
  std::vector<char> block = std::vector<char>(kWatchBlock);
  std::string pending;          // bytes of messages not yet complete (or not yet taken)
  std::optional<Error> failed;  // the stream's end: every later Next answers it
  bool closed = false;

  const EtcdEndpoint& endpoint() const { return state->endpoints[connection->endpoint]; }

  // The next complete message (without its newline), reading more as needed.
  asio::awaitable<Result<std::string>> NextMessage();
  // One message as a batch: an empty batch for the created and progress messages.
  Result<WatchBatch> Parse(std::string_view message, bool& created) const;
};

asio::awaitable<Result<std::string>> EtcdWatch::Impl::NextMessage() {
  const std::size_t limit = state->options.max_response_bytes;
  for (;;) {
    const std::size_t nl = pending.find('\n');
    if (nl != std::string::npos) {
      std::string message = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (message.find_first_not_of(" \r\t") == std::string::npos) {
        continue;
      }
      co_return message;
    }
    if (pending.size() > limit) {
      failed = Error(ErrorCode::kEntityTooLarge,
                     "etcd watch: a message over " + std::to_string(limit) + " bytes");
    }
    if (closed && !failed) {
      failed = Error(ErrorCode::kUnavailable, "etcd watch: closed", true);
    }
    if (failed) {
      co_return *failed;
    }
    if (parser.is_done()) {
      // The stream ended; its last message may lack the newline.
      if (pending.find_first_not_of(" \r\n\t") != std::string::npos) {
        std::string message = std::move(pending);
        pending.clear();
        co_return message;
      }
      failed = Error(ErrorCode::kUnavailable, "etcd watch: etcd ended the stream", true);
      co_return *failed;
    }
    // Never more than the bound plus one block is held.
    parser.get().body().data = block.data();
    parser.get().body().size = block.size();
    auto [ec, n] =
        co_await http::async_read_some(connection->stream, connection->buffer, parser, kTuple);
    const std::size_t got = block.size() - parser.get().body().size;
    pending.append(block.data(), got);
    if (ec && ec != http::error::need_buffer) {
      failed = closed ? Error(ErrorCode::kUnavailable, "etcd watch: closed", true)
                      : Transport(endpoint(), "watch", "read", ec);
    }
  }
}

Result<WatchBatch> EtcdWatch::Impl::Parse(std::string_view message, bool& created) const {
  auto result = Decode(200, message, "watch");
  if (!result.ok()) {
    return std::move(result).error();
  }
  const json& r = *result;
  Fields f("watch");
  WatchBatch batch;
  batch.revision = f.Int(f.Object(r, "header"), "revision");
  created = f.Bool(r, "created");
  const bool canceled = f.Bool(r, "canceled");
  const std::int64_t compacted = f.Int(r, "compact_revision");
  const std::string reason = f.String(r, "cancel_reason");
  for (const json& e : f.Array(r, "events")) {
    if (!e.is_object()) {
      f.Fail("events holds a non-object");
      break;
    }
    WatchEvent event;
    const std::string type = f.String(e, "type");
    if (type == "DELETE") {
      event.type = WatchEvent::Type::kDelete;
    } else if (type.empty() || type == "PUT") {
      event.type = WatchEvent::Type::kPut;
    } else {
      f.Fail("unknown event type");
    }
    event.kv = ReadKv(f, f.Object(e, "kv"));
    batch.events.push_back(std::move(event));
  }
  if (!f.ok()) {
    return f.error();
  }
  if (compacted > 0) {
    return Error(ErrorCode::kPreconditionFailed,
                 "etcd watch: revision compacted (now from " + I64(compacted) + ")");
  }
  if (canceled) {
    return Error(ErrorCode::kUnavailable, "etcd watch: cancelled by etcd: " + reason, true);
  }
  return batch;
}

EtcdWatch::EtcdWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EtcdWatch::~EtcdWatch() = default;

void EtcdWatch::Close() {
  impl_->closed = true;
  beast::error_code ignored;
  impl_->connection->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  impl_->connection->stream.cancel();
}

Task<WatchBatch> EtcdWatch::Next() {
  for (;;) {
    auto message = co_await impl_->NextMessage();
    if (!message.ok()) {
      co_return std::move(message).error();
    }
    bool created = false;
    auto batch = impl_->Parse(*message, created);
    if (!batch.ok()) {
      impl_->failed = batch.error();
      co_return std::move(batch).error();
    }
    if (!batch->events.empty()) {
      co_return batch;
    }
  }
}

Task<std::unique_ptr<EtcdWatch>> EtcdClient::Watch(std::string key, std::string range_end,
                                                   std::int64_t start_revision) {
  std::shared_ptr<State> state = state_;
  json create = json::object();
  create["key"] = Base64Encode(key);
  if (!range_end.empty()) {
    create["range_end"] = Base64Encode(range_end);
  }
  if (start_revision > 0) {
    create["start_revision"] = I64(start_revision);
  }
  json body = json::object();
  body["create_request"] = std::move(create);
  auto text = Dump(body);
  if (!text.ok()) {
    co_return std::move(text).error();
  }
  // A stream holds its connection for good: never one from the pool.
  auto connected = co_await state->Connect("watch");
  if (!connected.ok()) {
    co_return std::move(connected).error();
  }
  auto impl = std::make_unique<EtcdWatch::Impl>();
  impl->state = state;
  impl->connection = std::move(connected).value();
  const EtcdEndpoint& ep = impl->endpoint();
  http::request<http::string_body> request{http::verb::post, "/v3/watch", 11};
  request.set(http::field::host, ep.HostPort());
  request.set(http::field::content_type, "application/json");
  request.body() = std::move(*text);
  request.prepare_payload();
  auto& stream = impl->connection->stream;
  stream.expires_after(state->options.request_timeout);
  auto [wec, wn] = co_await http::async_write(stream, request, kTuple);
  if (wec) {
    co_return Transport(ep, "watch", "send", wec);
  }
  impl->parser.header_limit(kMaxHeaderBytes);
  impl->parser.body_limit(boost::none);  // the stream is bounded per message instead
  auto [hec, hn] =
      co_await http::async_read_header(stream, impl->connection->buffer, impl->parser, kTuple);
  if (hec) {
    co_return Transport(ep, "watch", "read", hec);
  }
  const unsigned status = impl->parser.get().result_int();
  // Until etcd confirms the watch (or refuses it), the request timeout applies.
  auto first = co_await impl->NextMessage();
  if (!first.ok()) {
    co_return std::move(first).error();
  }
  if (status != 200) {
    auto decoded = Decode(status, *first, "watch");
    co_return decoded.ok() ? Corrupt("watch", "status " + std::to_string(status))
                           : std::move(decoded).error();
  }
  bool created = false;
  auto batch = impl->Parse(*first, created);
  if (!batch.ok()) {
    co_return std::move(batch).error();
  }
  if (!created) {
    co_return Corrupt("watch", "the first message does not confirm the watch");
  }
  stream.expires_never();
  co_return std::make_unique<EtcdWatch>(std::move(impl));
}

}  // namespace strata::storage::cluster
