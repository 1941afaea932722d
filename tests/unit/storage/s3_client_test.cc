// S3Client against a real S3 server process (moto_server on loopback; the test fails when
// it cannot start one), and against a scripted server for the failures a real one does
// not produce on demand (503s, a body cut off mid-way, a kept-alive connection closed).
#include "storage/upstream/s3_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_moto.h"

namespace strata::storage::upstream {
namespace {

namespace asio = boost::asio;
using testing::RandomBytes;

// Runs one coroutine to completion on a private io_context.
template <typename T>
T Run(std::function<asio::awaitable<T>()> body) {
  asio::io_context context;
  std::optional<T> out;
  auto store = [&out, &body]() -> asio::awaitable<void> { out.emplace(co_await body()); };
  asio::co_spawn(context, store(), [](std::exception_ptr failure) {
    if (failure) {
      std::rethrow_exception(failure);
    }
  });
  context.run();
  return std::move(*out);
}

using testing::Accepts;
using testing::FreePort;
using testing::MotoServer;

MotoServer* moto = nullptr;

Endpoint LoopbackEndpoint(int port) {
  auto ep = Endpoint::Parse("http://127.0.0.1:" + std::to_string(port));
  ep->credential = {"test", "test", false};
  return *ep;
}

Endpoint MotoEndpoint() { return LoopbackEndpoint(moto->port()); }

class S3ClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { moto = new MotoServer(); }
  static void TearDownTestSuite() {
    delete moto;
    moto = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(moto->running()) << "moto_server (the upstream these tests need) did not start";
  }
};

// Runs `fn` with a client made inside the coroutine, on the context that runs it.
class ClientOnContext {
 public:
  // `port` 0: moto; else a plain-HTTP server on that loopback port.
  explicit ClientOnContext(ClientOptions options = {}, int port = 0)
      : options_(options), port_(port) {}
  template <typename T>
  Result<T> Do(std::function<asio::awaitable<Result<T>>(S3Client&)> fn) {
    const ClientOptions options = options_;
    const int port = port_;
    return Run<Result<T>>([fn, options, port]() -> asio::awaitable<Result<T>> {
      auto ex = co_await asio::this_coro::executor;
      Endpoint ep = port == 0 ? MotoEndpoint() : LoopbackEndpoint(port);
      S3Client c(ex, ep, options);
      co_return co_await fn(c);
    });
  }

