// The contract of storage/tier.h, run against every implementation: LocalTier (through
// LocalTierAdapter, in a temporary directory), MemTier, and UpstreamTier against a real
// S3 server (moto_server on loopback; the upstream cases fail when it cannot start).
// Then FaultyTier over each of them: each fault is seen by the caller and leaves the
// inner tier as the contract says.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/config.h"
#include "storage/crc64nvme.h"
#include "storage/local/local_tier.h"
#include "storage/local/local_tier_adapter.h"
#include "storage/tier.h"
#include "storage/upstream/upstream.h"
#include "storage/upstream/upstream_tier.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_dir.h"
#include "tests/unit/storage/test_moto.h"
#include "tests/unit/storage/testing/faulty_tier.h"
#include "tests/unit/storage/testing/mem_tier.h"

namespace strata::storage {
namespace {

namespace asio = boost::asio;
using testing::FaultyTier;
using testing::MemTier;
using testing::RandomBytes;
using testing::TempDir;
using testing::TierOp;
using testing::WriteFault;

// Starts `awaitable` on `ioc` and runs handlers until it is done (not until the context
// runs dry: a call a FaultyTier holds keeps a timer pending meanwhile).
template <typename T>
T RunOn(asio::io_context& ioc, asio::awaitable<T> awaitable) {
  std::optional<T> out;
  std::exception_ptr error;
  bool done = false;
  auto run = [&]() -> asio::awaitable<void> { out.emplace(co_await std::move(awaitable)); };
  asio::co_spawn(ioc, run, [&](std::exception_ptr e) {
    error = e;
    done = true;
  });
  ioc.restart();
  while (!done) {
    ioc.run_one();
  }
  if (error) {
    std::rethrow_exception(error);
  }
  return std::move(*out);
}

// ---- The implementations under test ----

struct LocalEnv {
  static constexpr const char* kName = "local";
  TempDir dir;
  std::unique_ptr<LocalTier> local;
  std::unique_ptr<LocalTierAdapter> tier;

  asio::awaitable<Result<void>> Setup() {
    auto opened = LocalTier::Open("hot", (dir.path() / "hot").string(), true);
    if (!opened.ok()) {
      co_return std::move(opened).error();
    }
    local = std::move(opened).value();
    tier = std::make_unique<LocalTierAdapter>(*local);
    co_return Ok();
  }
  Tier& get() { return *tier; }
  TierWriteOptions Options() { return {}; }  // the local tier names its files
  // Flips a bit of the stored object bytes on disk (the chunk CRCs stay as written).
  bool Damage(const std::string& location, std::uint64_t offset) {
    std::fstream file(local->DataPath(location), std::ios::in | std::ios::out | std::ios::binary);
    char byte = 0;
    file.seekg(static_cast<std::streamoff>(offset));
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x10);
    file.seekp(static_cast<std::streamoff>(offset));
    file.write(&byte, 1);
    return file.good();
  }
};

struct MemEnv {
  static constexpr const char* kName = "mem";
  MemTier tier{"mem"};
  int next = 0;

  asio::awaitable<Result<void>> Setup() { co_return Ok(); }
  Tier& get() { return tier; }
  TierWriteOptions Options() {
    TierWriteOptions options;
    options.location = "obj-" + std::to_string(++next);
    return options;
  }
  bool Damage(const std::string& location, std::uint64_t offset) {
    return tier.CorruptStored(location, offset, 4);
  }
};

testing::MotoServer& Moto() {
  static testing::MotoServer server;  // one for the binary, stopped at exit
  return server;
}

struct UpstreamEnv {
  static constexpr const char* kName = "upstream";
  TempDir spool;
  std::unique_ptr<Upstream> upstream;
  std::unique_ptr<UpstreamTier> tier;
  std::string bucket;
  int next = 0;

