#include "storage/peer/rdma_buffer_pool.h"

#include <cstdlib>
#include <utility>

#include "storage/crc64nvme.h"

namespace strata::storage::peer {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxChunks = 65536;

}  // namespace

ChunkLease::ChunkLease(ChunkLease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      slot_(other.slot_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

ChunkLease& ChunkLease::operator=(ChunkLease&& other) noexcept {
  if (this != &other) {
    Reset();
    pool_ = std::exchange(other.pool_, nullptr);
    slot_ = other.slot_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void ChunkLease::Reset() {
  if (pool_ != nullptr) {
    pool_->Return(slot_);
    pool_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }
}

std::size_t ChunkLease::capacity() const { return pool_ != nullptr ? pool_->chunk_bytes() : 0; }

void ChunkLease::set_size(std::size_t size) {
  if (size > capacity()) {
    std::abort();  // a caller's bug, never outside input: the slot's bounds are the pool's
  }
  size_ = size;
}

std::uint32_t ChunkLease::lkey() const { return pool_ != nullptr ? pool_->lkey() : 0; }
std::uint32_t ChunkLease::rkey() const { return pool_ != nullptr ? pool_->rkey() : 0; }

ReadDescriptor ChunkLease::Describe(std::uint64_t sequence) const {
  ReadDescriptor d;
  d.addr = addr();
  d.rkey = rkey();
  d.length = static_cast<std::uint32_t>(size_);
  d.crc = Crc64Nvme(0, bytes());
  d.sequence = sequence;
  return d;
}

Result<std::unique_ptr<RdmaBufferPool>> RdmaBufferPool::Make(MemoryRegistrar& registrar,
                                                             std::size_t chunk_count,
                                                             std::size_t chunk_bytes,
                                                             std::uint32_t credits) {
  if (chunk_bytes == 0 || chunk_bytes % kPage != 0 || chunk_bytes > kMaxPeerChunk ||
      chunk_count == 0 || chunk_count > kMaxChunks || credits == 0) {
    return Error(ErrorCode::kInvalidArgument, "rdma buffer pool: " + std::to_string(chunk_count) +
                                                  " chunks of " + std::to_string(chunk_bytes) +
                                                  " bytes, " + std::to_string(credits) +
                                                  " credits");
  }
  void* memory = std::aligned_alloc(kPage, chunk_count * chunk_bytes);
  if (memory == nullptr) {
    return Error(ErrorCode::kNoSpace, "rdma buffer pool: cannot allocate " +
                                          std::to_string(chunk_count * chunk_bytes) + " bytes");
  }
  auto pool = std::unique_ptr<RdmaBufferPool>(
      new RdmaBufferPool(registrar, static_cast<char*>(memory), chunk_count, chunk_bytes, credits));
  auto registered = registrar.Register(memory, chunk_count * chunk_bytes);
  if (!registered.ok()) {
    return std::move(registered).error();  // the pool frees the memory, deregisters nothing
  }
  pool->registration_ = *registered;
  pool->registered_ = true;
  return pool;
}

RdmaBufferPool::RdmaBufferPool(MemoryRegistrar& registrar, char* base, std::size_t chunk_count,
                               std::size_t chunk_bytes, std::uint32_t credits)
    : registrar_(registrar),
      base_(base),
      chunk_count_(chunk_count),
      chunk_bytes_(chunk_bytes),
      credits_(credits) {
  free_.reserve(chunk_count);
  for (std::size_t i = chunk_count; i > 0; --i) {
    free_.push_back(static_cast<std::uint32_t>(i - 1));
  }
}

RdmaBufferPool::~RdmaBufferPool() {
  if (free_.size() != chunk_count_) {
    std::abort();  // a lease outlives its pool: see the header
  }
  if (registered_) {
    registrar_.Deregister(registration_);
  }
  std::free(base_);
}

Result<ChunkLease> RdmaBufferPool::Lease() {
  if (free_.empty()) {
    return Error(ErrorCode::kUnavailable,
                 "rdma buffer pool: all " + std::to_string(chunk_count_) + " chunks are leased",
                 true);
  }
  const std::uint32_t slot = free_.back();
  free_.pop_back();
  return ChunkLease(this, slot, base_ + std::size_t{slot} * chunk_bytes_);
}

void RdmaBufferPool::Return(std::uint32_t slot) { free_.push_back(slot); }

RdmaRegion RdmaBufferPool::Region() const {
  RdmaRegion r;
  r.addr = reinterpret_cast<std::uintptr_t>(base_);
  r.rkey = registration_.rkey;
  r.chunk_bytes = static_cast<std::uint32_t>(chunk_bytes_);
  r.chunk_count = static_cast<std::uint32_t>(chunk_count_);
  r.credits = credits_;
  return r;
}

}  // namespace strata::storage::peer