 private:
  ClientOptions options_;
  int port_ = 0;
};

asio::awaitable<Result<std::size_t>> FromString(const std::string& body, std::uint64_t offset,
                                                std::span<char> buf) {
  const std::size_t n = std::min<std::size_t>(buf.size(), body.size() - offset);
  std::copy_n(body.data() + offset, n, buf.data());
  co_return n;
}

struct Got {
  ObjectInfo info;
  std::string body;
};

asio::awaitable<Result<Got>> GetAll(S3Client& c, std::string key, GetRequest request) {
  Got got;
  auto info = co_await c.GetObject("bkt", key, request,
                                   [&got](std::string_view data) -> asio::awaitable<Result<void>> {
                                     got.body.append(data);
                                     co_return Ok();
                                   });
  if (!info.ok()) {
    co_return std::move(info).error();
  }
  got.info = std::move(info).value();
  co_return got;
}

TEST_F(S3ClientTest, PutHeadGetRangeAndConditional) {
  ClientOnContext on;
  {
    auto created = on.Do<void>([](S3Client& c) { return c.CreateBucket("bkt"); });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  // Creating a bucket one already owns is no failure.
  {
    auto created = on.Do<void>([](S3Client& c) { return c.CreateBucket("bkt"); });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  auto buckets = on.Do<std::vector<BucketInfo>>([](S3Client& c) { return c.ListBuckets(); });
  ASSERT_TRUE(buckets.ok()) << buckets.error().message;
  ASSERT_EQ(buckets->size(), 1u);
  EXPECT_EQ((*buckets)[0].name, "bkt");
  const std::string body = RandomBytes(300'000, 1);
  auto put = on.Do<PutResult>([&body](S3Client& c) -> asio::awaitable<Result<PutResult>> {
    std::vector<Header> headers{{"Content-Type", "application/x-test"},
                                {"x-amz-meta-owner", "alice"}};
    co_return co_await c.PutObject(
        "bkt", "dir/a b+c", body.size(),
        [&body](std::uint64_t o, std::span<char> b) { return FromString(body, o, b); },
        std::move(headers));
  });
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->etag.size(), 34u);  // "md5hex"

  auto head = on.Do<ObjectInfo>([](S3Client& c) { return c.HeadObject("bkt", "dir/a b+c"); });
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(head->size, body.size());
  EXPECT_EQ(head->etag, put->etag);
  EXPECT_EQ(head->content_type, "application/x-test");
  EXPECT_NE(
      std::find(head->headers.begin(), head->headers.end(), Header{"x-amz-meta-owner", "alice"}),
      head->headers.end());

  auto whole = on.Do<Got>([](S3Client& c) { return GetAll(c, "dir/a b+c", {}); });
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_TRUE(whole->body == body);
  EXPECT_EQ(whole->info.etag, put->etag);

  GetRequest range;
  range.range = std::make_pair(1000, 200'999);
  auto part = on.Do<Got>([range](S3Client& c) { return GetAll(c, "dir/a b+c", range); });
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_TRUE(part->body == body.substr(1000, 200'000));
  EXPECT_EQ(part->info.size, body.size());  // the whole object's, from Content-Range

  GetRequest unchanged;
  unchanged.if_none_match = put->etag;
  auto not_modified =
      on.Do<Got>([unchanged](S3Client& c) { return GetAll(c, "dir/a b+c", unchanged); });
  ASSERT_TRUE(not_modified.ok()) << not_modified.error().message;
  EXPECT_TRUE(not_modified->info.not_modified);
  EXPECT_TRUE(not_modified->body.empty());
  auto head_not_modified = on.Do<ObjectInfo>(
      [unchanged](S3Client& c) { return c.HeadObject("bkt", "dir/a b+c", unchanged); });
  ASSERT_TRUE(head_not_modified.ok()) << head_not_modified.error().message;
  EXPECT_TRUE(head_not_modified->not_modified);

  GetRequest other;
  other.if_match = "\"0123456789abcdef0123456789abcdef\"";
  auto mismatch = on.Do<Got>([other](S3Client& c) { return GetAll(c, "dir/a b+c", other); });
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().code, ErrorCode::kPreconditionFailed);

  auto missing = on.Do<Got>([](S3Client& c) { return GetAll(c, "nope", {}); });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNoSuchKey);
  EXPECT_FALSE(missing.error().retryable);
  auto head_missing = on.Do<ObjectInfo>([](S3Client& c) { return c.HeadObject("bkt", "nope"); });
  ASSERT_FALSE(head_missing.ok());
  EXPECT_EQ(head_missing.error().code, ErrorCode::kNoSuchKey);
  auto no_bucket = on.Do<ObjectInfo>([](S3Client& c) { return c.HeadObject("absent", "k"); });
  ASSERT_FALSE(no_bucket.ok());

  auto remove = [](S3Client& c) { return c.DeleteObject("bkt", "dir/a b+c", ""); };
  ASSERT_TRUE(on.Do<DeleteResult>(remove).ok());
  ASSERT_TRUE(on.Do<DeleteResult>(remove).ok());  // an absent key is no failure
  auto gone = on.Do<ObjectInfo>([](S3Client& c) { return c.HeadObject("bkt", "dir/a b+c"); });
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchKey);
}

asio::awaitable<Result<PutResult>> PutString(S3Client& c, std::string bucket, std::string key,
                                             const std::string& body) {
  co_return co_await c.PutObject(
      std::move(bucket), std::move(key), body.size(),
      [&body](std::uint64_t o, std::span<char> b) { return FromString(body, o, b); },
      std::vector<Header>{});
}

TEST_F(S3ClientTest, VersioningStatusVersionIdsAndDeleteMarkers) {
  ClientOnContext on;
  ASSERT_TRUE(on.Do<void>([](S3Client& c) { return c.CreateBucket("vers"); }).ok());
  auto status = on.Do<std::string>([](S3Client& c) { return c.GetBucketVersioning("vers"); });
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(*status, "");
  // Unversioned: a PUT names no version.
  const std::string first = "first", second = "second";
  auto unversioned =
      on.Do<PutResult>([&first](S3Client& c) { return PutString(c, "vers", "k", first); });
  ASSERT_TRUE(unversioned.ok()) << unversioned.error().message;
  EXPECT_TRUE(unversioned->version_id.empty() || unversioned->version_id == "null");

  auto enabled = on.Do<void>([](S3Client& c) { return c.PutBucketVersioning("vers", "Enabled"); });
  ASSERT_TRUE(enabled.ok()) << enabled.error().message;
  status = on.Do<std::string>([](S3Client& c) { return c.GetBucketVersioning("vers"); });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, "Enabled");

  auto versioned =
      on.Do<PutResult>([&second](S3Client& c) { return PutString(c, "vers", "k", second); });
  ASSERT_TRUE(versioned.ok()) << versioned.error().message;
  ASSERT_FALSE(versioned->version_id.empty());
  auto marker = on.Do<DeleteResult>([](S3Client& c) { return c.DeleteObject("vers", "k", ""); });
  ASSERT_TRUE(marker.ok()) << marker.error().message;
  EXPECT_TRUE(marker->delete_marker);
  EXPECT_FALSE(marker->version_id.empty());
  EXPECT_NE(marker->version_id, versioned->version_id);

  // The key looks deleted, but the version is still there by its id, and goes when
  // deleted by it.
  auto hidden = on.Do<ObjectInfo>([](S3Client& c) { return c.HeadObject("vers", "k"); });
  ASSERT_FALSE(hidden.ok());
  GetRequest by_id;
  by_id.version_id = versioned->version_id;
  auto kept = on.Do<ObjectInfo>([by_id](S3Client& c) { return c.HeadObject("vers", "k", by_id); });
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept->size, second.size());
  EXPECT_EQ(kept->version_id, versioned->version_id);
  const std::string id = versioned->version_id;
  auto removed = on.Do<DeleteResult>([id](S3Client& c) { return c.DeleteObject("vers", "k", id); });
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_FALSE(removed->delete_marker);
  auto gone = on.Do<ObjectInfo>([by_id](S3Client& c) { return c.HeadObject("vers", "k", by_id); });
  ASSERT_FALSE(gone.ok());
  // Removing it again is no failure.
  EXPECT_TRUE(
      on.Do<DeleteResult>([id](S3Client& c) { return c.DeleteObject("vers", "k", id); }).ok());

  ASSERT_TRUE(
      on.Do<void>([](S3Client& c) { return c.PutBucketVersioning("vers", "Suspended"); }).ok());
  status = on.Do<std::string>([](S3Client& c) { return c.GetBucketVersioning("vers"); });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, "Suspended");
  EXPECT_FALSE(
      on.Do<void>([](S3Client& c) { return c.PutBucketVersioning("absent", "Enabled"); }).ok());
}

