#include "storage/cluster/etcd_catalog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "metadata/codec.h"
#include "metadata/index.h"
#include "storage/object_store.h"
#include "tests/unit/ci_skip.h"
#include "tests/unit/storage/etcd_test_server.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_store.h"

namespace strata::storage::cluster {
namespace {

using metadata::BucketRecord;
using std::chrono::milliseconds;
using testing::CutProxy;
using testing::EtcdServer;
using testing::Eventually;
using testing::IoThread;
using testing::TempDir;

constexpr milliseconds kWatchWait{5'000};

// One gateway's side: its index and store (the mirror) and, once started, its catalog.
struct Gateway {
  TempDir dir;
  std::unique_ptr<metadata::Index> index;
  std::unique_ptr<ObjectStore> store;
  std::unique_ptr<EtcdCatalog> catalog;

  bool Has(const std::string& bucket) { return store->GetBucket(BucketName(bucket)).ok(); }
  BucketRecord Local(const std::string& bucket) {
    auto b = store->GetBucket(BucketName(bucket));
    return b.ok() ? *b : BucketRecord{};
  }
};

BucketRecord Record(const std::string& name, const std::string& owner) {
  BucketRecord r;
  r.name = BucketName(name);
  r.owner = owner;
  r.created_ms = 1'700'000'000'000;
  return r;
}

class EtcdCatalogTest : public ::testing::Test {
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
      if (g->catalog) {
        g->store->SetSharedCatalog(nullptr);
        (void)io_.Run(g->catalog->Stop());
        g->catalog.reset();
      }
    }
    gateways_.clear();
  }

  // A gateway with an index and store, its catalog not started.
  Gateway& Open() {
    auto g = std::make_unique<Gateway>();
    auto index = metadata::Index::Open((g->dir.path() / "index").string(), {.sync = false});
    EXPECT_TRUE(index.ok()) << index.error().message;
    g->index = std::move(index).value();
    Config config;
    config.server.fsync = false;
    config.tiers = {testing::LocalTierConfig("hot", g->dir.path())};
    config.storage_classes = {{"STANDARD", "hot"}};
    auto store = ObjectStore::Open(config, *g->index, SweepOptions{.at_open = false});
    EXPECT_TRUE(store.ok()) << store.error().message;
    g->store = std::move(store).value();
    gateways_.push_back(std::move(g));
    return *gateways_.back();
  }

