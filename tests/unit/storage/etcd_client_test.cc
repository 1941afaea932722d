#include "storage/cluster/etcd_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/etcd_test_server.h"

namespace strata::storage::cluster {
namespace {

using testing::CutProxy;
using testing::EtcdServer;
using testing::IoThread;
using testing::JunkServer;

// One etcd for the suite (starting one takes most of a second); each test writes under a
// prefix of its own.
class EtcdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new EtcdServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!server_->ok()) {
      STRATA_SKIP_OR_FAIL_IN_CI("etcd is unavailable: " << server_->why());
    }
    prefix_ =
        std::string("/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
  }

  std::shared_ptr<EtcdClient> Client(std::vector<std::string> endpoints = {},
                                     EtcdOptions options = {}) {
    if (endpoints.empty()) {
      endpoints.push_back(server_->url());
    }
    auto client = EtcdClient::Make(io_.executor(), endpoints, options);
    EXPECT_TRUE(client.ok()) << client.error().message;
    return client.ok() ? *client : nullptr;
  }

  static EtcdServer* server_;
  IoThread io_;
  std::string prefix_;
};

EtcdServer* EtcdClientTest::server_ = nullptr;

TEST(EtcdEndpointTest, Parse) {
  auto ep = EtcdEndpoint::Parse("http://127.0.0.1:2379");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->port, "2379");
  auto v6 = EtcdEndpoint::Parse("http://[::1]:2379/");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->HostPort(), "[::1]:2379");
  for (const char* bad : {"https://h:1", "h:1", "http://h", "http://h:0", "http://h:99999",
                          "http://:1", "http://h/x:1", "http://[::1]2379"}) {
    EXPECT_FALSE(EtcdEndpoint::Parse(bad).ok()) << bad;
  }
}

TEST(EtcdEndpointTest, PrefixEnd) {
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixEnd(std::string("\xff\xff", 2)), std::string(1, '\0'));
  EXPECT_EQ(PrefixEnd(""), std::string(1, '\0'));
}

TEST_F(EtcdClientTest, PutRangeDeleteRoundTrip) {
  auto client = Client();
  // Keys and values are bytes: NUL, 0xff, bytes that are not UTF-8.
  const std::string binary_key = prefix_ + std::string("k\0\xff\xfe", 4);
  const std::string binary_value("v\0\x80\xc3", 4);
  auto put = io_.Run(client->Put(binary_key, binary_value, 0));
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_GT(put->revision, 0);
  ASSERT_TRUE(io_.Run(client->Put(prefix_ + "a", "1", 0)).ok());
  ASSERT_TRUE(io_.Run(client->Put(prefix_ + "b", "", 0)).ok());

  RangeRequest one;
  one.key = binary_key;
  auto got = io_.Run(client->Range(one));
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].key, binary_key);
  EXPECT_EQ(got->kvs[0].value, binary_value);
  EXPECT_EQ(got->kvs[0].create_revision, put->revision);
  EXPECT_EQ(got->kvs[0].mod_revision, put->revision);
  EXPECT_EQ(got->kvs[0].version, 1);
  EXPECT_GE(got->revision, put->revision);

  RangeRequest all;
  all.key = prefix_;
  all.range_end = PrefixEnd(prefix_);
  auto listed = io_.Run(client->Range(all));
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->kvs.size(), 3u);
  EXPECT_EQ(listed->count, 3);
  EXPECT_EQ(listed->kvs[0].key, prefix_ + "a");
  EXPECT_EQ(listed->kvs[1].key, prefix_ + "b");
  EXPECT_EQ(listed->kvs[1].value, "");
  EXPECT_EQ(listed->kvs[2].key, binary_key);

  all.limit = 2;
  auto limited = io_.Run(client->Range(all));
  ASSERT_TRUE(limited.ok()) << limited.error().message;
  EXPECT_EQ(limited->kvs.size(), 2u);
  EXPECT_TRUE(limited->more);
  EXPECT_EQ(limited->count, 3);

  RangeRequest missing;
  missing.key = prefix_ + "nope";
  auto none = io_.Run(client->Range(missing));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->kvs.empty());

  auto deleted = io_.Run(client->DeleteRange(binary_key, ""));
  ASSERT_TRUE(deleted.ok()) << deleted.error().message;
  EXPECT_EQ(deleted->deleted, 1);
  auto rest = io_.Run(client->DeleteRange(prefix_, PrefixEnd(prefix_)));
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->deleted, 2);
  all.limit = 0;
  auto empty = io_.Run(client->Range(all));
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_TRUE(empty->kvs.empty());
}

