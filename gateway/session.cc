#include "gateway/session.h"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <random>

#include "common/http_time.h"
#include "common/log.h"
#include "gateway/body_pace.h"
#include "gateway/dispatch.h"
#include "gateway/error_table.h"
#include "gateway/http_framing.h"
#include "gateway/metrics.h"
#include "gateway/metrics_access.h"
#include "gateway/response_head.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

namespace beast = boost::beast;
using asio::use_awaitable;
constexpr auto kTuple = asio::as_tuple(use_awaitable);

// Bodies larger than S3's single-PUT limit are refused from their Content-Length; the
// parser's own limit leaves room for aws-chunked framing on top of that.
constexpr std::uint64_t kMaxRawBody = 6ull << 30;
// After an early error response, this much of an unread body is read and dropped so the
// connection can be kept; a larger remainder closes it.
constexpr std::uint64_t kMaxDrain = 1 << 20;
// Beast's own stream timeout stays armed this long past a body read's deadline, in case
// the cancellation below does not end the read.
constexpr auto kBackstop = std::chrono::seconds(2);

constexpr std::string_view kRequestTimeoutMessage =
    "Your socket connection to the server was not read from or written to within the "
    "timeout period.";

// Ends a socket's pending read when a deadline passes, leaving the socket open so the
// session can still answer 400 RequestTimeout (Beast's stream timeout closes it). The
// timer's handler may run after the session is gone: it holds only a weak reference,
// and the session owns the only strong one.
class ReadDeadline {
 public:
  explicit ReadDeadline(const asio::any_io_executor& executor)
      : state_(std::make_shared<State>(executor)) {}

  void Arm(asio::ip::tcp::socket& socket, std::chrono::steady_clock::duration after) {
    const std::uint64_t generation = ++state_->generation;
    state_->fired = false;
    state_->timer.expires_after(after);
    state_->timer.async_wait(
        [weak = std::weak_ptr<State>(state_), generation, &socket](boost::system::error_code ec) {
          auto state = weak.lock();
          if (ec || !state || state->generation != generation) {
            return;
          }
          state->fired = true;
          boost::system::error_code ignored;
          socket.cancel(ignored);
        });
  }

  // Stops the timer; true when the deadline passed (the read was, or is being, cancelled).
  bool Disarm() {
    ++state_->generation;  // a handler already queued with success is now stale
    state_->timer.cancel();
    return state_->fired;
  }

 private:
  struct State {
    explicit State(const asio::any_io_executor& executor) : timer(executor) {}
    asio::steady_timer timer;
    std::uint64_t generation = 0;
    bool fired = false;
  };
  std::shared_ptr<State> state_;
};

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string id(16, '0');
  std::uint64_t v = rng();
  for (char& c : id) {
    c = kHex[v & 0xF];
    v >>= 4;
  }
  return id;
}

template <typename Stream>
class Session final : public Exchange {
 public:
  Session(Stream stream, CoreState& core, Services& services, std::string remote)
      : stream_(std::move(stream)),
        core_(core),
        services_(services),
        remote_(std::move(remote)),
        buffer_(services.config.server.max_header_bytes + 64 * 1024),
        deadline_(stream_.get_executor()) {}

  asio::awaitable<void> Run() {
    core_.metrics->ConnectionOpened();
    opened_ = true;
    canceller_ = core_.idle_cancellers.insert(core_.idle_cancellers.end(), [this] {
      if (idle_) {
        Lowest().cancel();
      }
    });
    co_await Serve();
    core_.idle_cancellers.erase(*canceller_);
    canceller_.reset();
    co_await Close();
  }

  // Also when the session was cancelled (a shutdown past its grace) and unwound: it
  // leaves the core's lists and counts.
  ~Session() override {
    if (canceller_) {
      core_.idle_cancellers.erase(*canceller_);
    }
    if (idle_entry_) {
      core_.idle_sessions.erase(*idle_entry_);
    }
    if (opened_) {
      core_.metrics->ConnectionClosed();
    }
    if (core_.open_connections != nullptr) {
      core_.open_connections->fetch_sub(1, std::memory_order_relaxed);
    }
  }

