#include "storage/cluster/etcd_membership.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "storage/membership.h"
#include "storage/ownership.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/etcd_test_server.h"

namespace strata::storage::cluster {
namespace {

using std::chrono::milliseconds;
using testing::CutProxy;
using testing::EtcdServer;
using testing::Eventually;
using testing::IoThread;

// The views a membership publishes, for waits on "the view now shows ...".
class Views {
 public:
  explicit Views(Membership& m) : m_(m) {
    id_ = m.Subscribe([this](std::shared_ptr<const MembershipView> view) {
      std::lock_guard lock(mu_);
      latest_ = std::move(view);
      cv_.notify_all();
    });
  }
  ~Views() { m_.Unsubscribe(id_); }

  // Waits (real time, bounded) until the current view satisfies `done`.
  bool WaitFor(const std::function<bool(const MembershipView&)>& done, milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      auto view = latest_ ? latest_ : m_.View();
      return done(*view);
    });
  }

 private:
  Membership& m_;
  std::uint64_t id_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const MembershipView> latest_;
};

std::vector<std::string> Nodes(const MembershipView& view) {
  std::vector<std::string> nodes;
  for (const auto& m : view.members) {
    nodes.push_back(m.node);
  }
  return nodes;
}

class EtcdMembershipTest : public ::testing::Test {
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
    // A cluster name of its own per test: one etcd serves them all.
    cluster_name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    // Stop what a test left running, on the io thread, before the io thread goes.
    for (auto& m : members_) {
      (void)io_.Run(m->Stop());
    }
    members_.clear();
  }

  ClusterConfig Config(std::string node, std::string etcd_url = {},
                       milliseconds ttl = milliseconds(5'000)) {
    ClusterConfig c;
    c.node = std::move(node);
    c.zone = "zone-" + c.node;
    c.peer_listen = "127.0.0.1:9" + std::to_string(100 + members_.size());
    c.etcd = {etcd_url.empty() ? server_->url() : etcd_url};
    c.secret = "0123456789abcdef";
    c.lease_ttl = ttl;
    c.name = cluster_name_;
    return c;
  }

  // A membership the fixture stops at the end.
  Membership& Make(const ClusterConfig& config, const Clock& clock = Clock::System()) {
    auto m = MakeEtcdMembership(io_.executor(), config, clock, 1000 + members_.size());
    EXPECT_TRUE(m.ok()) << m.error().message;
    members_.push_back(std::move(m).value());
    return *members_.back();
  }

  std::shared_ptr<EtcdClient> Client() {
    return *EtcdClient::Make(io_.executor(), {server_->url()}, EtcdOptions{});
  }

  static EtcdServer* server_;
  IoThread io_;
  // Outlives the members, which TearDown stops.
  FakeClock fake_clock_{WallTime(std::chrono::hours(24 * 365 * 50))};
  std::string cluster_name_;
  std::vector<std::unique_ptr<Membership>> members_;
};

EtcdServer* EtcdMembershipTest::server_ = nullptr;