TEST_F(EtcdClientTest, TxnTakesOneBranch) {
  auto client = Client();
  const std::string key = prefix_ + std::string("name\0", 5);
  auto create = [&](std::string value) {
    TxnRequest txn;
    txn.compare.push_back(Compare{key, Compare::Target::kCreate, Compare::Op::kEqual, 0, {}});
    txn.success.push_back(TxnOp::Put(key, std::move(value)));
    txn.failure.push_back(TxnOp::Range(key));
    return io_.Run(client->Txn(std::move(txn)));
  };
  auto first = create("one");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->succeeded);
  EXPECT_TRUE(first->ranges.empty());
  auto second = create("two");
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->succeeded);
  ASSERT_EQ(second->ranges.size(), 1u);
  ASSERT_EQ(second->ranges[0].kvs.size(), 1u);
  EXPECT_EQ(second->ranges[0].kvs[0].value, "one");

  // A compare on the value, and a delete in the branch.
  TxnRequest by_value;
  by_value.compare.push_back(
      Compare{key, Compare::Target::kValue, Compare::Op::kEqual, 0, std::string("one")});
  by_value.success.push_back(TxnOp::Delete(key));
  auto removed = io_.Run(client->Txn(std::move(by_value)));
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_TRUE(removed->succeeded);
  RangeRequest read;
  read.key = key;
  auto gone = io_.Run(client->Range(read));
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->kvs.empty());
}

TEST_F(EtcdClientTest, LeaseGrantKeepAliveRevoke) {
  auto client = Client();
  auto lease = io_.Run(client->LeaseGrant(30));
  ASSERT_TRUE(lease.ok()) << lease.error().message;
  EXPECT_NE(lease->id, 0);
  EXPECT_EQ(lease->ttl_seconds, 30);
  const std::string key = prefix_ + "leased";
  auto put = io_.Run(client->Put(key, "x", lease->id));
  ASSERT_TRUE(put.ok()) << put.error().message;
  RangeRequest read;
  read.key = key;
  auto held = io_.Run(client->Range(read));
  ASSERT_TRUE(held.ok());
  ASSERT_EQ(held->kvs.size(), 1u);
  EXPECT_EQ(held->kvs[0].lease, lease->id);

  auto renewed = io_.Run(client->LeaseKeepAlive(lease->id));
  ASSERT_TRUE(renewed.ok()) << renewed.error().message;
  EXPECT_EQ(*renewed, 30);

  ASSERT_TRUE(io_.Run(client->LeaseRevoke(lease->id)).ok());
  auto gone = io_.Run(client->Range(read));
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->kvs.empty()) << "a revoked lease takes its keys";

  auto late = io_.Run(client->LeaseKeepAlive(lease->id));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kNotFound);
  auto again = io_.Run(client->LeaseRevoke(lease->id));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
  // A put under a lease etcd does not have is etcd's error, mapped.
  auto orphan = io_.Run(client->Put(key, "x", lease->id));
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error().code, ErrorCode::kNotFound) << orphan.error().message;
}

TEST_F(EtcdClientTest, EtcdErrorsMap) {
  auto client = Client();
  RangeRequest future;
  future.key = prefix_;
  future.revision = 1'000'000'000;
  auto r = io_.Run(client->Range(future));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPreconditionFailed) << r.error().message;
}

