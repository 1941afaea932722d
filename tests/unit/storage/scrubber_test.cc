#include "storage/engine/scrubber.h"

#include <gtest/gtest.h>

#include <chrono>

#include "storage/local/chunk_trailer.h"
#include "tests/unit/storage/test_bytes.h"
#include "tests/unit/storage/test_repair.h"

namespace strata::storage {
namespace {

using testing::RandomBytes;

constexpr std::uint64_t kChunk = kChunkSize;

class ScrubberTest : public testing::RepairTest {
 protected:
  ScrubConfig Unthrottled() const {
    ScrubConfig c;
    c.bytes_per_second = 0;
    return c;
  }
};

TEST_F(ScrubberTest, ACleanPassCountsEveryChunkAndByte) {
  const std::string a = RandomBytes(3 * kChunk + 1, 1);
  const std::string b = RandomBytes(10, 2);
  Put("a", a);
  Put("b", b);
  Scrubber scrubber(Unthrottled(), *index_, *store_, *repairer_);
  scrubber.RunPass();
  const auto s = scrubber.stats();
  EXPECT_EQ(s.passes_completed, 1u);
  EXPECT_FALSE(s.running);
  EXPECT_EQ(s.objects, 2u);
  EXPECT_EQ(s.bytes, a.size() + b.size());
  EXPECT_EQ(s.chunks, 4u + 1u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.pass_objects_total, 2u);
  EXPECT_EQ(s.pass_objects_done, 2u);
  EXPECT_GT(s.last_finished_ms, 0);
  EXPECT_EQ(repairer_->calls, 0);
}

// The record case flips the recorded CRC64NVME with PutObject of the edited record (same
// version id and placement, so nothing is freed): ChangeVersion, which an earlier version
// of this test used, writes back only placements, class and restore state by design, so
// that edit never reached the index and the scrubber rightly found nothing.
TEST_F(ScrubberTest, DamageInDataTrailerAndRecordIsFoundAndRepairedWhereItCanBe) {
  const std::string body = RandomBytes(5 * kChunk + 7, 3);
  const auto data = Put("data", body);
  const auto trailer = Put("trailer", body);
  const auto dirty = Put("dirty", body, /*clean=*/false);
  const auto record = Put("record", body);
  Put("fine", body);
  Flip(data, 4 * kChunk + 1);
  Flip(trailer, body.size() + 8 * 2);  // chunk 2's CRC
  Flip(dirty, 3);
  // The index's view: the recorded CRC64NVME no longer matches the (intact) bytes.
  metadata::ObjectRecord edited = record;
  bool flipped = false;
  for (auto& [name, value] : edited.checksums) {
    if (name == "CRC64NVME") {
      value[0] = value[0] == 'A' ? 'B' : 'A';
      flipped = true;
    }
  }
  ASSERT_TRUE(flipped);
  auto replaced = index_->PutObject(edited);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  ASSERT_NE(Head("record").checksums, record.checksums);

  Scrubber scrubber(Unthrottled(), *index_, *store_, *repairer_);
  scrubber.RunPass();
  auto s = scrubber.stats();
  EXPECT_EQ(s.objects, 5u);
  EXPECT_EQ(s.errors, 4u);
  EXPECT_EQ(s.repaired, 2u);       // data, trailer
  EXPECT_EQ(s.unrepairable, 1u);   // dirty
  EXPECT_EQ(s.repair_failed, 1u);  // record: no copy matches what the index says
  EXPECT_EQ(repairer_->calls, 4);
  for (const auto* r : {&data, &trailer}) {
    EXPECT_FALSE(std::filesystem::exists(DataFile(*r)));
    EXPECT_NE(Head(r->key.str()).placements.front().extents.front().location,
              r->placements.front().extents.front().location);
  }

  // The next pass finds only what could not be repaired.
  scrubber.RunPass();
  s = scrubber.stats();
  EXPECT_EQ(s.passes_completed, 2u);
  EXPECT_EQ(s.errors, 4u + 2u);
  EXPECT_EQ(s.repaired, 2u);
}

// A reader trusts the footer the tier's open-file cache read at open; the scrubber reads
// every trailer from the disk, so a flip in the footer of a cached file is found too. The
// trailer CRC's own bytes are the case nothing else would see (the other fields are in
// the bytes it covers).
TEST_F(ScrubberTest, FooterDamageInACachedFileIsFound) {
  const std::string body = RandomBytes(3 * kChunk + 5, 6);
  const std::uint64_t footer = body.size() + 8 * 4;
  const auto crc = Put("crc", body);
  const auto magic = Put("magic", body);
  const auto length = Put("length", body);
  for (const auto* r : {&crc, &magic, &length}) {  // now in the open-file cache
    auto reader = store_->OpenObject(*r);
    ASSERT_TRUE(reader.ok());
    std::string got(body.size(), '\0');
    ASSERT_TRUE((*reader)->Read(0, std::span<char>(got.data(), got.size())).ok());
  }
  Flip(crc, footer + 32 + 5);
  Flip(magic, footer + 1);
  Flip(length, footer + 16);

  Scrubber scrubber(Unthrottled(), *index_, *store_, *repairer_);
  scrubber.RunPass();
  const auto s = scrubber.stats();
  EXPECT_EQ(s.errors, 3u);
  EXPECT_EQ(s.repaired, 3u);
  for (const auto* r : {&crc, &magic, &length}) {
    EXPECT_FALSE(std::filesystem::exists(DataFile(*r))) << r->key.str();
    auto reader = store_->OpenObject(Head(r->key.str()));
    ASSERT_TRUE(reader.ok());
    std::string got(body.size(), '\0');
    auto n = (*reader)->Read(0, std::span<char>(got.data(), got.size()));
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(got.substr(0, *n), body.substr(0, *n));
  }
}

// The read path itself: a reader opened after the flip, from the cache, fails rather than
// trusting the cached footer (no extra I/O: the footer comes with the CRCs it reads).
TEST_F(ScrubberTest, AReaderOfACachedFileSeesItsTrailerCrcFlipped) {
  const std::string body = RandomBytes(2 * kChunk, 7);
  const auto r = Put("k", body);
  std::string got(body.size(), '\0');
  {
    auto reader = store_->OpenObject(r);
    ASSERT_TRUE(reader.ok());
    ASSERT_TRUE((*reader)->Read(0, std::span<char>(got.data(), got.size())).ok());
  }
  Flip(r, body.size() + 8 * 2 + 32);
  auto reader = store_->OpenObject(r);
  ASSERT_TRUE(reader.ok());  // from the cache: the footer it holds is the old one
  auto n = (*reader)->Read(0, std::span<char>(got.data(), got.size()));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::kCorruption);
}

TEST_F(ScrubberTest, APassKeepsToTheRate) {
  Put("a", RandomBytes(512 * 1024, 4));
  ScrubConfig c;
  c.bytes_per_second = 2 << 20;  // 512 KiB: a quarter of a second at least
  Scrubber scrubber(c, *index_, *store_, *repairer_);
  const auto began = std::chrono::steady_clock::now();
  scrubber.RunPass();
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(240));
  EXPECT_EQ(scrubber.stats().bytes, 512u * 1024u);
}

TEST_F(ScrubberTest, StartPassRunsOneOnTheScrubbersThread) {
  Put("a", RandomBytes(1000, 5));
  Scrubber scrubber(Unthrottled(), *index_, *store_, *repairer_);
  scrubber.Start();
  EXPECT_TRUE(scrubber.StartPass());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (scrubber.stats().passes_completed == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(scrubber.stats().passes_completed, 1u);
  EXPECT_EQ(scrubber.stats().objects, 1u);
  scrubber.Stop();
}

}  // namespace
}  // namespace strata::storage
