// RdmaConnection: one RC queue pair of RdmaTransport and its RdmaSession (private to
// storage/). NOT RUN ON HARDWARE: see storage/peer/rdma_transport.h.
//
// Owns the rdma_cm id's queue pair, a completion queue with its completion channel (whose
// fd Asio watches), and max_sends_in_flight() RECV buffers and as many SEND slots of
// kRdmaMaxMessage bytes in one registered region. Pump() waits for completions and feeds
// them to the session; the session's actions are carried out at once (SENDs and READs
// posted) or kept for the call's coroutine (requests, responses, chunks, ends, errors).
// One coroutine at a time, on the transport's executor.
#pragma once

#include <rdma/rdma_cma.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "storage/peer/rdma_buffer_pool.h"
#include "storage/peer/rdma_session.h"

namespace strata::storage::peer {

class RdmaConnection {
 public:
  // `id`: connected or about to be; the connection owns it from here (rdma_destroy_id).
  RdmaConnection(boost::asio::any_io_executor executor, rdma_cm_id* id, ibv_pd* pd,
                 RdmaBufferPool& pool, RdmaSession::Options options);
  ~RdmaConnection();
  RdmaConnection(const RdmaConnection&) = delete;
  RdmaConnection& operator=(const RdmaConnection&) = delete;

  // The CQ, the QP (RC) and the message buffers, RECVs posted: before connect / accept.
  Result<void> Setup();
  // Waits for at least one completion (or the connection's end) and handles what came.
  boost::asio::awaitable<Result<void>> Pump();
  // Carries out `actions` (SENDs and READs posted, the rest kept).
  void Execute(RdmaSession::Actions actions);
  // Posts nothing more; wakes a Pump.
  void Shutdown();

  RdmaSession& session() { return *session_; }
  rdma_cm_id* id() { return id_; }

  // The membership epoch the session checks the peer's requests against (the acceptor).
  std::uint64_t epoch = 0;
  // What the session delivered, for the call's coroutine.
  std::deque<PeerRequest> requests;
  std::optional<PeerResponse> response;
  std::deque<std::pair<std::uint64_t, ChunkLease>> chunks;  // read, verified, unconsumed
  bool stream_ended = false;
  bool call_done = false;
  std::optional<Error> call_error;
  std::optional<Error> closed;
  std::deque<std::pair<std::uint64_t, ChunkLease>> lent;  // this side's slots the peer reads

 private:
  void PostRecv(std::size_t slot);
  void PostSend(const std::string& message);
  void PostRead(const ReadDescriptor& d);
  void Handle(const ibv_wc& wc);
  void Fail(Error error);

  boost::asio::any_io_executor executor_;
  rdma_cm_id* id_;
  ibv_pd* pd_;
  RdmaBufferPool& pool_;
  std::unique_ptr<RdmaSession> session_;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<char> buffers_;  // RECV buffers then SEND slots, kRdmaMaxMessage each
  std::size_t slots_ = 0;      // of each kind
  std::size_t next_send_ = 0;
  std::deque<std::pair<std::uint64_t, ChunkLease>> reading_;  // READs posted, in order
  std::optional<boost::asio::posix::stream_descriptor> fd_;
  bool qp_ = false;
};

}  // namespace strata::storage::peer