TEST_F(S3ClientTest, LargeObjectsGoUpInPartsAndComeBackWhole) {
  ClientOptions options;
  options.multipart_threshold = 6 << 20;
  options.part_bytes = 5 << 20;
  ClientOnContext on(options);
  {
    auto created = on.Do<void>([](S3Client& c) { return c.CreateBucket("bkt"); });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  const std::string body = RandomBytes((13 << 20) + 7, 2);
  auto put = on.Do<PutResult>([&body](S3Client& c) -> asio::awaitable<Result<PutResult>> {
    // Dropped for a multipart upload: a whole-object checksum is no part's.
    std::vector<Header> headers{{"x-amz-checksum-crc64nvme", "AAAAAAAAAAA="}};
    co_return co_await c.PutObject(
        "bkt", "big", body.size(),
        [&body](std::uint64_t o, std::span<char> b) { return FromString(body, o, b); },
        std::move(headers));
  });
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_TRUE(put->etag.ends_with("-3\"")) << put->etag;
  auto got = on.Do<Got>([](S3Client& c) { return GetAll(c, "big", {}); });
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->body.size(), body.size());
  EXPECT_TRUE(got->body == body);
}

TEST_F(S3ClientTest, ListsWithPrefixDelimiterAndPages) {
  ClientOnContext on;
  {
    auto created = on.Do<void>([](S3Client& c) { return c.CreateBucket("bkt"); });
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  for (const char* key : {"l/a", "l/b", "l/c", "l/d/1", "l/d/2", "m"}) {
    std::string k = key;
    auto put = on.Do<PutResult>([k](S3Client& c) -> asio::awaitable<Result<PutResult>> {
      const std::string body = "x";
      co_return co_await c.PutObject(
          "bkt", k, body.size(),
          [&body](std::uint64_t o, std::span<char> b) { return FromString(body, o, b); });
    });
    ASSERT_TRUE(put.ok()) << put.error().message;
  }
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;
  ListRequest request;
  request.prefix = "l/";
  request.delimiter = "/";
  request.max_keys = 2;
  for (int page = 0; page < 10; ++page) {
    auto listed =
        on.Do<ListPage>([request](S3Client& c) { return c.ListObjectsV2("bkt", request); });
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    for (const auto& object : listed->objects) {
      keys.push_back(object.key);
      EXPECT_EQ(object.size, 1u);
    }
    prefixes.insert(prefixes.end(), listed->common_prefixes.begin(), listed->common_prefixes.end());
    if (!listed->truncated) {
      break;
    }
    request.continuation_token = listed->next_continuation_token;
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"l/a", "l/b", "l/c"}));
  EXPECT_EQ(prefixes, std::vector<std::string>{"l/d/"});
}