TEST_F(EtcdClientTest, WatchSeesPutsAndDeletesThenCloses) {
  auto client = Client();
  auto before = io_.Run(client->Put(prefix_ + "w/0", "zero", 0));
  ASSERT_TRUE(before.ok());
  // From the revision of the put before the watch: it comes as the first event.
  auto opened = io_.Run(client->Watch(prefix_ + "w/", PrefixEnd(prefix_ + "w/"), before->revision));
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  std::unique_ptr<EtcdWatch> watch = std::move(opened).value();
  ASSERT_TRUE(io_.Run(client->Put(prefix_ + "w/1", std::string("one\0", 4), 0)).ok());
  ASSERT_TRUE(io_.Run(client->DeleteRange(prefix_ + "w/0", "")).ok());
  ASSERT_TRUE(io_.Run(client->Put(prefix_ + "other", "not watched", 0)).ok());

  std::vector<WatchEvent> events;
  while (events.size() < 3) {
    auto batch = io_.Run(watch->Next());
    ASSERT_TRUE(batch.ok()) << batch.error().message;
    events.insert(events.end(), batch->events.begin(), batch->events.end());
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kPut);
  EXPECT_EQ(events[0].kv.key, prefix_ + "w/0");
  EXPECT_EQ(events[0].kv.mod_revision, before->revision);
  EXPECT_EQ(events[1].type, WatchEvent::Type::kPut);
  EXPECT_EQ(events[1].kv.value, std::string("one\0", 4));
  EXPECT_EQ(events[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(events[2].kv.key, prefix_ + "w/0");
  EXPECT_GT(events[2].kv.mod_revision, events[1].kv.mod_revision);

  // Close ends a Next that waits: it runs on the client's thread while Next is pending.
  std::promise<Result<WatchBatch>> pending;
  boost::asio::co_spawn(
      io_.context(),
      [&]() -> boost::asio::awaitable<void> { pending.set_value(co_await watch->Next()); },
      [](std::exception_ptr) {});
  boost::asio::post(io_.context(), [&] { watch->Close(); });
  auto future = pending.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto ended = future.get();
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().code, ErrorCode::kUnavailable);
  io_.Run([&]() -> boost::asio::awaitable<int> {
    watch.reset();  // on the client's thread
    co_return 0;
  }());
}

TEST_F(EtcdClientTest, NoEndpointAnswers) {
  const int dead = testing::FreePort();
  EtcdOptions options;
  options.connect_timeout = std::chrono::milliseconds(500);
  auto client = Client({"http://127.0.0.1:" + std::to_string(dead)}, options);
  RangeRequest read;
  read.key = "k";
  auto r = io_.Run(client->Range(read));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(r.error().retryable);
  auto watch = io_.Run(client->Watch("k", "", 0));
  ASSERT_FALSE(watch.ok());
  EXPECT_EQ(watch.error().code, ErrorCode::kUnavailable);
}

TEST_F(EtcdClientTest, ConnectionFailureTriesTheNextEndpoint) {
  const int dead = testing::FreePort();
  auto client = Client({"http://127.0.0.1:" + std::to_string(dead), server_->url()});
  auto put = io_.Run(client->Put(prefix_ + "k", "v", 0));
  ASSERT_TRUE(put.ok()) << put.error().message;
  // And back: a proxy that dies sends the next call to the first endpoint again.
  auto proxy = std::make_unique<CutProxy>(server_->port());
  auto both = Client({proxy->url(), server_->url()});
  ASSERT_TRUE(io_.Run(both->Put(prefix_ + "k", "v2", 0)).ok());
  proxy.reset();
  RangeRequest read;
  read.key = prefix_ + "k";
  auto got = io_.Run(both->Range(read));
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].value, "v2");
}

TEST_F(EtcdClientTest, KeptAliveConnectionIsReused) {
  // A proxy counts connections: ten calls in a row use one.
  auto proxy = std::make_unique<CutProxy>(server_->port());
  auto client = Client({proxy->url()});
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(io_.Run(client->Put(prefix_ + "k", std::to_string(i), 0)).ok());
  }
  EXPECT_EQ(proxy->accepted(), 1);
  // Cut: the pooled connection is dead; the next call finds that out before sending and
  // fails only because the proxy refuses new connections too.
  proxy->Cut();
  RangeRequest read;
  read.key = prefix_ + "k";
  auto r = io_.Run(client->Range(read));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << r.error().message;
}