  // Starts `g`'s catalog against `url` (etcd's by default): the reconcile's outcome.
  Result<void> Start(Gateway& g, const std::string& url = {}) {
    auto client = EtcdClient::Make(
        io_.executor(), {url.empty() ? server_->url() : url},
        EtcdOptions{.connect_timeout = milliseconds(500), .request_timeout = milliseconds(1'000)});
    EXPECT_TRUE(client.ok());
    auto catalog = std::make_unique<EtcdCatalog>(io_.context(), cluster_, std::move(client).value(),
                                                 g.store->bucket_mirror());
    auto started = io_.Run(catalog->Start());
    if (started.ok()) {
      g.catalog = std::move(catalog);
      g.store->SetSharedCatalog(g.catalog.get());
    } else {
      (void)io_.Run(catalog->Stop());
    }
    return started;
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

  std::string Key(const std::string& bucket) { return EtcdCatalog::BucketKey(cluster_, bucket); }

  static EtcdServer* server_;
  IoThread io_;
  std::string cluster_;
  std::vector<std::unique_ptr<Gateway>> gateways_;
};

EtcdServer* EtcdCatalogTest::server_ = nullptr;

TEST_F(EtcdCatalogTest, TwoClaimsOfOneNameHaveOneWinner) {
  Gateway& a = Started();
  Gateway& b = Started();
  for (int round = 0; round < 5; ++round) {
    const std::string name = "race-" + std::to_string(round);
    Result<SharedCatalog::Claimed> ca = Error(ErrorCode::kInternal, "");
    Result<SharedCatalog::Claimed> cb = Error(ErrorCode::kInternal, "");
    std::thread ta([&] { ca = a.catalog->Claim(Record(name, "alice")); });
    std::thread tb([&] { cb = b.catalog->Claim(Record(name, "bob")); });
    ta.join();
    tb.join();
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ASSERT_TRUE(cb.ok()) << cb.error().message;
    EXPECT_NE(ca->created, cb->created) << "exactly one claim wins";
    const std::string winner = ca->created ? "alice" : "bob";
    EXPECT_EQ(ca->holder.owner, winner);
    EXPECT_EQ(cb->holder.owner, winner);
    // Both mirrors hold the winner's record at once: the loser mirrored the holder.
    EXPECT_EQ(a.Local(name).owner, winner);
    EXPECT_EQ(b.Local(name).owner, winner);
  }
}

TEST_F(EtcdCatalogTest, CreateBucketThroughTheStoreAnswersByOwner) {
  Gateway& a = Started();
  Gateway& b = Started();
  auto created = a.store->CreateBucket(BucketName("shared"), "alice", "");
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(a.Has("shared")) << "visible at once through the gateway that made it";
  auto again = b.store->CreateBucket(BucketName("shared"), "alice", "");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kBucketAlreadyOwnedByYou);
  auto other = b.store->CreateBucket(BucketName("shared"), "bob", "");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kBucketAlreadyExists);
  auto bad = b.store->CreateBucket(BucketName("Not_Valid"), "bob", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidBucketName);
}

TEST_F(EtcdCatalogTest, LookupIsLinearizableAndMirrors) {
  Gateway& a = Started();
  Gateway& b = Started();
  auto missing = b.catalog->Lookup(BucketName("nope"));
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(a.store->CreateBucket(BucketName("fresh"), "alice", "").ok());
  // Straight after: no watch has to have delivered it.
  auto found = io_.Run(b.catalog->LookupAsync(BucketName("fresh")));
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->owner, "alice");
  EXPECT_TRUE(b.Has("fresh"));
  auto blocking = b.catalog->Lookup(BucketName("fresh"));
  ASSERT_TRUE(blocking.ok() && blocking->has_value());
}

TEST_F(EtcdCatalogTest, UpdateRetriesAfterALostRace) {
  Gateway& a = Started();
  Gateway& b = Started();
  ASSERT_TRUE(a.store->CreateBucket(BucketName("contended"), "alice", "").ok());
  int calls = 0;
  auto updated = a.catalog->Update(BucketName("contended"), [&](BucketRecord& r) -> Result<void> {
    if (++calls == 1) {
      // B changes the record between A's read and A's write: A's compare fails.
      auto tagged = b.store->SetBucketTags(BucketName("contended"), {{"team", "b"}});
      EXPECT_TRUE(tagged.ok()) << tagged.error().message;
    }
    r.versioning = "Enabled";
    return Ok();
  });
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(updated->versioning, "Enabled");
  ASSERT_EQ(updated->tags.size(), 1u) << "B's change survived A's retried write";
  EXPECT_EQ(a.Local("contended").versioning, "Enabled");

  auto gone = a.catalog->Update(BucketName("absent"), [](BucketRecord&) { return Ok(); });
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNoSuchBucket);
  auto refused = a.catalog->Update(BucketName("contended"), [](BucketRecord&) -> Result<void> {
    return Error(ErrorCode::kInvalidArgument, "no");
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(EtcdCatalogTest, TheWatchKeepsAnotherMirrorEqual) {
  Gateway& a = Started();
  Gateway& b = Started();
  const BucketName name("watched");
  ASSERT_TRUE(a.store->CreateBucket(name, "alice", "").ok());
  ASSERT_TRUE(a.store->SetBucketVersioning(name, "Enabled").ok());
  ASSERT_TRUE(a.store->SetBucketTags(name, {{"k", "v"}}).ok());
  metadata::LifecycleRule rule;
  rule.id = "expire";
  rule.enabled = true;
  rule.expiration_days = 7;
  ASSERT_TRUE(a.store->SetBucketLifecycle(name, {rule}).ok());
  ASSERT_TRUE(a.store
                  ->UpdateBucketAccess(name,
                                       [](metadata::BucketAccess& access) -> Result<void> {
                                         access.policy = R"({"Statement": []})";
                                         return Ok();
                                       })
                  .ok());
  EXPECT_EQ(a.Local("watched").access.policy, R"({"Statement": []})");  // its own at once
  EXPECT_TRUE(Eventually(
      [&] {
        auto r = b.Local("watched");
        return r.versioning == "Enabled" && r.tags.size() == 1 && r.lifecycle.size() == 1 &&
               r.access.policy == R"({"Statement": []})";
      },
      kWatchWait));
  ASSERT_TRUE(a.store->DeleteBucket(name).ok());
  EXPECT_FALSE(a.Has("watched"));
  EXPECT_TRUE(Eventually([&] { return !b.Has("watched"); }, kWatchWait));
}

TEST_F(EtcdCatalogTest, RemoveChecksEmptinessAndAnswersNoSuchBucket) {
  Gateway& a = Started();
  Gateway& b = Started();
  ASSERT_TRUE(a.store->CreateBucket(BucketName("full"), "alice", "").ok());
  testing::PutBytes(*a.store, "full", "k", "bytes");
  auto refused = a.store->DeleteBucket(BucketName("full"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kBucketNotEmpty);
  // The hook decides for the cluster: B's own check says "empty here", a hook says not.
  std::atomic<int> asked{0};
  b.catalog->SetEmptinessCheck([&](const BucketName&) -> Result<void> {
    ++asked;
    return Error(ErrorCode::kBucketNotEmpty, "a member holds objects");
  });
  auto hooked = b.store->DeleteBucket(BucketName("full"));
  ASSERT_FALSE(hooked.ok());
  EXPECT_EQ(hooked.error().code, ErrorCode::kBucketNotEmpty);
  EXPECT_EQ(asked.load(), 1);
  b.catalog->SetEmptinessCheck([](const BucketName&) { return Ok(); });

  ASSERT_TRUE(a.store->CreateBucket(BucketName("empty"), "alice", "").ok());
  ASSERT_TRUE(b.store->DeleteBucket(BucketName("empty")).ok());
  auto twice = b.store->DeleteBucket(BucketName("empty"));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kNoSuchBucket);
  EXPECT_TRUE(Eventually([&] { return !a.Has("empty"); }, kWatchWait));
}

TEST_F(EtcdCatalogTest, StartReconcilesTheLocalCatalog) {
  Gateway& a = Started();
  ASSERT_TRUE(a.store->CreateBucket(BucketName("keep"), "alice", "").ok());
  ASSERT_TRUE(a.store->CreateBucket(BucketName("changed"), "alice", "").ok());
  // B, before it starts its catalog: an old copy of "changed", and two buckets etcd never
  // had (or no longer has), one of them with an object.
  Gateway& b = Open();
  auto changed = a.Local("changed");
  ASSERT_TRUE(b.index->CreateBucket(changed).ok());
  ASSERT_TRUE(b.index->CreateBucket(Record("stale-empty", "carol")).ok());
  ASSERT_TRUE(b.index->CreateBucket(Record("stale-full", "carol")).ok());
  testing::PutBytes(*b.store, "stale-full", "k", "bytes");
  ASSERT_TRUE(a.store->SetBucketVersioning(BucketName("changed"), "Suspended").ok());

  ASSERT_TRUE(Start(b).ok());
  EXPECT_TRUE(b.Has("keep"));
  EXPECT_EQ(b.Local("changed").versioning, "Suspended");
  EXPECT_FALSE(b.Has("stale-empty"));
  EXPECT_TRUE(b.Has("stale-full")) << "a bucket with objects is never dropped by a reconcile";
}

TEST_F(EtcdCatalogTest, UnreachableEtcdIsUnavailable) {
  Gateway& g = Open();
  // On the heap: GCC 12 warns (maybe-uninitialized) about this one on the stack.
  auto proxy = std::make_unique<CutProxy>(server_->port());
  proxy->Cut();
  auto started = Start(g, proxy->url());
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable) << started.error().message;

  proxy->Restore();
  ASSERT_TRUE(Start(g, proxy->url()).ok());
  proxy->Cut();
  auto claimed = g.store->CreateBucket(BucketName("offline"), "alice", "");
  ASSERT_FALSE(claimed.ok());
  EXPECT_EQ(claimed.error().code, ErrorCode::kUnavailable) << claimed.error().message;
  auto looked = io_.Run(g.catalog->LookupAsync(BucketName("offline")));
  ASSERT_FALSE(looked.ok());
  EXPECT_EQ(looked.error().code, ErrorCode::kUnavailable) << looked.error().message;
  EXPECT_FALSE(g.Has("offline"));
}

TEST_F(EtcdCatalogTest, MalformedValuesAreRefusedNeverFatal) {
  // Junk before a gateway starts (the reconcile) and after (the watch).
  PutRaw(Key("junk-early"), "\x05garbage");
  PutRaw(Key("misnamed"), metadata::EncodeBucket(Record("another", "mallory")));
  Gateway& g = Started();
  EXPECT_FALSE(g.Has("junk-early"));
  EXPECT_FALSE(g.Has("misnamed"));
  EXPECT_FALSE(g.Has("another"));
  PutRaw(Key("junk-late"), "");
  ASSERT_TRUE(g.store->CreateBucket(BucketName("after-junk"), "alice", "").ok());
  PutRaw(Key("junk-early"), std::string(1000, '\xff'));
  for (const char* name : {"junk-early", "misnamed", "junk-late"}) {
    auto looked = g.catalog->Lookup(BucketName(name));
    ASSERT_FALSE(looked.ok()) << name;
    EXPECT_EQ(looked.error().code, ErrorCode::kCorruption);
    auto updated = g.catalog->Update(BucketName(name), [](BucketRecord&) { return Ok(); });
    ASSERT_FALSE(updated.ok()) << name;
    EXPECT_EQ(updated.error().code, ErrorCode::kCorruption);
    auto claimed = g.store->CreateBucket(BucketName(name), "alice", "");
    ASSERT_FALSE(claimed.ok()) << name;
    EXPECT_EQ(claimed.error().code, ErrorCode::kCorruption);
  }
  // The watch went on past the junk.
  Gateway& other = Started();
  ASSERT_TRUE(other.store->CreateBucket(BucketName("later"), "bob", "").ok());
  EXPECT_TRUE(Eventually([&] { return g.Has("later"); }, kWatchWait));
  EXPECT_FALSE(g.Has("junk-late"));
}

TEST_F(EtcdCatalogTest, BlockingCallsOnTheCatalogsThreadAreRefused) {
  Gateway& g = Started();
  auto looked = io_.Run([&]() -> boost::asio::awaitable<Result<std::optional<BucketRecord>>> {
    co_return g.catalog->Lookup(BucketName("any"));
  }());
  ASSERT_FALSE(looked.ok());
  EXPECT_EQ(looked.error().code, ErrorCode::kInternal);
}

TEST(EtcdCatalogKeysTest, Layout) {
  EXPECT_EQ(EtcdCatalog::BucketsPrefix("strata"), "/strata/buckets/");
  EXPECT_EQ(EtcdCatalog::BucketKey("strata", "b1"), "/strata/buckets/b1");
}

}  // namespace
}  // namespace strata::storage::cluster