  // Exchange.
  const RequestHeader& request() const override { return parser_->get().base(); }
  const std::string& request_id() const override { return request_id_; }
  std::string_view remote_address() const override { return remote_; }
  bool secure() const override { return !std::is_same_v<Stream, beast::tcp_stream>; }
  void AddResponseHeader(std::string name, std::string value) override {
    extra_headers_.emplace_back(std::move(name), std::move(value));
  }
  bool body_complete() const override { return parser_->is_done(); }
  bool response_started() const override { return response_started_; }
  unsigned status() const override { return status_; }
  std::uint64_t bytes_in() const override { return bytes_in_; }
  std::uint64_t bytes_out() const override { return bytes_out_; }
  void CloseAfterResponse() override { keep_alive_ = false; }
  void SetOperation(S3Operation op) override { operation_ = op; }
  storage::PeerTransport* peer_client() const override { return core_.peer_client; }

  asio::awaitable<Result<std::size_t>> ReadBody(std::span<char> buf) override {
    // Sent even for an empty body: botocore, told to expect "100 Continue", reads the
    // final response as if it were the 100 and falls out of step with the connection
    // (boto/botocore#3755).
    if (!continue_sent_ && ExpectsContinue()) {
      continue_sent_ = true;
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      Lowest().expires_after(services_.config.server.idle_timeout);
      auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(kContinue), kTuple);
      if (ec) {
        co_return Error(ErrorCode::kIncompleteBody, "connection lost");
      }
    }
    if (parser_->is_done()) {
      co_return std::size_t{0};
    }
    while (!parser_->is_done()) {
      auto& body = parser_->get().body();
      body.data = buf.data();
      body.size = buf.size();
      // Each read may wait until the body's average rate would fall below the minimum,
      // and never longer than the idle timeout (gateway/body_pace.h).
      const auto allowance = pace_->Allowance(services_.config.server.idle_timeout);
      if (allowance <= std::chrono::steady_clock::duration::zero()) {
        keep_alive_ = false;
        co_return Error(ErrorCode::kRequestTimeout, std::string(kRequestTimeoutMessage));
      }
      deadline_.Arm(Lowest().socket(), allowance);
      Lowest().expires_after(allowance + kBackstop);
      const auto started = std::chrono::steady_clock::now();
      auto [ec, n] = co_await http::async_read_some(stream_, buffer_, *parser_, kTuple);
      const bool late = deadline_.Disarm();
      std::size_t got = buf.size() - body.size;
      pace_->Record(std::chrono::steady_clock::now() - started, got);
      if (ec == http::error::need_buffer) {
        ec = {};
      }
      if (ec) {
        keep_alive_ = false;
        if (ec == beast::error::timeout || (late && ec == asio::error::operation_aborted)) {
          co_return Error(ErrorCode::kRequestTimeout, std::string(kRequestTimeoutMessage));
        }
        co_return Error(ErrorCode::kIncompleteBody,
                        "You did not provide the number of bytes specified by the "
                        "Content-Length HTTP header");
      }
      bytes_in_ += got;
      if (got > 0) {
        co_return got;
      }
    }
    co_return std::size_t{0};
  }

  asio::awaitable<Result<void>> SendHeader(ResponseHeader header, std::uint64_t content_length,
                                           std::string_view body_start) override {
    PrepareResponse(header);
    char length[24];
    auto end = std::to_chars(length, length + sizeof length, content_length).ptr;
    header.set(http::field::content_length, std::string_view(length, end - length));
    FormatResponseHead(header, head_);
    Lowest().expires_after(services_.config.server.idle_timeout);
    boost::system::error_code ec;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      const std::array<asio::const_buffer, 2> out{asio::buffer(head_), asio::buffer(body_start)};
      auto [wec, n] = co_await asio::async_write(stream_, out, kTuple);
      ec = wec;
      bytes_out_ += n > head_.size() ? n - head_.size() : 0;
    } else {
      // TLS writes one buffer at a time: with two, Beast's ssl_stream (Boost 1.81) wrote
      // the first and then reported the second done with 0 bytes (tests/e2e/test_tls.py).
      auto [hec, h] = co_await asio::async_write(stream_, asio::buffer(head_), kTuple);
      ec = hec;
      if (!ec && !body_start.empty()) {
        auto [bec, n] = co_await asio::async_write(stream_, asio::buffer(body_start), kTuple);
        ec = bec;
        bytes_out_ += n;
      }
    }
    if (ec) {
      keep_alive_ = false;
      co_return Error(ErrorCode::kIncompleteBody, "client went away");
    }
    co_return Ok();
  }

  asio::awaitable<Result<void>> SendBody(std::string_view data) override {
    Lowest().expires_after(services_.config.server.idle_timeout);
    auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(data), kTuple);
    bytes_out_ += n;
    if (ec) {
      keep_alive_ = false;
      co_return Error(ErrorCode::kIncompleteBody, "client went away");
    }
    co_return Ok();
  }

  asio::awaitable<Result<void>> Send(ResponseHeader header, std::string body) override {
    PrepareResponse(header);
    http::response<http::string_body> res(std::move(header));
    res.body() = std::move(body);
    res.prepare_payload();
    Lowest().expires_after(services_.config.server.idle_timeout);
    auto [ec, n] = co_await http::async_write(stream_, res, kTuple);
    bytes_out_ += res.body().size();
    if (ec) {
      keep_alive_ = false;
      co_return Error(ErrorCode::kIncompleteBody, "client went away");
    }
    co_return Ok();
  }

 private:
  auto& Lowest() { return beast::get_lowest_layer(stream_); }

  bool ExpectsContinue() const {
    auto it = request().find(http::field::expect);
    return it != request().end() && beast::iequals(it->value(), "100-continue");
  }

  void PrepareResponse(ResponseHeader& header) {
    response_started_ = true;
    status_ = header.result_int();
    // A body we did not read must be drained before the next request can be parsed;
    // when that is too much, the connection ends with this response.
    if (!parser_->is_done()) {
      auto remaining = parser_->content_length_remaining();
      if (!remaining || *remaining > kMaxDrain || parser_->chunked()) {
        keep_alive_ = false;
      }
    }
    // A client waiting for "100 Continue" gets a final answer instead and will not send
    // the body (or sends it later, or, like botocore, misreads the next response even
    // when the body is empty): either way the stream is no longer in step.
    if (ExpectsContinue() && !continue_sent_) {
      keep_alive_ = false;
    }
    if (core_.stopping) {
      keep_alive_ = false;
    }
    header.version(11);
    for (const auto& [name, value] : extra_headers_) {
      header.set(name, value);
    }
    header.set(http::field::server, "strata");
    header.set("x-amz-request-id", request_id_);
    header.set("x-amz-id-2", request_id_);
    header.set(http::field::date,
               FormatHttpDate(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  services_.clock.Now().time_since_epoch())
                                  .count()));
    if (!keep_alive_) {
      header.set(http::field::connection, "close");
    }
  }

  asio::awaitable<void> Serve() {
    if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
      Lowest().expires_after(services_.config.server.header_timeout);
      auto [ec] = co_await stream_.async_handshake(asio::ssl::stream_base::server, kTuple);
      if (ec) {
        co_return;
      }
    }
    while (!core_.stopping) {
      // GCC 12 miscompiles co_await inside conditions: every await is its own statement.
      bool more = co_await WaitForRequest();
      if (!more) {
        co_return;
      }
      bool parsed = co_await ReadRequestHeader();
      if (!parsed) {
        co_return;
      }
      auto started = std::chrono::steady_clock::now();
      operation_ = MethodOperation(request().method());
      if (IsScrape()) {
        co_await ServeMetrics();
      } else {
        co_await HandleRequest(*this, services_);
      }
      core_.metrics->RecordRequest(operation_, status_, std::chrono::steady_clock::now() - started,
                                   bytes_in_, bytes_out_);
      if (!response_started_) {
        keep_alive_ = false;  // a handler bug must not wedge a client
      }
      if (!keep_alive_) {
        co_return;
      }
      bool drained = co_await DrainBody();
      if (!drained) {
        co_return;
      }
    }
  }

  bool IsScrape() const {
    if (!services_.config.server.metrics) {
      return false;
    }
    const auto& req = request();
    auto host = req.find(http::field::host);
    auto auth = req.find(http::field::authorization);
    return IsMetricsScrape(req.method(), req.target(),
                           host == req.end() ? std::string_view() : std::string_view(host->value()),
                           auth == req.end() ? std::string_view() : std::string_view(auth->value()),
                           services_.config.server.domain);
  }

  // Answers a scrape with every core's counters, as much of them as its credentials may
  // read (gateway/metrics_access.h); a refused one gets S3's error document.
  asio::awaitable<void> ServeMetrics() {
    auto started = std::chrono::steady_clock::now();
    operation_ = S3Operation::kGetMetrics;
    ResponseHeader header;
    header.set(http::field::cache_control, "no-store");
    std::string body;
    auto scope = AuthorizeScrape(request(), services_);
    if (scope.ok()) {
      header.result(http::status::ok);
      header.set(http::field::content_type, kMetricsContentType);
      body = core_.all_metrics->Scrape(services_, *scope);
    } else {
      header.result(LookupS3Error(scope.error().code).status);
      header.set(http::field::content_type, "application/xml");
      body = ScrapeErrorDocument(scope.error(), request_id_);
    }
    (void)co_await Send(std::move(header), std::move(body));
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
    spdlog::info(
        "request id={} remote={} method=GET path=\"{}\" op=GetMetrics status={} in={} "
        "out={} us={}",
        request_id_, remote_, std::string_view(request().target()), status_, bytes_in_, bytes_out_,
        micros);
  }

  // Waits, idle, for the first byte of the next request; false when the connection ends.
  asio::awaitable<bool> WaitForRequest() {
    if (buffer_.size() > 0) {
      co_return true;
    }
    idle_ = true;
    idle_entry_ = core_.idle_sessions.insert(core_.idle_sessions.end(), [this] {
      idle_entry_.reset();  // the acceptor has taken it off the list
      core_.metrics->IdleConnectionEvicted();
      Lowest().cancel();
    });
    Lowest().expires_after(services_.config.server.idle_timeout);
    auto [ec, n] = co_await stream_.async_read_some(buffer_.prepare(4096), kTuple);
    idle_ = false;
    if (idle_entry_) {
      core_.idle_sessions.erase(*idle_entry_);
      idle_entry_.reset();
    }
    if (ec) {
      linger_ = false;  // no response is on its way: nothing to wait for at close
      co_return false;
    }
    buffer_.commit(n);
    co_return !core_.stopping;
  }

  asio::awaitable<bool> ReadRequestHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(services_.config.server.max_header_bytes));
    parser_->body_limit(kMaxRawBody);
    request_id_ = NewRequestId();
    keep_alive_ = true;
    continue_sent_ = false;
    response_started_ = false;
    status_ = 0;
    extra_headers_.clear();
    bytes_in_ = bytes_out_ = 0;
    pace_.emplace(services_.config.server.body_min_rate_bytes_per_s,
                  services_.config.server.body_rate_grace);
    Lowest().expires_after(services_.config.server.header_timeout);
    // The raw head is looked at before Beast parses it: Beast joins folded lines into
    // one value, after which a fold can no longer be told from a space.
    const std::size_t max_header = services_.config.server.max_header_bytes;
    for (;;) {
      std::string_view raw(static_cast<const char*>(buffer_.data().data()), buffer_.size());
      auto scan = ScanRequestHead(raw);
      if (scan.obs_fold) {
        const FramingError folded{
            400, "BadRequest",
            "Malformed HTTP request: obsolete line folding or whitespace before a field name."};
        co_await SendHeadError(folded);
        co_return false;
      }
      if (scan.complete || buffer_.size() >= max_header) {
        break;  // too long: the parser below refuses it with S3's error
      }
      auto [rec, got] = co_await stream_.async_read_some(buffer_.prepare(4096), kTuple);
      if (rec) {
        co_return false;  // timed out, closed or reset: nobody to answer
      }
      buffer_.commit(got);
    }
    auto [ec, n] = co_await http::async_read_header(stream_, buffer_, *parser_, kTuple);
    if (!ec) {
      // Framing Beast accepts but two parties could read differently (RFC 9112 6.3).
      if (auto refused = CheckFraming(request())) {
        co_await SendHeadError(*refused);
        co_return false;
      }
      keep_alive_ = parser_->get().keep_alive();
      co_return true;
    }
    if (ec == beast::error::timeout || ec == http::error::end_of_stream ||
        ec == asio::error::operation_aborted || ec == asio::error::eof ||
        ec == asio::error::connection_reset) {
      co_return false;
    }
    // The request cannot be understood, so the connection cannot continue after it.
    bool too_large = ec == http::error::header_limit || ec == http::error::buffer_overflow;
    ErrorCode code = ErrorCode::kInvalidRequest;
    std::string message = "Malformed HTTP request: " + ec.message();
    if (too_large) {
      code = ErrorCode::kRequestHeaderSectionTooLarge;
      message = "Your request header section exceeds the maximum allowed size.";
    }
    co_await SendParseError(code, std::move(message));
    co_return false;
  }

  asio::awaitable<void> SendParseError(ErrorCode code, std::string message) {
    auto info = LookupS3Error(code);
    std::string_view s3code = code == ErrorCode::kInvalidRequest ? "BadRequest" : info.code;
    const FramingError error{info.status, std::string(s3code), std::move(message)};
    co_await SendHeadError(error);
  }

  // Answers a request whose head cannot be served, and ends the connection after it.
  // By reference: GCC 12 destroyed a by-value aggregate parameter of this coroutine twice.
  asio::awaitable<void> SendHeadError(const FramingError& error) {
    auto started = std::chrono::steady_clock::now();
    const unsigned status = error.status;
    const std::string& message = error.message;
    XmlWriter xml("Error", false);
    xml.Element("Code", error.code).Element("Message", message).Element("RequestId", request_id_);
    ResponseHeader header;
    header.result(status);
    header.set(http::field::content_type, "application/xml");
    keep_alive_ = false;
    response_started_ = true;
    status_ = status;
    header.version(11);
    header.set(http::field::server, "strata");
    header.set("x-amz-request-id", request_id_);
    header.set(http::field::connection, "close");
    http::response<http::string_body> res(std::move(header));
    res.body() = xml.Finish();
    res.prepare_payload();
    Lowest().expires_after(services_.config.server.idle_timeout);
    auto [ec, n] = co_await http::async_write(stream_, res, kTuple);
    bytes_out_ = ec ? 0 : res.body().size();
    core_.metrics->RecordRequest(S3Operation::kMalformed, status,
                                 std::chrono::steady_clock::now() - started, bytes_in_, bytes_out_);
    spdlog::info("request id={} remote={} status={} error=\"{}\"", request_id_, remote_, status,
                 message);
  }

  // Reads and drops what is left of the request body so the next request can be parsed.
  asio::awaitable<bool> DrainBody() {
    char scratch[16 * 1024];
    std::uint64_t drained = 0;
    while (!parser_->is_done()) {
      auto got = co_await ReadBody(std::span<char>(scratch, sizeof scratch));
      if (!got.ok() || *got == 0) {
        co_return false;
      }
      drained += *got;
      core_.metrics->AddBytesReceived(*got);
      if (drained > kMaxDrain) {
        co_return false;
      }
    }
    co_return true;
  }

  asio::awaitable<void> Close() {
    if (!linger_) {
      beast::error_code ec;
      Lowest().socket().close(ec);
      co_return;
    }
    Lowest().expires_after(std::chrono::seconds(2));
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      beast::error_code ec;
      // A lingering close: stop sending, then read until the client closes, so it sees
      // our last response instead of a reset caused by unread bytes.
      stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
      char scratch[4096];
      for (int i = 0; i < 64 && !ec; ++i) {
        auto [rec, n] = co_await stream_.async_read_some(asio::buffer(scratch), kTuple);
        ec = rec;
      }
      stream_.socket().close(ec);
    } else {
      co_await stream_.async_shutdown(kTuple);
      beast::error_code ec;
      Lowest().socket().close(ec);
    }
  }

  Stream stream_;
  CoreState& core_;
  Services& services_;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::buffer_body>> parser_;
  std::optional<BodyPace> pace_;  // the current request body's
  ReadDeadline deadline_;
  // This session's entry in core_.idle_sessions while it waits for a request.
  std::optional<std::list<std::function<void()>>::iterator> idle_entry_;
  // Its entry in core_.idle_cancellers while it serves.
  std::optional<std::list<std::function<void()>>::iterator> canceller_;
  bool opened_ = false;  // counted as an open connection in the metrics
  bool linger_ = true;   // close() after reading what the client still sends (Close)
  std::string request_id_;
  std::vector<std::pair<std::string, std::string>> extra_headers_;  // AddResponseHeader's
  std::string head_;  // the last response's status line and fields, its capacity reused
  bool idle_ = false;
  bool keep_alive_ = true;
  bool continue_sent_ = false;
  bool response_started_ = false;
  unsigned status_ = 0;
  S3Operation operation_ = S3Operation::kMethodOther;
  std::uint64_t bytes_in_ = 0;
  std::uint64_t bytes_out_ = 0;
};

std::string RemoteOf(const asio::ip::tcp::socket& socket) {
  beast::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) {
    return "?";
  }
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

asio::awaitable<void> ServePlain(asio::ip::tcp::socket socket, CoreState& core,
                                 Services& services) {
  std::string remote = RemoteOf(socket);
  Session<beast::tcp_stream> session(beast::tcp_stream(std::move(socket)), core, services,
                                     std::move(remote));
  co_await session.Run();
}

asio::awaitable<void> ServeTls(asio::ip::tcp::socket socket, asio::ssl::context& tls,
                               CoreState& core, Services& services) {
  std::string remote = RemoteOf(socket);
  Session<beast::ssl_stream<beast::tcp_stream>> session(
      beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), tls), core,
      services, std::move(remote));
  co_await session.Run();
}

}  // namespace strata::gateway