// Answers that are not etcd's: each is an Error, never a crash.
TEST_F(EtcdClientTest, GarbageAnswersAreErrors) {
  const auto http = [](std::string status, std::string body) {
    return "HTTP/1.1 " + status + "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  };
  struct Case {
    std::string answer;
    ErrorCode code;
  };
  const Case cases[] = {
      {"not http at all\r\n\r\n", ErrorCode::kCorruption},
      {http("200 OK", "{\"kvs\":["), ErrorCode::kCorruption},
      {http("200 OK", "{\"kvs\":5}"), ErrorCode::kCorruption},
      {http("200 OK", "{\"header\":{\"revision\":\"3\"},\"kvs\":[{\"key\":\"!!notb64\"}]}"),
       ErrorCode::kCorruption},
      {http("200 OK", "{\"header\":{\"revision\":\"12x\"},\"kvs\":[]}"), ErrorCode::kCorruption},
      {http("200 OK", "{\"header\":{\"revision\":[]}}"), ErrorCode::kCorruption},
      {http("200 OK", "{}"), ErrorCode::kCorruption},
      {http("200 OK", "[]"), ErrorCode::kCorruption},
      {http("200 OK", std::string("\xff\xfe\x00\x01\x02", 5)), ErrorCode::kCorruption},
      {http("200 OK", "{\"error\":7}"), ErrorCode::kCorruption},
      {http("503 Service Unavailable", "busy"), ErrorCode::kUnavailable},
      {http("404 Not Found", "nope"), ErrorCode::kCorruption},
      {http("400 Bad Request", "{\"error\":\"bad\",\"message\":\"bad\",\"code\":3}"),
       ErrorCode::kInvalidArgument},
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"kvs\":[]}", ErrorCode::kUnavailable},
      {http("200 OK", std::string(5u << 20, 'x')), ErrorCode::kEntityTooLarge},
      {"HTTP/1.1 200 OK\r\n" + std::string(100'000, 'h') + "\r\n\r\n", ErrorCode::kEntityTooLarge},
      {"", ErrorCode::kUnavailable},
  };
  for (const Case& c : cases) {
    JunkServer junk(c.answer);
    auto client = Client({junk.url()});
    RangeRequest read;
    read.key = "k";
    auto r = io_.Run(client->Range(read));
    ASSERT_FALSE(r.ok()) << c.answer.substr(0, 80);
    EXPECT_EQ(r.error().code, c.code) << c.answer.substr(0, 80) << ": " << r.error().message;
    // Every other call reads the same answer its own way: an Error (or, for an answer that
    // happens to hold what it needs, a value), never a crash.
    EXPECT_FALSE(io_.Run(client->LeaseGrant(5)).ok()) << c.answer.substr(0, 80);
    EXPECT_FALSE(io_.Run(client->LeaseKeepAlive(1)).ok()) << c.answer.substr(0, 80);
    (void)io_.Run(client->Txn(TxnRequest{}));
    (void)io_.Run(client->Put("k", "v", 0));
    (void)io_.Run(client->DeleteRange("k", ""));
    (void)io_.Run(client->LeaseRevoke(1));
  }
}

TEST_F(EtcdClientTest, GarbageWatchStreamsAreErrors) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n";
  const std::string created = "{\"result\":{\"header\":{\"revision\":\"5\"},\"created\":true}}\n";
  {
    JunkServer junk(head + created + "this is not json\n");
    auto client = Client({junk.url()});
    auto watch = io_.Run(client->Watch("k", "", 0));
    ASSERT_TRUE(watch.ok()) << watch.error().message;
    auto next = io_.Run((*watch)->Next());
    ASSERT_FALSE(next.ok());
    EXPECT_EQ(next.error().code, ErrorCode::kCorruption) << next.error().message;
    io_.Run([&]() -> boost::asio::awaitable<int> {
      watch = Error(ErrorCode::kInternal, "dropped");
      co_return 0;
    }());
  }
  {
    // A message without end, over the bound.
    JunkServer junk(head + created + "{\"result\":{\"events\":[" + std::string(8192, ' '));
    EtcdOptions options;
    options.max_response_bytes = 4096;
    auto client = Client({junk.url()}, options);
    auto watch = io_.Run(client->Watch("k", "", 0));
    ASSERT_TRUE(watch.ok()) << watch.error().message;
    auto next = io_.Run((*watch)->Next());
    ASSERT_FALSE(next.ok());
    EXPECT_EQ(next.error().code, ErrorCode::kEntityTooLarge) << next.error().message;
    io_.Run([&]() -> boost::asio::awaitable<int> {
      watch = Error(ErrorCode::kInternal, "dropped");
      co_return 0;
    }());
  }
  {
    // Not confirmed: the first message is no "created".
    JunkServer junk(head + "{\"result\":{\"events\":[]}}\n");
    auto client = Client({junk.url()});
    auto watch = io_.Run(client->Watch("k", "", 0));
    ASSERT_FALSE(watch.ok());
    EXPECT_EQ(watch.error().code, ErrorCode::kCorruption) << watch.error().message;
  }
  {
    // A stream error etcd reports in the stream.
    JunkServer junk(head +
                    "{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"no leader\"}}\n");
    auto client = Client({junk.url()});
    auto watch = io_.Run(client->Watch("k", "", 0));
    ASSERT_FALSE(watch.ok());
    EXPECT_EQ(watch.error().code, ErrorCode::kUnavailable) << watch.error().message;
  }
}

}  // namespace
}  // namespace strata::storage::cluster