TEST(EtcdMembershipCodecTest, MemberRoundTripAndJunk) {
  MemberInfo m;
  m.node = "gw-a";
  m.zone = "rack-1";
  m.peer = "127.0.0.1:9100";
  m.capacity_bytes = 200ull << 30;
  auto back = EtcdMembership::DecodeMember("gw-a", EtcdMembership::EncodeMember(m));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node, "gw-a");
  EXPECT_EQ(back->zone, "rack-1");
  EXPECT_EQ(back->peer, "127.0.0.1:9100");
  EXPECT_EQ(back->capacity_bytes, 200ull << 30);
  EXPECT_TRUE(back->ready);
  EXPECT_FALSE(back->draining);
  m.ready = false;
  m.draining = true;
  back = EtcdMembership::DecodeMember("gw-a", EtcdMembership::EncodeMember(m));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->ready);
  EXPECT_TRUE(back->draining);
  // An older registration, without the flags: ready, not draining.
  back = EtcdMembership::DecodeMember("gw-a", "{\"zone\":\"z\",\"peer\":\"p\"}");
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->ready);
  EXPECT_FALSE(back->draining);
  EXPECT_FALSE(EtcdMembership::DecodeMember("gw-b", EtcdMembership::EncodeMember(m)))
      << "a value naming another node than its key";
  for (const char* junk : {"", "{", "[]", "5", "{\"zone\":1,\"peer\":\"p\"}", "{\"zone\":\"z\"}",
                           "{\"zone\":\"z\",\"peer\":\"p\",\"capacity_bytes\":-1}",
                           "{\"zone\":\"z\",\"peer\":\"p\",\"capacity_bytes\":\"big\"}",
                           "{\"zone\":\"z\",\"peer\":\"p\",\"ready\":1}",
                           "{\"zone\":\"z\",\"peer\":\"p\",\"draining\":\"yes\"}", "\xff\xfe"}) {
    EXPECT_FALSE(EtcdMembership::DecodeMember("n", junk)) << junk;
  }
  EXPECT_EQ(EtcdMembership::MembersPrefix("strata"), "/strata/members/");
  EXPECT_EQ(EtcdMembership::NameKey("strata", "b"), "/strata/names/b");
}