  ~UpstreamEnv() {
    if (upstream) {
      upstream->ReleaseClients();  // their sockets belong to the test's io_context
    }
  }
  asio::awaitable<Result<void>> Setup() {
    if (!Moto().running()) {
      co_return Error(ErrorCode::kUnavailable, "moto_server (the upstream) did not start");
    }
    TierConfig config;
    config.name = "cold";
    config.kind = TierKind::kS3;
    config.endpoint = "http://127.0.0.1:" + std::to_string(Moto().port());
    config.access_key = "test";
    config.secret_key = "test";
    auto created = Upstream::Create(config);
    if (!created.ok()) {
      co_return std::move(created).error();
    }
    upstream = std::move(created).value();
    tier = std::make_unique<UpstreamTier>(*upstream, spool.path().string());
    static std::atomic<int> buckets{0};
    bucket = "contract-" + std::to_string(::getpid()) + "-" + std::to_string(++buckets);
    co_return co_await upstream->Client(co_await asio::this_coro::executor).CreateBucket(bucket);
  }
  Tier& get() { return *tier; }
  TierWriteOptions Options() {
    TierWriteOptions options;
    options.location = bucket + "/dir/obj-" + std::to_string(++next);
    options.headers = {{"Content-Type", "application/x-test"}};
    return options;
  }
};

// ---- Helpers over any Tier ----

template <typename Env>
class TierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ready = Run(env_.Setup());
    ASSERT_TRUE(ready.ok()) << ready.error().message;
  }

  template <typename T>
  T Run(asio::awaitable<T> awaitable) {
    return RunOn(ioc_, std::move(awaitable));
  }

  Tier& tier() { return env_.get(); }

  // Writes `body` in pieces of `piece` bytes and commits it.
  Result<TierObject> Put(Tier& tier, std::string_view body, std::size_t piece = 100'000,
                         std::optional<TierWriteOptions> options = std::nullopt) {
    auto write = Run(tier.BeginWrite(options ? *options : env_.Options()));
    if (!write.ok()) {
      return std::move(write).error();
    }
    for (std::size_t pos = 0; pos < body.size(); pos += piece) {
      auto appended = Run((*write)->Append(body.substr(pos, piece)));
      if (!appended.ok()) {
        return std::move(appended).error();
      }
    }
    return Run((*write)->Commit());
  }
  Result<TierObject> Put(std::string_view body) { return Put(tier(), body); }

  // Reads the whole of `range` with reads of `block` bytes.
  Result<std::string> Get(Tier& tier, const std::string& location, TierRange range = {},
                          std::size_t block = 64 << 10) {
    auto reader = Run(tier.Open(location, TierOpenOptions{.range = range}));
    if (!reader.ok()) {
      return std::move(reader).error();
    }
    std::string out;
    std::vector<char> buf(block);
    for (;;) {
      auto n = Run((*reader)->ReadAsync(out.size(), std::span<char>(buf)));
      if (!n.ok()) {
        return std::move(n).error();
      }
      if (*n == 0) {
        break;
      }
      out.append(buf.data(), *n);
    }
    if (out.size() != (*reader)->size()) {
      return Error(ErrorCode::kInternal, "read " + std::to_string(out.size()) +
                                             " bytes, the reader said " +
                                             std::to_string((*reader)->size()));
    }
    return out;
  }
  Result<std::string> Get(const std::string& location, TierRange range = {}) {
    return Get(tier(), location, range);
  }

  // The whole object, refused unless its CRC64NVME is the one its commit reported: the
  // check a reader does end to end (a write-back push, a repair).
  Result<std::string> GetVerified(Tier& tier, const TierObject& object) {
    auto bytes = Get(tier, object.location);
    if (bytes.ok() && Crc64Nvme(0, *bytes) != object.crc64nvme) {
      return Error(ErrorCode::kCorruption, "CRC64NVME mismatch reading " + object.location);
    }
    return bytes;
  }

  TierUsage UsageOf(Tier& tier) {
    auto usage = Run(tier.Usage());
    EXPECT_TRUE(usage.ok()) << usage.error().message;
    return usage.ok() ? *usage : TierUsage{};
  }

  asio::io_context ioc_;  // declared first: outlives the env's clients and files
  Env env_;
};

// ---- The contract, for every tier ----

template <typename Env>
using TierContractTest = TierTest<Env>;
using AllTiers = ::testing::Types<LocalEnv, MemEnv, UpstreamEnv>;
struct EnvNames {
  template <typename Env>
  static std::string GetName(int) {
    return Env::kName;
  }
};
TYPED_TEST_SUITE(TierContractTest, AllTiers, EnvNames);

