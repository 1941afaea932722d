// The RDMA transport's chunk buffers (storage/peer/rdma_buffer_pool.*), with a registrar
// that records its calls in place of ibv_reg_mr / ibv_dereg_mr.
#include "storage/peer/rdma_buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "storage/crc64nvme.h"

namespace strata::storage::peer {
namespace {

class RecordingRegistrar final : public MemoryRegistrar {
 public:
  Result<Registration> Register(void* addr, std::size_t length) override {
    registered.push_back({addr, length});
    if (refuse) {
      return Error(ErrorCode::kUnavailable, "no device");
    }
    return Registration{.lkey = 11, .rkey = 22, .handle = &token};
  }
  void Deregister(const Registration& registration) override {
    deregistered.push_back(registration.handle);
  }

  struct Call {
    void* addr;
    std::size_t length;
  };
  std::vector<Call> registered;
  std::vector<void*> deregistered;
  bool refuse = false;
  int token = 0;
};

TEST(RdmaBufferPoolTest, RegistersOncePageAlignedAndDeregistersAtTheEnd) {
  RecordingRegistrar registrar;
  {
    auto pool = RdmaBufferPool::Make(registrar, 3, 64 * 1024, 2);
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    ASSERT_EQ(registrar.registered.size(), 1u);
    EXPECT_EQ(registrar.registered[0].length, 3u * 64 * 1024);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(registrar.registered[0].addr) % 4096, 0u);
    const RdmaRegion region = (*pool)->Region();
    EXPECT_EQ(region.addr, reinterpret_cast<std::uintptr_t>(registrar.registered[0].addr));
    EXPECT_EQ(region.rkey, 22u);
    EXPECT_EQ(region.chunk_bytes, 64u * 1024);
    EXPECT_EQ(region.chunk_count, 3u);
    EXPECT_EQ(region.credits, 2u);
    EXPECT_TRUE(registrar.deregistered.empty());
  }
  ASSERT_EQ(registrar.deregistered.size(), 1u);
  EXPECT_EQ(registrar.deregistered[0], &registrar.token);
}

TEST(RdmaBufferPoolTest, RefusesBadShapesAndARegistrarThatFails) {
  RecordingRegistrar registrar;
  EXPECT_EQ(RdmaBufferPool::Make(registrar, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(RdmaBufferPool::Make(registrar, 1, 1000).ok());
  EXPECT_FALSE(RdmaBufferPool::Make(registrar, 1, kMaxPeerChunk + 4096).ok());
  EXPECT_FALSE(RdmaBufferPool::Make(registrar, 65537, 4096).ok());
  EXPECT_FALSE(RdmaBufferPool::Make(registrar, 1, 4096, 0).ok());
  EXPECT_TRUE(registrar.registered.empty());
  registrar.refuse = true;
  EXPECT_EQ(RdmaBufferPool::Make(registrar, 2, 4096).error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(registrar.deregistered.empty());  // nothing was registered
}

TEST(RdmaBufferPoolTest, LeasesAreBoundedDistinctAndComeBack) {
  RecordingRegistrar registrar;
  auto made = RdmaBufferPool::Make(registrar, 4, 8192);
  ASSERT_TRUE(made.ok());
  RdmaBufferPool& pool = **made;
  const RdmaRegion region = pool.Region();
  std::vector<ChunkLease> leases;
  std::set<std::uint64_t> addrs;
  for (int i = 0; i < 4; ++i) {
    auto lease = pool.Lease();
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(lease->capacity(), 8192u);
    EXPECT_EQ(lease->lkey(), 11u);
    EXPECT_EQ(lease->rkey(), 22u);
    EXPECT_EQ(lease->size(), 0u);
    addrs.insert(lease->addr());
    leases.push_back(std::move(lease).value());
  }
  EXPECT_EQ(addrs.size(), 4u);
  EXPECT_EQ(pool.available(), 0u);
  // Exhausted: kUnavailable at once, retryable; the pool does not grow.
  auto none = pool.Lease();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(none.error().retryable);
  EXPECT_EQ(registrar.registered.size(), 1u);

  // A lease describes its bytes for the peer's READ, inside the announced region.
  ChunkLease& lease = leases[2];
  std::memcpy(lease.data(), "chunk bytes", 11);
  lease.set_size(11);
  const ReadDescriptor d = lease.Describe(5);
  EXPECT_EQ(d.addr, lease.addr());
  EXPECT_EQ(d.rkey, 22u);
  EXPECT_EQ(d.length, 11u);
  EXPECT_EQ(d.crc, Crc64Nvme(0, "chunk bytes"));
  EXPECT_EQ(d.sequence, 5u);
  EXPECT_TRUE(region.Check(d).ok());

  // Moves carry the slot; destruction and Reset return it.
  ChunkLease moved = std::move(leases[0]);
  EXPECT_FALSE(leases[0].valid());
  EXPECT_TRUE(moved.valid());
  EXPECT_EQ(pool.available(), 0u);
  moved.Reset();
  EXPECT_EQ(pool.available(), 1u);
  leases.clear();
  EXPECT_EQ(pool.available(), 4u);
  auto again = pool.Lease();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 0u);
}

TEST(RdmaBufferPoolTest, MoveAssignmentReturnsTheSlotItReplaces) {
  RecordingRegistrar registrar;
  auto made = RdmaBufferPool::Make(registrar, 2, 4096);
  ASSERT_TRUE(made.ok());
  ChunkLease a = std::move((*made)->Lease()).value();
  ChunkLease b = std::move((*made)->Lease()).value();
  EXPECT_EQ((*made)->available(), 0u);
  a = std::move(b);
  EXPECT_EQ((*made)->available(), 1u);
  a = ChunkLease();
  EXPECT_EQ((*made)->available(), 2u);
}

}  // namespace
}  // namespace strata::storage::peer