TEST_F(EtcdMembershipTest, TwoMembersSeeEachOtherAndTheSameEpoch) {
  Membership& a = Make(Config("a"));
  Views a_views(a);
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  EXPECT_EQ(Nodes(*a.View()), std::vector<std::string>{"a"});
  EXPECT_GT(a.View()->epoch, 0);
  EXPECT_TRUE(a.MayAcceptWrites());

  Membership& b = Make(Config("b"));
  auto started = io_.Run(b.Start());
  ASSERT_TRUE(started.ok()) << started.error().message;
  // b's first view has both, published before Start returned.
  EXPECT_EQ(Nodes(*b.View()), (std::vector<std::string>{"a", "b"}));
  const std::int64_t epoch = b.View()->epoch;
  ASSERT_TRUE(a_views.WaitFor([](const MembershipView& v) { return v.members.size() == 2; },
                              milliseconds(5'000)));
  EXPECT_EQ(a.View()->epoch, epoch);
  const MemberInfo* seen = a.View()->Find("b");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->zone, "zone-b");
  EXPECT_EQ(seen->peer, "127.0.0.1:9101");
  EXPECT_EQ(seen->capacity_bytes, 1001u);
  // Ownership over either view gives the same owners.
  EXPECT_EQ(Ownership(a.View(), 3).OwnerNames("bucket", "key"),
            Ownership(b.View(), 3).OwnerNames("bucket", "key"));
  // A member joins not ready; what it announces reaches the others.
  EXPECT_FALSE(seen->ready);
  ASSERT_TRUE(io_.Run(b.Announce(true, true)).ok());
  ASSERT_TRUE(a_views.WaitFor(
      [](const MembershipView& v) {
        const MemberInfo* m = v.Find("b");
        return m != nullptr && m->ready && m->draining;
      },
      milliseconds(5'000)));
  EXPECT_GT(a.View()->epoch, epoch);
}

TEST_F(EtcdMembershipTest, AMemberThatStopsLeavesAtOnce) {
  // A TTL far longer than the wait: only the revocation can make b leave in time.
  Membership& a = Make(Config("a", {}, milliseconds(30'000)));
  Membership& b = Make(Config("b", {}, milliseconds(30'000)));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  Views a_views(a);
  ASSERT_TRUE(io_.Run(b.Start()).ok());
  ASSERT_TRUE(a_views.WaitFor([](const MembershipView& v) { return v.members.size() == 2; },
                              milliseconds(5'000)));
  const std::int64_t joined = a.View()->epoch;
  auto stopped = io_.Run(b.Stop());
  ASSERT_TRUE(stopped.ok()) << stopped.error().message;
  EXPECT_FALSE(b.MayAcceptWrites());
  ASSERT_TRUE(a_views.WaitFor(
      [](const MembershipView& v) { return Nodes(v) == std::vector<std::string>{"a"}; },
      milliseconds(3'000)));
  EXPECT_GT(a.View()->epoch, joined);
  // Stop twice is harmless.
  EXPECT_TRUE(io_.Run(b.Stop()).ok());
}

TEST_F(EtcdMembershipTest, AMemberCutOffFromEtcdStopsWritesThenExpires) {
  CutProxy proxy(server_->port());
  Membership& a = Make(Config("a"));
  Membership& b = Make(Config("b", proxy.url(), milliseconds(2'000)));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  Views a_views(a);
  ASSERT_TRUE(io_.Run(b.Start()).ok());
  ASSERT_TRUE(a_views.WaitFor([](const MembershipView& v) { return v.members.size() == 2; },
                              milliseconds(5'000)));
  // Renewals go through.
  ASSERT_TRUE(Eventually([&] { return b.Stats().keepalives >= 1; }, milliseconds(3'000)));
  EXPECT_TRUE(b.MayAcceptWrites());

  // b loses etcd without revoking anything: its renewals fail, its lease runs out.
  const auto cut = std::chrono::steady_clock::now();
  proxy.Cut();
  std::atomic<bool> gone{false};
  std::chrono::steady_clock::time_point fenced_at{};
  std::thread fence_watch([&] {
    // Polls the fence until a saw b leave: when did b stop accepting writes?
    while (!gone) {
      if (!b.MayAcceptWrites() && fenced_at == std::chrono::steady_clock::time_point{}) {
        fenced_at = std::chrono::steady_clock::now();
      }
      std::this_thread::sleep_for(milliseconds(2));
    }
  });
  const bool left = a_views.WaitFor(
      [](const MembershipView& v) { return Nodes(v) == std::vector<std::string>{"a"}; },
      milliseconds(8'000));
  const auto left_at = std::chrono::steady_clock::now();
  gone = true;
  fence_watch.join();
  ASSERT_TRUE(left) << "b's lease did not expire";
  EXPECT_GE(left_at - cut, milliseconds(1'000)) << "b left before its lease could expire";
  ASSERT_NE(fenced_at, std::chrono::steady_clock::time_point{}) << "b never stopped writes";
  EXPECT_LT(fenced_at, left_at) << "b accepted writes after it left";
  // The fence closes at most TTL - TTL/3 after the last renewal sent, before the cut.
  EXPECT_LE(fenced_at - cut, milliseconds(1'600));
  EXPECT_GE(b.Stats().keepalive_failures, 1u);
}

// Fencing on the injected clock: exactly TTL - TTL/3 after the last renewal sent.
TEST_F(EtcdMembershipTest, MayAcceptWritesEndsBeforeTheLeaseCouldExpire) {
  FakeClock& clock = fake_clock_;
  CutProxy proxy(server_->port());
  // etcd's lease runs on real time; 30 s leaves it alive through the test.
  Membership& m = Make(Config("m", proxy.url(), milliseconds(30'000)), clock);
  ASSERT_TRUE(io_.Run(m.Start()).ok());
  const milliseconds interval(10'000);
  EXPECT_TRUE(m.MayAcceptWrites());
  // Granted at t0: writes until t0 + 20 s.
  clock.Advance(interval - milliseconds(1));
  EXPECT_TRUE(m.MayAcceptWrites());
  // The renewal at t0 + 10 s (sent at that time on the clock) moves the fence to t0 + 30 s.
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(Eventually([&] { return m.Stats().keepalives >= 1; }, milliseconds(3'000)));
  clock.Advance(interval + interval / 2);  // t0 + 25 s: past the first fence
  EXPECT_TRUE(m.MayAcceptWrites());
  // The renewal due at t0 + 20 s ran at t0 + 25 s: fence at t0 + 45 s. Now cut etcd off.
  ASSERT_TRUE(Eventually([&] { return m.Stats().keepalives >= 2; }, milliseconds(3'000)));
  proxy.Cut();
  const auto failures = m.Stats().keepalive_failures;
  clock.Advance(interval);  // t0 + 35 s: the renewal fails
  ASSERT_TRUE(
      Eventually([&] { return m.Stats().keepalive_failures > failures; }, milliseconds(5'000)));
  EXPECT_TRUE(m.MayAcceptWrites());
  clock.Advance(interval - milliseconds(1));  // t0 + 45 s - 1 ms
  EXPECT_TRUE(m.MayAcceptWrites());
  clock.Advance(milliseconds(1));  // t0 + 45 s, 15 s before the lease could expire
  EXPECT_FALSE(m.MayAcceptWrites());
}

TEST_F(EtcdMembershipTest, ABrokenWatchResumesWhereItStopped) {
  CutProxy proxy(server_->port());
  Membership& m = Make(Config("m", proxy.url(), milliseconds(6'000)));
  Views m_views(m);
  ASSERT_TRUE(io_.Run(m.Start()).ok());
  // m's connections die, its watch's among them (once it has one: Start's calls share one
  // connection, the watch holds a second); a joins meanwhile.
  ASSERT_TRUE(Eventually([&] { return proxy.accepted() >= 2; }, milliseconds(3'000)));
  proxy.DropConnections();
  Membership& a = Make(Config("a"));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  ASSERT_TRUE(m_views.WaitFor([](const MembershipView& v) { return v.members.size() == 2; },
                              milliseconds(5'000)));
  EXPECT_EQ(m.View()->epoch, a.View()->epoch);
  EXPECT_GE(m.Stats().watch_restarts, 1u);
  // Renewals go on over new connections.
  const auto renewed = m.Stats().keepalives;
  ASSERT_TRUE(Eventually([&] { return m.Stats().keepalives > renewed; }, milliseconds(5'000)));
  EXPECT_TRUE(m.MayAcceptWrites());
}

TEST_F(EtcdMembershipTest, AMemberWhoseLeaseExpiredJoinsAgain) {
  CutProxy proxy(server_->port());
  Membership& a = Make(Config("a"));
  Membership& m = Make(Config("m", proxy.url(), milliseconds(2'000)));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  Views a_views(a);
  ASSERT_TRUE(io_.Run(m.Start()).ok());
  ASSERT_TRUE(io_.Run(m.Announce(true, false)).ok());
  ASSERT_TRUE(a_views.WaitFor(
      [](const MembershipView& v) { return v.members.size() == 2 && v.Find("m")->ready; },
      milliseconds(5'000)));
  proxy.Cut();
  ASSERT_TRUE(a_views.WaitFor([](const MembershipView& v) { return v.members.size() == 1; },
                              milliseconds(8'000)));
  EXPECT_FALSE(m.MayAcceptWrites());
  // etcd is back: m's next renewal finds its lease gone and registers again, not ready:
  // others served its keys meanwhile, so it catches up again before it serves.
  proxy.Restore();
  ASSERT_TRUE(a_views.WaitFor([](const MembershipView& v) { return v.members.size() == 2; },
                              milliseconds(5'000)));
  EXPECT_FALSE(a.View()->Find("m")->ready);
  ASSERT_TRUE(Eventually([&] { return m.MayAcceptWrites(); }, milliseconds(3'000)));
  Views m_views(m);
  ASSERT_TRUE(m_views.WaitFor(
      [&](const MembershipView& v) { return v.members.size() == 2 && v.epoch == a.View()->epoch; },
      milliseconds(5'000)));
}

TEST_F(EtcdMembershipTest, ADuplicateNodeNameIsRefused) {
  Membership& a = Make(Config("same"));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  const std::int64_t epoch = a.View()->epoch;
  ClusterConfig other = Config("same");
  other.peer_listen = "127.0.0.1:9999";
  Membership& twin = Make(other);
  auto refused = io_.Run(twin.Start());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kAlreadyExists) << refused.error().message;
  EXPECT_NE(refused.error().message.find("127.0.0.1:9100"), std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(twin.MayAcceptWrites());
  // The first registration is untouched.
  auto client = Client();
  RangeRequest read;
  read.key = EtcdMembership::MembersPrefix(cluster_name_) + "same";
  auto held = io_.Run(client->Range(read));
  ASSERT_TRUE(held.ok());
  ASSERT_EQ(held->kvs.size(), 1u);
  EXPECT_EQ(held->kvs[0].mod_revision, epoch);
  EXPECT_TRUE(a.MayAcceptWrites());
}

TEST_F(EtcdMembershipTest, ClaimNameHasOneWinner) {
  Membership& a = Make(Config("a"));
  Membership& b = Make(Config("b"));
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  ASSERT_TRUE(io_.Run(b.Start()).ok());
  // Twenty claims of one name in flight at once, from both members.
  constexpr int kClaims = 20;
  std::vector<std::promise<Result<bool>>> results(kClaims);
  for (int i = 0; i < kClaims; ++i) {
    Membership& who = i % 2 == 0 ? a : b;
    boost::asio::co_spawn(
        io_.context(),
        [&who, &results, i]() -> boost::asio::awaitable<void> {
          results[i].set_value(co_await who.ClaimName("bucket-1", "claim " + std::to_string(i)));
        },
        [](std::exception_ptr) {});
  }
  int winners = 0;
  int winner = -1;
  for (int i = 0; i < kClaims; ++i) {
    auto r = results[i].get_future().get();
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (*r) {
      ++winners;
      winner = i;
    }
  }
  EXPECT_EQ(winners, 1);
  auto client = Client();
  RangeRequest read;
  read.key = EtcdMembership::NameKey(cluster_name_, "bucket-1");
  auto stored = io_.Run(client->Range(read));
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->kvs.size(), 1u);
  EXPECT_EQ(stored->kvs[0].value, "claim " + std::to_string(winner));
  // Another name is free.
  auto other = io_.Run(a.ClaimName("bucket-2", "x"));
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(*other);
}

TEST_F(EtcdMembershipTest, JunkUnderTheMembersPrefixIsIgnored) {
  auto client = Client();
  const std::string prefix = EtcdMembership::MembersPrefix(cluster_name_);
  ASSERT_TRUE(io_.Run(client->Put(prefix + "junk-before", "{not json", 0)).ok());
  Membership& a = Make(Config("a"));
  Views views(a);
  ASSERT_TRUE(io_.Run(a.Start()).ok());
  EXPECT_EQ(Nodes(*a.View()), std::vector<std::string>{"a"});
  auto junk = io_.Run(client->Put(prefix + "junk-after", "\xff\xff", 0));
  ASSERT_TRUE(junk.ok());
  // The junk is no member, but it is a change: the epoch moves to it.
  ASSERT_TRUE(views.WaitFor([&](const MembershipView& v) { return v.epoch == junk->revision; },
                            milliseconds(5'000)));
  EXPECT_EQ(Nodes(*a.View()), std::vector<std::string>{"a"});
  EXPECT_TRUE(a.MayAcceptWrites());
}

TEST_F(EtcdMembershipTest, StartFailsWithoutEtcd) {
  const int dead = testing::FreePort();
  Membership& m = Make(Config("m", "http://127.0.0.1:" + std::to_string(dead)));
  auto r = io_.Run(m.Start());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(m.MayAcceptWrites());
}

}  // namespace
}  // namespace strata::storage::cluster