TYPED_TEST(TierContractTest, WriteCommitAndReadRangesByteExact) {
  // Three and a bit 64 KiB chunks, appended in pieces that straddle chunk boundaries.
  const std::string body = RandomBytes(3 * 65536 + 1234, 1);
  auto put = this->Put(this->tier(), body, 50'000);
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_FALSE(put->location.empty());
  EXPECT_EQ(put->size, body.size());
  EXPECT_EQ(put->crc64nvme, Crc64Nvme(0, body));

  auto whole = this->Get(put->location);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_TRUE(*whole == body) << "whole object differs";
  // Ranges inside one chunk, across chunk boundaries, to the end, and clamped at the end.
  const std::vector<std::pair<std::uint64_t, std::optional<std::uint64_t>>> ranges = {
      {0, 1},          {65535, 2}, {65536 * 2 + 5, 70'000}, {body.size() - 10, std::nullopt},
      {100, 1u << 30}, {7, 0}};
  for (const auto& [offset, length] : ranges) {
    auto got = this->Get(this->tier(), put->location, TierRange{offset, length}, 4096);
    ASSERT_TRUE(got.ok()) << "range at " << offset << ": " << got.error().message;
    const std::string want = body.substr(offset, length.value_or(std::string::npos));
    EXPECT_TRUE(*got == want) << "range at " << offset << " differs (" << got->size() << " bytes, "
                              << want.size() << " expected)";
  }
}

TYPED_TEST(TierContractTest, EmptyObject) {
  auto put = this->Put("");
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->size, 0u);
  EXPECT_EQ(put->crc64nvme, Crc64Nvme(0, ""));
  auto got = this->Get(put->location);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, "");
}

