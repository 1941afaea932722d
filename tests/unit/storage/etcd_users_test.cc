// EtcdUsers (storage/cluster/etcd_users.h) against a real etcd: an access key is taken
// once cluster-wide; a user made or removed through one gateway reaches the others' mirrors
// through the watch; a start makes the local users equal to etcd's (a user removed while
// the gateway was away is removed here too); bad values are refused, never fatal.
#include "storage/cluster/etcd_users.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "metadata/codec.h"
#include "metadata/index.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/etcd_test_server.h"
#include "tests/unit/storage/test_dir.h"

namespace strata::storage::cluster {
namespace {

using metadata::UserRecord;
using std::chrono::milliseconds;
using testing::EtcdServer;
using testing::Eventually;
using testing::IoThread;
using testing::TempDir;

constexpr milliseconds kWatchWait{5'000};

struct Gateway {
  TempDir dir;
  std::unique_ptr<metadata::Index> index;
  std::unique_ptr<EtcdUsers> users;

  bool Has(const std::string& access_key) { return index->GetUser(access_key).ok(); }
};

UserRecord User(const std::string& access_key, const std::string& secret = "s3cr3t-key-0123") {
  return UserRecord{access_key, secret, false, 1'700'000'000'000};
}

class EtcdUsersTest : public ::testing::Test {
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
    cluster_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    for (auto& g : gateways_) {
      Stop(*g);
    }
    gateways_.clear();
  }

  Gateway& Open() {
    auto g = std::make_unique<Gateway>();
    auto index = metadata::Index::Open((g->dir.path() / "index").string(), {.sync = false});
    EXPECT_TRUE(index.ok()) << index.error().message;
    g->index = std::move(index).value();
    gateways_.push_back(std::move(g));
    return *gateways_.back();
  }

  Result<void> Start(Gateway& g) {
    auto client = EtcdClient::Make(
        io_.executor(), {server_->url()},
        EtcdOptions{.connect_timeout = milliseconds(500), .request_timeout = milliseconds(1'000)});
    EXPECT_TRUE(client.ok());
    g.users =
        std::make_unique<EtcdUsers>(io_.context(), cluster_, std::move(client).value(), *g.index);
    return io_.Run(g.users->Start());
  }

  void Stop(Gateway& g) {
    if (g.users) {
      (void)io_.Run(g.users->Stop());
      g.users.reset();
    }
  }

  Gateway& Started() {
    Gateway& g = Open();
    auto started = Start(g);
    EXPECT_TRUE(started.ok()) << started.error().message;
    return g;
  }

  void PutRaw(const std::string& key, const std::string& value) {
    auto client = *EtcdClient::Make(io_.executor(), {server_->url()}, EtcdOptions{});
    auto put = io_.Run(client->Put(key, value, 0));
    ASSERT_TRUE(put.ok()) << put.error().message;
  }

  std::string Key(const std::string& access_key) {
    return EtcdUsers::UsersPrefix(cluster_) + access_key;
  }

  static EtcdServer* server_;
  IoThread io_;
  std::string cluster_;
  std::vector<std::unique_ptr<Gateway>> gateways_;
};

EtcdServer* EtcdUsersTest::server_ = nullptr;

TEST_F(EtcdUsersTest, AnAccessKeyIsTakenOnceAndReachesEveryMirror) {
  Gateway& a = Started();
  Gateway& b = Started();
  auto created = a.users->Create(User("ALICEKEY"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(*created);
  EXPECT_TRUE(a.Has("ALICEKEY")) << "mirrored before Create returned";
  ASSERT_TRUE(Eventually([&] { return b.Has("ALICEKEY"); }, kWatchWait));
  EXPECT_EQ(b.index->GetUser("ALICEKEY")->secret_key, "s3cr3t-key-0123");

  auto again = b.users->Create(User("ALICEKEY", "another-secret-999"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(*again) << "taken already";
  EXPECT_EQ(a.index->GetUser("ALICEKEY")->secret_key, "s3cr3t-key-0123") << "left as it was";

  // Two creations of one new key at once: exactly one wins.
  Result<bool> ra = false;
  Result<bool> rb = false;
  std::thread ta([&] { ra = a.users->Create(User("RACEKEY", "secret-from-a-000")); });
  std::thread tb([&] { rb = b.users->Create(User("RACEKEY", "secret-from-b-000")); });
  ta.join();
  tb.join();
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_NE(*ra, *rb);
}

TEST_F(EtcdUsersTest, ARemovalReachesEveryMirror) {
  Gateway& a = Started();
  Gateway& b = Started();
  ASSERT_TRUE(a.users->Create(User("GONEKEY")).ok());
  ASSERT_TRUE(Eventually([&] { return b.Has("GONEKEY"); }, kWatchWait));
  ASSERT_TRUE(b.users->Remove("GONEKEY").ok());
  EXPECT_FALSE(b.Has("GONEKEY")) << "removed here before Remove returned";
  ASSERT_TRUE(Eventually([&] { return !a.Has("GONEKEY"); }, kWatchWait));
  auto missing = a.users->Remove("GONEKEY");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

// A key's record is replaced (its admin flag, its user) where it exists, never made again
// once removed.
TEST_F(EtcdUsersTest, AReplacementReachesEveryMirrorButMakesNoRemovedKeyAgain) {
  Gateway& a = Started();
  Gateway& b = Started();
  ASSERT_TRUE(a.users->Create(User("ROTATEKEY")).ok());
  ASSERT_TRUE(Eventually([&] { return b.Has("ROTATEKEY"); }, kWatchWait));
  auto changed = User("ROTATEKEY");
  changed.admin = true;
  changed.user = "rotating-user";
  auto replaced = b.users->Replace(changed);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_TRUE(*replaced);
  EXPECT_TRUE(b.index->GetUser("ROTATEKEY")->admin) << "mirrored before Replace returned";
  ASSERT_TRUE(Eventually([&] { return a.index->GetUser("ROTATEKEY")->admin; }, kWatchWait));
  EXPECT_EQ(a.index->GetUser("ROTATEKEY")->user, "rotating-user");
  ASSERT_TRUE(a.users->Remove("ROTATEKEY").ok());
  auto gone = b.users->Replace(changed);
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_FALSE(*gone);
  EXPECT_FALSE(a.Has("ROTATEKEY"));
}

TEST_F(EtcdUsersTest, StartMakesTheLocalUsersEqualToTheCluster) {
  Gateway& a = Started();
  Gateway& b = Started();
  ASSERT_TRUE(a.users->Create(User("STAYKEY")).ok());
  ASSERT_TRUE(a.users->Create(User("LATERGONE")).ok());
  ASSERT_TRUE(Eventually([&] { return b.Has("STAYKEY") && b.Has("LATERGONE"); }, kWatchWait));
  // b goes away; meanwhile a user is removed and another made; b had one of its own.
  Stop(b);
  ASSERT_TRUE(a.users->Remove("LATERGONE").ok());
  ASSERT_TRUE(a.users->Create(User("NEWKEY")).ok());
  ASSERT_TRUE(b.index->PutUser(User("LOCALONLY")).ok());
  ASSERT_TRUE(Start(b).ok());
  EXPECT_TRUE(b.Has("STAYKEY"));
  EXPECT_TRUE(b.Has("NEWKEY"));
  EXPECT_FALSE(b.Has("LATERGONE")) << "a removed key must not sign anything here";
  EXPECT_FALSE(b.Has("LOCALONLY")) << "only the cluster's users";
}

TEST_F(EtcdUsersTest, MalformedValuesAreRefusedNeverFatal) {
  Gateway& a = Started();
  PutRaw(Key("JUNKKEY"), "not a user record");
  PutRaw(Key("OTHERNAME"), metadata::EncodeUser(User("NOTOTHERNAME")));
  ASSERT_TRUE(a.users->Create(User("AFTERJUNK")).ok());
  Gateway& b = Started();  // its reconcile reads the junk too
  ASSERT_TRUE(Eventually([&] { return b.Has("AFTERJUNK"); }, kWatchWait));
  for (Gateway* g : {&a, &b}) {
    EXPECT_FALSE(g->Has("JUNKKEY"));
    EXPECT_FALSE(g->Has("OTHERNAME"));
    EXPECT_FALSE(g->Has("NOTOTHERNAME"));
  }
}

TEST_F(EtcdUsersTest, BlockingCallsOnTheClustersThreadAreRefused) {
  Gateway& a = Started();
  auto answer = io_.Run([&]() -> boost::asio::awaitable<Result<bool>> {
    co_return a.users->Create(User("INSIDEKEY"));
  }());
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kInternal);
}

}  // namespace
}  // namespace strata::storage::cluster
