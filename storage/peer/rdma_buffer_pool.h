// RdmaBufferPool: the RDMA peer transport's chunk buffers (private to storage/). A fixed
// number of fixed-size slots (kMaxPeerChunk each by default) in one page-aligned
// allocation, made once and registered once with the device (MemoryRegistrar) as one
// memory region, so every slot shares the region's lkey and rkey and the peer can be told
// the region's bounds (RdmaRegion, storage/peer/rdma_wire.h). The pool never grows.
//
// A slot is leased (ChunkLease, RAII: the slot returns to the pool when the lease is
// destroyed) to hold a chunk being written for the peer to READ, or to receive a chunk
// this side READs. Exhaustion: Lease returns kUnavailable (retryable) at once; it never
// waits and never allocates. The transport sizes the pool so that each connection it
// admits has its credits' worth of slots in each direction, and refuses connections
// beyond that, so a call never meets an empty pool in the middle of a stream.
//
// Not thread-safe: one pool per transport, used on its executor's thread. Every lease must
// be returned before the pool is destroyed (the destructor aborts otherwise: a lease past
// it would point into freed, deregistered memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "storage/peer/rdma_wire.h"

namespace strata::storage::peer {

// How a pool's memory becomes visible to the device: ibv_reg_mr / ibv_dereg_mr in the
// transport (storage/peer/rdma_transport.cc), a recording fake in tests.
class MemoryRegistrar {
 public:
  struct Registration {
    std::uint32_t lkey = 0;
    std::uint32_t rkey = 0;
    void* handle = nullptr;  // the implementation's (an ibv_mr*), given back to Deregister
  };
  virtual ~MemoryRegistrar() = default;
  // Registers [addr, addr + length) for local writes and remote reads. kUnavailable (or
  // the device's error) when it cannot.
  virtual Result<Registration> Register(void* addr, std::size_t length) = 0;
  virtual void Deregister(const Registration& registration) = 0;
};

class RdmaBufferPool;

// One leased slot. Movable, not copyable; returns the slot when destroyed or Reset.
class ChunkLease {
 public:
  ChunkLease() = default;
  ChunkLease(ChunkLease&& other) noexcept;
  ChunkLease& operator=(ChunkLease&& other) noexcept;
  ChunkLease(const ChunkLease&) = delete;
  ChunkLease& operator=(const ChunkLease&) = delete;
  ~ChunkLease() { Reset(); }

  void Reset();
  bool valid() const { return pool_ != nullptr; }

  char* data() const { return data_; }
  std::size_t capacity() const;
  // The bytes the slot holds (set by the writer of the slot; at most capacity()).
  std::size_t size() const { return size_; }
  void set_size(std::size_t size);
  std::string_view bytes() const { return {data_, size_}; }
  std::uint32_t slot() const { return slot_; }
  std::uint64_t addr() const { return reinterpret_cast<std::uintptr_t>(data_); }
  std::uint32_t lkey() const;
  std::uint32_t rkey() const;
  // The descriptor a peer needs to READ this slot's size() bytes: address, rkey, length,
  // the bytes' CRC64NVME and `sequence`.
  ReadDescriptor Describe(std::uint64_t sequence) const;

 private:
  friend class RdmaBufferPool;
  ChunkLease(RdmaBufferPool* pool, std::uint32_t slot, char* data)
      : pool_(pool), slot_(slot), data_(data) {}

  RdmaBufferPool* pool_ = nullptr;
  std::uint32_t slot_ = 0;
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

class RdmaBufferPool {
 public:
  // `registrar` must outlive the pool. kInvalidArgument for a chunk size not a multiple of
  // 4 KiB or over kMaxPeerChunk, or a count of 0 or over 65536; kNoSpace when the memory
  // cannot be had; the registrar's error when it refuses.
  static Result<std::unique_ptr<RdmaBufferPool>> Make(MemoryRegistrar& registrar,
                                                      std::size_t chunk_count,
                                                      std::size_t chunk_bytes = kMaxPeerChunk,
                                                      std::uint32_t credits = 4);
  ~RdmaBufferPool();
  RdmaBufferPool(const RdmaBufferPool&) = delete;
  RdmaBufferPool& operator=(const RdmaBufferPool&) = delete;

  // A free slot, size() 0; kUnavailable (retryable) when every slot is leased.
  Result<ChunkLease> Lease();

  std::size_t chunk_bytes() const { return chunk_bytes_; }
  std::size_t chunk_count() const { return chunk_count_; }
  std::size_t available() const { return free_.size(); }
  std::uint32_t lkey() const { return registration_.lkey; }
  std::uint32_t rkey() const { return registration_.rkey; }
  // What this side announces to its peer.
  RdmaRegion Region() const;

 private:
  friend class ChunkLease;
  RdmaBufferPool(MemoryRegistrar& registrar, char* base, std::size_t chunk_count,
                 std::size_t chunk_bytes, std::uint32_t credits);
  void Return(std::uint32_t slot);

  MemoryRegistrar& registrar_;
  char* base_;
  std::size_t chunk_count_;
  std::size_t chunk_bytes_;
  std::uint32_t credits_;
  MemoryRegistrar::Registration registration_;
  bool registered_ = false;
  std::vector<std::uint32_t> free_;  // a stack of free slots; reserved up front, never grows
};

}  // namespace strata::storage::peer