TYPED_TEST(TierContractTest, UncommittedWriteIsInvisibleAndLeavesNothing) {
  const TierUsage before = this->UsageOf(this->tier());
  const TierWriteOptions options = this->env_.Options();
  {
    auto write = this->Run(this->tier().BeginWrite(options));
    ASSERT_TRUE(write.ok()) << write.error().message;
    ASSERT_TRUE(this->Run((*write)->Append(RandomBytes(100'000, 2))).ok());
    // In flight: not there yet.
    const TierUsage during = this->UsageOf(this->tier());
    EXPECT_EQ(during.objects, before.objects);
    EXPECT_EQ(during.bytes, before.bytes);
    if (!options.location.empty()) {
      auto opened = this->Run(this->tier().Open(options.location, TierOpenOptions{}));
      ASSERT_FALSE(opened.ok());
      EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
    }
  }  // destroyed uncommitted: aborted
  const TierUsage after = this->UsageOf(this->tier());
  EXPECT_EQ(after.objects, before.objects);
  EXPECT_EQ(after.bytes, before.bytes);
  if (!options.location.empty()) {
    auto opened = this->Run(this->tier().Open(options.location, TierOpenOptions{}));
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
  }
}

TYPED_TEST(TierContractTest, CommitOfAnotherSizeThanDeclaredStoresNothing) {
  const TierUsage before = this->UsageOf(this->tier());
  TierWriteOptions options = this->env_.Options();
  options.size = 10;
  auto put = this->Put(this->tier(), "12345", 100, options);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kIncompleteBody);
  const TierUsage after = this->UsageOf(this->tier());
  EXPECT_EQ(after.objects, before.objects);
  EXPECT_EQ(after.bytes, before.bytes);
  // The declared size, met, commits.
  options = this->env_.Options();
  options.size = 5;
  auto exact = this->Put(this->tier(), "12345", 100, options);
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ(exact->size, 5u);
}

TYPED_TEST(TierContractTest, RemoveIsIdempotentAndThenNotFound) {
  auto put = this->Put("short-lived");
  ASSERT_TRUE(put.ok()) << put.error().message;
  ASSERT_TRUE(this->Get(put->location).ok());
  auto removed = this->Run(this->tier().Remove(put->location, ""));
  EXPECT_TRUE(removed.ok()) << removed.error().message;
  auto again = this->Run(this->tier().Remove(put->location, ""));
  EXPECT_TRUE(again.ok()) << again.error().message;
  auto opened = this->Run(this->tier().Open(put->location, TierOpenOptions{}));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound) << opened.error().message;
}

// PutFrom: a whole copy from another tier's reader (the write-back push's path). Local
// and MemTier use the default (BeginWrite, Append, Commit); UpstreamTier its own.
TYPED_TEST(TierContractTest, PutFromCopiesAWholeReaderOfAnotherTier) {
  MemTier source;
  const std::string body = RandomBytes(700'000, 21);
  auto stored = this->Put(source, body, 100'000, TierWriteOptions{});
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  auto reader = this->Run(source.Open(stored->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto put = this->Run(this->tier().PutFrom(
      this->env_.Options().location, std::shared_ptr<TierReader>(std::move(reader).value()),
      {{"Content-Type", "application/x-test"}}, stored->crc64nvme));
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->size, body.size());
  EXPECT_EQ(put->crc64nvme, Crc64Nvme(0, body));
  auto got = this->Get(put->location);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body);
}

TYPED_TEST(TierContractTest, AReaderDescribesTheWholeObject) {
  const std::string body = RandomBytes(5'000, 23);
  auto put = this->Put(body);
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto reader = this->Run(
      this->tier().Open(put->location, TierOpenOptions{.range = {1'000, std::uint64_t{10}}}));
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ((*reader)->size(), 10u);
  EXPECT_EQ((*reader)->info().size, body.size());
  EXPECT_EQ((*reader)->info().etag, put->etag);  // empty where the tier has none
}

TYPED_TEST(TierContractTest, UsageCountsCommittedObjects) {
  const TierUsage before = this->UsageOf(this->tier());
  auto a = this->Put(RandomBytes(70'000, 3));
  auto b = this->Put(RandomBytes(1'234, 4));
  ASSERT_TRUE(a.ok() && b.ok());
  TierUsage now = this->UsageOf(this->tier());
  EXPECT_EQ(now.objects, before.objects + 2);
  EXPECT_EQ(now.bytes, before.bytes + 70'000 + 1'234);
  ASSERT_TRUE(this->Run(this->tier().Remove(a->location, "")).ok());
  now = this->UsageOf(this->tier());
  EXPECT_EQ(now.objects, before.objects + 1);
  EXPECT_EQ(now.bytes, before.bytes + 1'234);
}

TYPED_TEST(TierContractTest, ReadingAtAndPastTheEnd) {
  const std::string body = RandomBytes(5'000, 5);
  auto put = this->Put(body);
  ASSERT_TRUE(put.ok()) << put.error().message;
  // A range starting at the end is empty; one starting past it is refused.
  auto at_end = this->Run(
      this->tier().Open(put->location, TierOpenOptions{.range = {body.size(), std::nullopt}}));
  ASSERT_TRUE(at_end.ok()) << at_end.error().message;
  EXPECT_EQ((*at_end)->size(), 0u);
  std::vector<char> buf(100);
  auto n = this->Run((*at_end)->ReadAsync(0, std::span<char>(buf)));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  auto past = this->Run(
      this->tier().Open(put->location, TierOpenOptions{.range = {body.size() + 1, std::nullopt}}));
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, ErrorCode::kInvalidRange);
  // A reader asked past its end returns 0; a read across the end stops there.
  auto reader = this->Run(this->tier().Open(put->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok());
  n = this->Run((*reader)->ReadAsync(body.size() + 10, std::span<char>(buf)));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  n = this->Run((*reader)->ReadAsync(body.size() - 30, std::span<char>(buf)));
  ASSERT_TRUE(n.ok()) << n.error().message;
  ASSERT_GT(*n, 0u);
  ASSERT_LE(*n, 30u);
  EXPECT_EQ(std::string(buf.data(), *n), body.substr(body.size() - 30, *n));
}

// ---- Tiers that keep the bytes themselves: damage and open readers ----

template <typename Env>
using StoredBytesTest = TierTest<Env>;
using ByteTiers = ::testing::Types<LocalEnv, MemEnv>;
TYPED_TEST_SUITE(StoredBytesTest, ByteTiers, EnvNames);

TYPED_TEST(StoredBytesTest, FlippedStoredBitIsNeverServed) {
  const std::string body = RandomBytes(3 * 65536, 6);
  auto put = this->Put(body);
  ASSERT_TRUE(put.ok()) << put.error().message;
  ASSERT_TRUE(this->env_.Damage(put->location, 65536 + 100));  // in chunk 1
  // The damaged chunk fails its CRC64NVME, whole or in part; the others still read.
  auto whole = this->Get(put->location);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().code, ErrorCode::kCorruption);
  auto part = this->Get(put->location, TierRange{65536 + 90, 20});
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.error().code, ErrorCode::kCorruption);
  auto first = this->Get(put->location, TierRange{0, 65536});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(*first == body.substr(0, 65536));
  auto last = this->Get(put->location, TierRange{2 * 65536, std::nullopt});
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_TRUE(*last == body.substr(2 * 65536));
}

TYPED_TEST(StoredBytesTest, OpenReaderKeepsItsBytesThroughRemove) {
  const std::string body = RandomBytes(100'000, 7);
  auto put = this->Put(body);
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto reader = this->Run(this->tier().Open(put->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(this->Run(this->tier().Remove(put->location, "")).ok());
  std::string out;
  std::vector<char> buf(30'000);
  for (;;) {
    auto n = this->Run((*reader)->ReadAsync(out.size(), std::span<char>(buf)));
    ASSERT_TRUE(n.ok()) << n.error().message;
    if (*n == 0) {
      break;
    }
    out.append(buf.data(), *n);
  }
  EXPECT_TRUE(out == body);
}

// ---- FaultyTier over every tier ----

template <typename Env>
class FaultyTierTest : public TierTest<Env> {
 protected:
  FaultyTier& faulty() {
    if (!faulty_) {
      faulty_ = std::make_unique<FaultyTier>(this->tier());
    }
    return *faulty_;
  }
  std::unique_ptr<FaultyTier> faulty_;
};
TYPED_TEST_SUITE(FaultyTierTest, AllTiers, EnvNames);

TYPED_TEST(FaultyTierTest, FailNextSurfacesTheErrorThenWorks) {
  FaultyTier& tier = this->faulty();
  auto put = this->Put(tier, "some bytes");
  ASSERT_TRUE(put.ok()) << put.error().message;

  tier.FailNext(TierOp::kOpen, Error(ErrorCode::kUnavailable, "disk gone", true));
  auto failed = this->Run(tier.Open(put->location, TierOpenOptions{}));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(failed.error().retryable);
  EXPECT_EQ(failed.error().message, "disk gone");
  auto got = this->Get(tier, put->location);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, "some bytes");

  // Two failing reads, then the third works.
  tier.FailNext(TierOp::kRead, Error(ErrorCode::kTimedOut, "slow"), 2);
  auto reader = this->Run(tier.Open(put->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok());
  std::vector<char> buf(64);
  for (int i = 0; i < 2; ++i) {
    auto n = this->Run((*reader)->ReadAsync(0, std::span<char>(buf)));
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code, ErrorCode::kTimedOut);
  }
  auto n = this->Run((*reader)->ReadAsync(0, std::span<char>(buf)));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(std::string(buf.data(), *n), "some bytes");

  // A failed commit stores nothing (the inner write is aborted); the next one commits.
  const TierUsage before = this->UsageOf(tier);
  tier.FailNext(TierOp::kCommit, Error(ErrorCode::kNoSpace, "full"));
  auto full = this->Put(tier, RandomBytes(10'000, 8));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kNoSpace);
  EXPECT_EQ(this->UsageOf(tier).objects, before.objects);
  auto later = this->Put(tier, RandomBytes(10'000, 8));
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_EQ(this->UsageOf(tier).objects, before.objects + 1);

  // A failed append fails the write for good.
  tier.FailNext(TierOp::kAppend, Error(ErrorCode::kNoSpace, "full"));
  auto write = this->Run(tier.BeginWrite(this->env_.Options()));
  ASSERT_TRUE(write.ok());
  auto appended = this->Run((*write)->Append("x"));
  ASSERT_FALSE(appended.ok());
  EXPECT_EQ(appended.error().code, ErrorCode::kNoSpace);
  EXPECT_FALSE(this->Run((*write)->Append("y")).ok());
  EXPECT_FALSE(this->Run((*write)->Commit()).ok());
  EXPECT_EQ(this->UsageOf(tier).objects, before.objects + 1);
  EXPECT_EQ(tier.calls(TierOp::kCommit), 4u);
}

TYPED_TEST(FaultyTierTest, TornWriteNeverCommits) {
  FaultyTier& tier = this->faulty();
  const TierUsage before = this->UsageOf(tier);
  tier.TearNextWrite(WriteFault::kTorn, 1'000);
  auto torn = this->Put(tier, RandomBytes(200'000, 9), 30'000);
  ASSERT_FALSE(torn.ok());
  EXPECT_EQ(torn.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(torn.error().retryable);
  const TierUsage after = this->UsageOf(tier);
  EXPECT_EQ(after.objects, before.objects);
  EXPECT_EQ(after.bytes, before.bytes);
  // Only that write: the next one is whole.
  const std::string body = RandomBytes(200'000, 10);
  auto whole = this->Put(tier, body, 30'000);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->size, body.size());
  EXPECT_TRUE(this->GetVerified(tier, *whole).ok());
}

TYPED_TEST(FaultyTierTest, ShortWriteReportsTheShorterSize) {
  FaultyTier& tier = this->faulty();
  const std::string body = RandomBytes(200'000, 11);
  tier.TearNextWrite(WriteFault::kShort, 70'000);
  auto put = this->Put(tier, body, 30'000);
  ASSERT_TRUE(put.ok()) << put.error().message;
  // What the commit says is what was stored: a caller comparing it with what it wrote
  // sees the loss.
  EXPECT_EQ(put->size, 70'000u);
  EXPECT_EQ(put->crc64nvme, Crc64Nvme(0, std::string_view(body).substr(0, 70'000)));
  auto got = this->Get(tier, put->location);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body.substr(0, 70'000));
}

TYPED_TEST(FaultyTierTest, FlippedBitOnReadIsSeenByAVerifyingReader) {
  FaultyTier& tier = this->faulty();
  const std::string body = RandomBytes(150'000, 12);
  auto put = this->Put(tier, body);
  ASSERT_TRUE(put.ok()) << put.error().message;
  ASSERT_TRUE(this->GetVerified(tier, *put).ok());
  tier.FlipBitOnRead(put->location, 100'000, 5);
  auto got = this->Get(tier, put->location);
  ASSERT_TRUE(got.ok());  // the inner tier's own checks passed: the flip is past them
  ASSERT_EQ(got->size(), body.size());
  EXPECT_EQ((*got)[100'000], static_cast<char>(body[100'000] ^ 0x20));
  EXPECT_EQ(got->substr(0, 100'000), body.substr(0, 100'000));
  auto verified = this->GetVerified(tier, *put);
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.error().code, ErrorCode::kCorruption);
  // A range that does not hold the byte is untouched; one that does is flipped at its
  // own offset.
  auto before = this->Get(tier, put->location, TierRange{0, 100'000});
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(*before == body.substr(0, 100'000));
  auto around = this->Get(tier, put->location, TierRange{99'990, 20});
  ASSERT_TRUE(around.ok());
  EXPECT_EQ((*around)[10], static_cast<char>(body[100'000] ^ 0x20));
  // The inner tier itself holds the right bytes.
  auto inner = this->GetVerified(this->tier(), *put);
  ASSERT_TRUE(inner.ok()) << inner.error().message;
}

TYPED_TEST(FaultyTierTest, HeldCommitIsInvisibleUntilReleased) {
  FaultyTier& tier = this->faulty();
  const TierUsage before = this->UsageOf(tier);
  auto write = this->Run(tier.BeginWrite(this->env_.Options()));
  ASSERT_TRUE(write.ok());
  ASSERT_TRUE(this->Run((*write)->Append("held bytes")).ok());
  tier.HoldNext(TierOp::kCommit);
  std::optional<Result<TierObject>> committed;
  asio::co_spawn(
      this->ioc_,
      [&]() -> asio::awaitable<void> { committed.emplace(co_await (*write)->Commit()); },
      [](std::exception_ptr e) {
        if (e) {
          std::rethrow_exception(e);
        }
      });
  this->ioc_.restart();
  this->ioc_.poll();
  EXPECT_EQ(tier.held(), 1u);
  EXPECT_FALSE(committed.has_value());
  EXPECT_EQ(this->UsageOf(tier).objects, before.objects);  // other calls go on meanwhile
  tier.Release();
  while (!committed) {
    this->ioc_.run_one();
  }
  ASSERT_TRUE(committed->ok()) << committed->error().message;
  EXPECT_EQ(tier.held(), 0u);
  EXPECT_EQ(this->UsageOf(tier).objects, before.objects + 1);
  auto got = this->Get(tier, (*committed)->location);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "held bytes");
}

// ---- MemTier from several threads ----

TEST(MemTierTest, WritersAndReadersOnSeveralThreadsAtOnce) {
  MemTier mem;
  constexpr int kThreads = 4;
  constexpr int kObjects = 50;
  std::vector<std::vector<TierObject>> written(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      asio::io_context ioc;  // each thread its own, as each I/O thread has
      for (int i = 0; i < kObjects; ++i) {
        const std::string body = RandomBytes(1'000 + i, t * 1000 + i);
        auto write = RunOn(ioc, mem.BeginWrite(TierWriteOptions{}));
        if (!write.ok() || !RunOn(ioc, (*write)->Append(body)).ok()) {
          ++failures;
          continue;
        }
        auto committed = RunOn(ioc, (*write)->Commit());
        if (!committed.ok()) {
          ++failures;
          continue;
        }
        auto reader = RunOn(ioc, mem.Open(committed->location, TierOpenOptions{}));
        std::string back(body.size(), '\0');
        auto n = reader.ok() ? RunOn(ioc, (*reader)->ReadAsync(0, std::span<char>(back)))
                             : Result<std::size_t>(reader.error());
        if (!n.ok() || *n != body.size() || back != body) {
          ++failures;
          continue;
        }
        written[t].push_back(*committed);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures.load(), 0);
  std::set<std::string> locations;
  for (const auto& objects : written) {
    for (const auto& object : objects) {
      locations.insert(object.location);
    }
  }
  EXPECT_EQ(locations.size(), std::size_t{kThreads * kObjects});  // no name given twice
  asio::io_context ioc;
  auto usage = RunOn(ioc, mem.Usage());
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->objects, std::uint64_t{kThreads * kObjects});
  EXPECT_EQ(mem.open_writes(), 0u);
}

// The default PutFrom commits nothing when the bytes it read are not the ones the caller
// vouched for, or when the source fails part way.
TEST(DefaultPutFromTest, ABadCrcOrAFailingSourceCommitsNothing) {
  asio::io_context ioc;
  MemTier source;
  MemTier target;
  const std::string body = RandomBytes(600'000, 22);
  auto write = RunOn(ioc, source.BeginWrite(TierWriteOptions{.location = "src"}));
  ASSERT_TRUE(write.ok());
  ASSERT_TRUE(RunOn(ioc, (*write)->Append(body)).ok());
  auto stored = RunOn(ioc, (*write)->Commit());
  ASSERT_TRUE(stored.ok());
  auto open = [&] {
    auto reader = RunOn(ioc, source.Open("src", TierOpenOptions{}));
    EXPECT_TRUE(reader.ok());
    return std::shared_ptr<TierReader>(std::move(reader).value());
  };
  auto bad_crc = RunOn(ioc, target.PutFrom("dst", open(), {}, stored->crc64nvme ^ 1));
  ASSERT_FALSE(bad_crc.ok());
  EXPECT_EQ(bad_crc.error().code, ErrorCode::kCorruption) << bad_crc.error().message;
  // Damage past the first 256 KiB block: the write had begun when the read failed.
  ASSERT_TRUE(source.CorruptStored("src", 400'000));
  auto damaged = RunOn(ioc, target.PutFrom("dst", open(), {}, std::nullopt));
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code, ErrorCode::kCorruption) << damaged.error().message;
  auto usage = RunOn(ioc, target.Usage());
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->objects, 0u);
  EXPECT_EQ(target.open_writes(), 0u);
}

// ---- UpstreamTier specifics ----

using UpstreamTierTest = TierTest<UpstreamEnv>;

TEST_F(UpstreamTierTest, ReaderIsPinnedToTheObjectItOpened) {
  TierWriteOptions options = env_.Options();
  auto first = Put(tier(), RandomBytes(10'000, 13), 4'000, options);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->location, options.location);
  EXPECT_EQ(first->etag, testing::Md5Hex(RandomBytes(10'000, 13)));
  auto reader = Run(tier().Open(first->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  // Replaced behind the reader's back: the reader refuses the new bytes.
  auto second = Put(tier(), RandomBytes(10'000, 14), 4'000, options);
  ASSERT_TRUE(second.ok()) << second.error().message;
  std::vector<char> buf(1'000);
  auto n = Run((*reader)->ReadAsync(0, std::span<char>(buf)));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::kPreconditionFailed) << n.error().message;
  auto now = Get(tier(), first->location);
  ASSERT_TRUE(now.ok()) << now.error().message;
  EXPECT_TRUE(*now == RandomBytes(10'000, 14));
}

TEST_F(UpstreamTierTest, LocationsAreBucketSlashKey) {
  for (const std::string bad : {"", "no-slash", "/key", "bucket/"}) {
    TierWriteOptions options;
    options.location = bad;
    auto write = Run(tier().BeginWrite(options));
    ASSERT_FALSE(write.ok()) << bad;
    EXPECT_EQ(write.error().code, ErrorCode::kInvalidArgument);
    auto opened = Run(tier().Open(bad, TierOpenOptions{}));
    ASSERT_FALSE(opened.ok()) << bad;
    EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
  }
  // A bucket that does not exist holds nothing: not found, and removing succeeds.
  auto opened = Run(tier().Open("no-such-bucket-here/key", TierOpenOptions{}));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(Run(tier().Remove("no-such-bucket-here/key", "")).ok());
}

// A reader of `bytes` that fails every read from `fail_from` on.
class FailingReader final : public TierReader {
 public:
  FailingReader(std::string bytes, std::uint64_t fail_from)
      : bytes_(std::move(bytes)), fail_from_(fail_from) {
    info_.size = bytes_.size();
  }
  std::uint64_t size() const override { return bytes_.size(); }
  const TierObjectInfo& info() const override { return info_; }
  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    if (offset >= fail_from_) {
      co_return Error(ErrorCode::kCorruption, "damaged source");
    }
    const std::size_t n = std::min<std::size_t>(buf.size(), bytes_.size() - offset);
    std::copy_n(bytes_.data() + offset, n, buf.data());
    co_return n;
  }

 private:
  std::string bytes_;
  std::uint64_t fail_from_;
  TierObjectInfo info_;
};

// In a versioned upstream bucket, removing the key makes a delete marker, named in the
// result; removing a version by id removes just that version.
TEST_F(UpstreamTierTest, RemoveInAVersionedBucketMakesAMarkerOrRemovesOneVersion) {
  auto& client = env_.upstream->Client(ioc_.get_executor());
  ASSERT_TRUE(Run(client.PutBucketVersioning(env_.bucket, "Enabled")).ok());
  TierWriteOptions options = env_.Options();
  auto first = Put(tier(), "first", 100, options);
  auto second = Put(tier(), "second", 100, options);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_FALSE(first->version_id.empty());
  ASSERT_NE(first->version_id, second->version_id);
  auto one = Run(tier().Remove(options.location, second->version_id));
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_TRUE(one->marker_version_id.empty());
  auto now = Get(tier(), options.location);
  ASSERT_TRUE(now.ok()) << now.error().message;
  EXPECT_EQ(*now, "first");  // the older version is current again
  auto marker = Run(tier().Remove(options.location, ""));
  ASSERT_TRUE(marker.ok()) << marker.error().message;
  EXPECT_FALSE(marker->marker_version_id.empty());
  EXPECT_NE(marker->marker_version_id, first->version_id);
  auto gone = Run(tier().Open(options.location, TierOpenOptions{}));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

// A pinned open reads the object it names or nothing: another ETag is refused, and in a
// versioned bucket an older version is read by its id.
TEST_F(UpstreamTierTest, OpenIsPinnedByETagAndVersion) {
  auto& client = env_.upstream->Client(ioc_.get_executor());
  ASSERT_TRUE(Run(client.PutBucketVersioning(env_.bucket, "Enabled")).ok());
  TierWriteOptions options = env_.Options();
  auto first = Put(tier(), "first bytes", 100, options);
  auto second = Put(tier(), "second", 100, options);
  ASSERT_TRUE(first.ok() && second.ok());
  auto stale = Run(tier().Open(options.location, TierOpenOptions{.if_match = first->etag}));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::kPreconditionFailed) << stale.error().message;
  auto old = Run(tier().Open(
      options.location, TierOpenOptions{.if_match = first->etag, .version_id = first->version_id}));
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ((*old)->info().version_id, first->version_id);
  EXPECT_EQ((*old)->info().content_type, "application/x-test");
  std::string bytes((*old)->size(), '\0');
  auto n = Run((*old)->ReadAsync(0, std::span<char>(bytes)));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(bytes.substr(0, *n), "first bytes");
}

TEST_F(UpstreamTierTest, PutFromCopiesAnotherTiersReader) {
  MemTier mem;
  const std::string body = RandomBytes(600'000, 15);
  auto stored = Put(mem, body, 100'000, TierWriteOptions{});
  ASSERT_TRUE(stored.ok());
  auto reader = Run(mem.Open(stored->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok());
  const std::string location = env_.Options().location;
  auto put =
      Run(env_.tier->PutFrom(location, std::shared_ptr<TierReader>(std::move(reader).value()),
                             {{"Content-Type", "application/x-test"}}, stored->crc64nvme));
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->location, location);
  EXPECT_EQ(put->size, body.size());
  EXPECT_EQ(put->crc64nvme, Crc64Nvme(0, body));
  EXPECT_EQ(put->etag, testing::Md5Hex(body));
  auto got = Get(tier(), location);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == body);
}

TEST_F(UpstreamTierTest, PutFromAFailingSourceStoresNothing) {
  const std::string body = RandomBytes(600'000, 16);
  const std::string location = env_.Options().location;
  // Past the client's first 256 KiB block: the PUT has started when the source fails.
  auto put = Run(env_.tier->PutFrom(location, std::make_shared<FailingReader>(body, 300'000), {},
                                    Crc64Nvme(0, body)));
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kCorruption);
  auto opened = Run(tier().Open(location, TierOpenOptions{}));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
}

TEST_F(UpstreamTierTest, PutFromRefusesBytesThatDoNotMatchTheirCrc) {
  MemTier mem;
  const std::string body = RandomBytes(10'000, 17);
  auto stored = Put(mem, body, 100'000, TierWriteOptions{});
  ASSERT_TRUE(stored.ok());
  auto reader = Run(mem.Open(stored->location, TierOpenOptions{}));
  ASSERT_TRUE(reader.ok());
  auto put = Run(env_.tier->PutFrom(env_.Options().location,
                                    std::shared_ptr<TierReader>(std::move(reader).value()), {},
                                    stored->crc64nvme ^ 1));
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kCorruption) << put.error().message;
}

}  // namespace
}  // namespace strata::storage