// A loopback HTTP server that answers each request with the next step of a script, for
// the failures a real upstream does not produce on demand. Records each request's head.
class ScriptedServer {
 public:
  // Writes a response to `fd`; returns false to close the connection after it.
  using Step = std::function<bool(int fd, const std::string& head)>;

  explicit ScriptedServer(std::vector<Step> steps) : steps_(std::move(steps)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(listener_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<std::string> heads() {
    std::lock_guard lock(mutex_);
    return heads_;
  }

  static void Send(int fd, const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        return;
      }
      sent += static_cast<std::size_t>(n);
    }
  }

 private:
  void Serve() {
    std::size_t next = 0;
    while (next < steps_.size()) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) {
        return;
      }
      bool keep = true;
      while (keep && next < steps_.size()) {
        std::string head;
        char c;
        while (!head.ends_with("\r\n\r\n") && ::recv(fd, &c, 1, 0) == 1) {
          head += c;
        }
        if (!head.ends_with("\r\n\r\n")) {
          break;  // the client closed the connection
        }
        {
          std::lock_guard lock(mutex_);
          heads_.push_back(head);
        }
        keep = steps_[next++](fd, head);
      }
      ::close(fd);
    }
  }

  std::vector<Step> steps_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> heads_;
};

ScriptedServer::Step Respond(std::string status, std::string headers, std::string body,
                             bool keep_alive = false, std::size_t cut_after = std::string::npos) {
  return [=](int fd, const std::string&) {
    std::string response =
        "HTTP/1.1 " + status + "\r\n" + headers + "Content-Length: " + std::to_string(body.size()) +
        "\r\n" + (keep_alive ? "" : "Connection: close\r\n") + "\r\n" + body.substr(0, cut_after);
    ScriptedServer::Send(fd, response);
    return keep_alive && cut_after == std::string::npos;
  };
}

const std::string kSlowDown =
    "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";

ClientOptions FastRetries(int attempts) {
  ClientOptions options;
  options.max_attempts = attempts;
  options.backoff_base = std::chrono::milliseconds(1);
  options.backoff_max = std::chrono::milliseconds(5);
  return options;
}

std::string Lowered(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

TEST(S3ClientFaultTest, RetriesSlowDownThenSucceeds) {
  ScriptedServer server({Respond("503 Slow Down", "", kSlowDown),
                         Respond("500 Internal Server Error", "", ""),
                         Respond("200 OK", "ETag: \"e\"\r\n", "hello")});
  ClientOnContext on(FastRetries(3), server.port());
  auto got = on.Do<Got>([](S3Client& c) { return GetAll(c, "k", {}); });
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->body, "hello");
  EXPECT_EQ(got->info.etag, "\"e\"");
  EXPECT_EQ(server.heads().size(), 3u);
}

