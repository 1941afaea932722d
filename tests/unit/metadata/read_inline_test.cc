#include "metadata/read_inline.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

#include "metadata/index.h"
#include "tests/unit/metadata/index_fixture.h"

namespace strata::metadata {
namespace {

namespace asio = boost::asio;

class ReadInlineTest : public testing::IndexFixture {
 protected:
  // 2,000 rows in the index's files, none of their blocks cached: written, then the index
  // reopened (the memtable is flushed on close; a new block cache is empty).
  void WriteColdRows() {
    BucketRecord bucket;
    bucket.name = BucketName("b");
    bucket.owner = "alice";
    ASSERT_TRUE(index_->CreateBucket(bucket).ok());
    for (int k = 0; k < kRows; ++k) {
      ObjectRecord o;
      o.bucket = bucket.name;
      o.key = ObjectKey(Key(k));
      o.version_id = VersionId("null");
      o.etag = std::string(32, 'a');
      o.size = 1;
      o.placements = {{"hot", {{"id-" + Key(k), o.size}}}};
      ASSERT_TRUE(index_->PutObject(o).ok());
    }
    Reopen();
  }
  static std::string Key(int k) { return "key" + std::to_string(k); }
  Result<ObjectRecord> Get(int k) { return index_->GetObject(BucketName("b"), ObjectKey(Key(k))); }

  static constexpr int kRows = 2000;
  asio::thread_pool* pool_ = nullptr;
  std::vector<bool> seen_active;
};

TEST_F(ReadInlineTest, AMemoryOnlyReadOfAnUncachedRowFailsAndSaysSo) {
  WriteColdRows();
  {
    MemoryOnlyReads memory_only;
    EXPECT_TRUE(MemoryOnlyReads::active());
    auto cold = Get(7);
    ASSERT_FALSE(cold.ok());
    EXPECT_EQ(cold.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(memory_only.needed_disk());
  }
  {
    MemoryOnlyReads memory_only;
    // A listing needs the same blocks.
    auto listed = index_->ListObjects(BucketName("b"), "", "", 10);
    ASSERT_FALSE(listed.ok());
    EXPECT_TRUE(memory_only.needed_disk());
  }
  EXPECT_FALSE(MemoryOnlyReads::active());
  ASSERT_TRUE(Get(7).ok());  // outside a scope the disk is read, and the block cached
  MemoryOnlyReads memory_only;
  auto warm = Get(7);
  ASSERT_TRUE(warm.ok()) << warm.error().message;
  EXPECT_EQ(warm->key.str(), Key(7));
  EXPECT_FALSE(memory_only.needed_disk());
}

TEST_F(ReadInlineTest, ScopesNestAndAnInnerMissIsTheOuterScopesToo) {
  {
    MemoryOnlyReads outer;
    {
      MemoryOnlyReads inner;
      EXPECT_TRUE(MemoryOnlyReads::active());
      MemoryOnlyReads::NoteDiskNeeded();
      EXPECT_TRUE(inner.needed_disk());
    }
    EXPECT_TRUE(MemoryOnlyReads::active());
    EXPECT_TRUE(outer.needed_disk());
  }
  EXPECT_FALSE(MemoryOnlyReads::active());
  MemoryOnlyReads next;
  EXPECT_FALSE(next.needed_disk());
}

TEST_F(ReadInlineTest, AReadThatNeedsTheDiskIsDoneOnThePoolAndCounted) {
  WriteColdRows();
  asio::io_context io;
  asio::thread_pool pool(1);
  // Runs one ReadInline of key k on `io` to its end.
  const auto read = [this, &io](int k) {
    std::optional<Result<ObjectRecord>> got;
    asio::co_spawn(
        io,
        [this, k, &got]() -> asio::awaitable<void> {
          got.emplace(co_await ReadInline(*pool_, [this, k] {
            // The first attempt runs on the I/O thread in a scope; the second on the pool.
            seen_active.push_back(MemoryOnlyReads::active());
            return Get(k);
          }));
        },
        asio::detached);
    // The read may wait on the pool, which holds no work of io's: keep io running.
    auto busy = asio::make_work_guard(io);
    io.restart();
    while (!got) {
      io.run_one();
    }
    return std::move(got).value();
  };
  pool_ = &pool;
  const InlineReadCounts before = ReadInlineCounts();
  auto first = read(11);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->key.str(), Key(11));
  EXPECT_EQ(seen_active, (std::vector<bool>{true, false}));
  InlineReadCounts after = ReadInlineCounts();
  EXPECT_EQ(after.pool - before.pool, 1u);
  EXPECT_EQ(after.memory - before.memory, 0u);
  // Cached now: read inline, once.
  seen_active.clear();
  ASSERT_TRUE(read(11).ok());
  EXPECT_EQ(seen_active, (std::vector<bool>{true}));
  after = ReadInlineCounts();
  EXPECT_EQ(after.memory - before.memory, 1u);
  pool.join();
}

}  // namespace
}  // namespace strata::metadata