TEST(S3ClientFaultTest, GivesUpAfterMaxAttemptsAndNeverRetriesA4xx) {
  {
    ScriptedServer server({Respond("503 Slow Down", "", kSlowDown),
                           Respond("503 Slow Down", "", kSlowDown), Respond("200 OK", "", "late")});
    ClientOnContext on(FastRetries(2), server.port());
    auto got = on.Do<Got>([](S3Client& c) { return GetAll(c, "k", {}); });
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(got.error().retryable);
    EXPECT_NE(got.error().message.find("SlowDown"), std::string::npos);
    EXPECT_EQ(server.heads().size(), 2u);
  }
  ScriptedServer server({Respond("403 Forbidden", "",
                                 "<Error><Code>AccessDenied</Code><Message>no</Message></Error>"),
                         Respond("200 OK", "", "never")});
  ClientOnContext on(FastRetries(5), server.port());
  auto put = on.Do<PutResult>([](S3Client& c) -> asio::awaitable<Result<PutResult>> {
    const std::string body = "data";
    co_return co_await c.PutObject(
        "bkt", "k", body.size(),
        [&body](std::uint64_t o, std::span<char> b) { return FromString(body, o, b); });
  });
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kAccessDenied);
  EXPECT_EQ(server.heads().size(), 1u);
}

TEST(S3ClientFaultTest, ACutBodyResumesWithARangePinnedToTheETag) {
  ScriptedServer server({Respond("200 OK", "ETag: \"e1\"\r\n", "0123456789", false, 4),
                         [](int fd, const std::string& head) {
                           const std::string lower = Lowered(head);
                           if (lower.find("range: bytes=4-9\r\n") == std::string::npos ||
                               lower.find("if-match: \"e1\"\r\n") == std::string::npos) {
                             return Respond("400 Bad Request", "",
                                            "<Error><Code>Unexpected</Code></Error>")(fd, head);
                           }
                           return Respond("206 Partial Content",
                                          "ETag: \"e1\"\r\nContent-Range: bytes 4-9/10\r\n",
                                          "456789")(fd, head);
                         }});
  ClientOnContext on(FastRetries(3), server.port());
  auto got = on.Do<Got>([](S3Client& c) { return GetAll(c, "k", {}); });
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->body, "0123456789");
  EXPECT_EQ(got->info.size, 10u);
  EXPECT_EQ(got->info.etag, "\"e1\"");
  EXPECT_EQ(server.heads().size(), 2u);
}

TEST(S3ClientFaultTest, AResumeAnsweredWholeIsRefusedNotRepeated) {
  ScriptedServer server({Respond("200 OK", "ETag: \"e1\"\r\n", "0123456789", false, 4),
                         Respond("200 OK", "ETag: \"e1\"\r\n", "0123456789")});
  ClientOnContext on(FastRetries(2), server.port());
  std::string seen;
  auto got = on.Do<ObjectInfo>([&seen](S3Client& c) {
    return c.GetObject("bkt", "k", {},
                       [&seen](std::string_view data) -> asio::awaitable<Result<void>> {
                         seen.append(data);
                         co_return Ok();
                       });
  });
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(seen, "0123");  // never a byte twice
}

TEST(S3ClientFaultTest, AKeptAliveConnectionClosedMeanwhileIsNoFailure) {
  // The first answer keeps the connection alive, then the server closes it (as an idle
  // timeout upstream would). The second request finds it dead and must go on a new
  // connection without spending its only attempt.
  ScriptedServer server({[](int fd, const std::string& head) {
                           Respond("200 OK", "ETag: \"a\"\r\n", "a", true)(fd, head);
                           return false;
                         },
                         Respond("200 OK", "ETag: \"b\"\r\n", "b")});
  ClientOnContext on(FastRetries(1), server.port());
  auto both = on.Do<std::string>([](S3Client& c) -> asio::awaitable<Result<std::string>> {
    const GetRequest plain;
    auto first = co_await GetAll(c, "k", plain);
    if (!first.ok()) {
      co_return std::move(first).error();
    }
    // Let the close arrive before the connection is reused.
    asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
    co_await timer.async_wait(asio::use_awaitable);
    auto second = co_await GetAll(c, "k", plain);
    if (!second.ok()) {
      co_return std::move(second).error();
    }
    co_return first->body + second->body;
  });
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(*both, "ab");
}

TEST(S3ClientFaultTest, NobodyListeningIsUnavailableAndRetryable) {
  const int port = FreePort();
  ClientOnContext on(FastRetries(2), port);
  auto got = on.Do<Got>([](S3Client& c) { return GetAll(c, "k", {}); });
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(got.error().retryable);
}

}  // namespace
}  // namespace strata::storage::upstream
