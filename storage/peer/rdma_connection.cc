#include "storage/peer/rdma_connection.h"

#include <fcntl.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

namespace strata::storage::peer {
namespace {

namespace asio = boost::asio;

// wr_id: the kind in the top byte, a RECV slot or a READ's sequence below.
constexpr std::uint64_t kRecv = 1ull << 56;
constexpr std::uint64_t kSend = 2ull << 56;
constexpr std::uint64_t kRead = 3ull << 56;
constexpr std::uint64_t kKindMask = 0xffull << 56;

Error VerbsError(const char* call) {
  return Error(ErrorCode::kUnavailable, std::string("rdma: ") + call + ": " + std::strerror(errno),
               true);
}

}  // namespace

RdmaConnection::RdmaConnection(asio::any_io_executor executor, rdma_cm_id* id, ibv_pd* pd,
                               RdmaBufferPool& pool, RdmaSession::Options options)
    : executor_(std::move(executor)),
      id_(id),
      pd_(pd),
      pool_(pool),
      session_(std::make_unique<RdmaSession>(std::move(options))) {}

RdmaConnection::~RdmaConnection() {
  if (fd_) {
    fd_->release();  // the descriptor is the channel's: ibv_destroy_comp_channel closes it
  }
  if (qp_) {
    rdma_destroy_qp(id_);
  }
  if (mr_ != nullptr) {
    ibv_dereg_mr(mr_);
  }
  if (cq_ != nullptr) {
    ibv_destroy_cq(cq_);
  }
  if (channel_ != nullptr) {
    ibv_destroy_comp_channel(channel_);
  }
  if (id_ != nullptr) {
    rdma_destroy_id(id_);
  }
}

Result<void> RdmaConnection::Setup() {
  slots_ = session_->max_sends_in_flight();
  channel_ = ibv_create_comp_channel(id_->verbs);
  if (channel_ == nullptr) {
    return VerbsError("ibv_create_comp_channel");
  }
  const int flags = fcntl(channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return VerbsError("fcntl(O_NONBLOCK)");
  }
  // RECVs, SENDs and READs: every work request of the connection completes here.
  const int depth = static_cast<int>(3 * slots_ + 2 * pool_.Region().credits + 4);
  cq_ = ibv_create_cq(id_->verbs, depth, nullptr, channel_, 0);
  if (cq_ == nullptr) {
    return VerbsError("ibv_create_cq");
  }
  ibv_qp_init_attr attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.send_cq = cq_;
  attr.recv_cq = cq_;
  attr.cap.max_send_wr = static_cast<std::uint32_t>(slots_ + 2 * pool_.Region().credits + 2);
  attr.cap.max_recv_wr = static_cast<std::uint32_t>(slots_);
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id_, pd_, &attr) != 0) {
    return VerbsError("rdma_create_qp");
  }
  qp_ = true;
  buffers_.assign(2 * slots_ * kRdmaMaxMessage, '\0');
  mr_ = ibv_reg_mr(pd_, buffers_.data(), buffers_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (mr_ == nullptr) {
    return VerbsError("ibv_reg_mr");
  }
  for (std::size_t i = 0; i < slots_; ++i) {
    PostRecv(i);
  }
  if (ibv_req_notify_cq(cq_, 0) != 0) {
    return VerbsError("ibv_req_notify_cq");
  }
  fd_.emplace(executor_, channel_->fd);
  return closed ? Result<void>(*closed) : Ok();
}

void RdmaConnection::Fail(Error error) {
  if (!closed) {
    closed = std::move(error);
  }
}

void RdmaConnection::PostRecv(std::size_t slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(buffers_.data() + slot * kRdmaMaxMessage);
  sge.length = kRdmaMaxMessage;
  sge.lkey = mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = kRecv | slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(id_->qp, &wr, &bad) != 0) {
    Fail(VerbsError("ibv_post_recv"));
  }
}

void RdmaConnection::PostSend(const std::string& message) {
  // The session never has more than slots_ SENDs in flight, so a slot is free.
  char* slot = buffers_.data() + (slots_ + next_send_) * kRdmaMaxMessage;
  next_send_ = (next_send_ + 1) % slots_;
  std::memcpy(slot, message.data(), message.size());
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(slot);
  sge.length = static_cast<std::uint32_t>(message.size());
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = kSend;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
    Fail(VerbsError("ibv_post_send(SEND)"));
  }
}

void RdmaConnection::PostRead(const ReadDescriptor& d) {
  auto lease = pool_.Lease();
  if (!lease.ok()) {
    Fail(std::move(lease).error());
    return;
  }
  ibv_sge sge{};
  sge.addr = lease->addr();
  sge.length = d.length;
  sge.lkey = lease->lkey();
  lease->set_size(d.length);
  ibv_send_wr wr{};
  wr.wr_id = kRead | d.sequence;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = d.addr;
  wr.wr.rdma.rkey = d.rkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
    Fail(VerbsError("ibv_post_send(RDMA_READ)"));
    return;
  }
  reading_.emplace_back(d.sequence, std::move(lease).value());
}

void RdmaConnection::Execute(RdmaSession::Actions actions) {
  for (auto& action : actions) {
    switch (action.act) {
      case RdmaSession::Act::kSend:
        PostSend(action.message);
        break;
      case RdmaSession::Act::kRead:
        PostRead(action.read);
        break;
      case RdmaSession::Act::kAuthenticated:
        break;
      case RdmaSession::Act::kRequest:
        requests.push_back(std::move(action.request));
        break;
      case RdmaSession::Act::kResponse:
        response = std::move(action.response);
        break;
      case RdmaSession::Act::kChunk:
        break;  // moved to `chunks` by Handle, which saw the READ complete
      case RdmaSession::Act::kStreamEnd:
        stream_ended = true;
        break;
      case RdmaSession::Act::kRelease:
        for (auto it = lent.begin(); it != lent.end(); ++it) {
          if (it->first == action.sequence) {
            lent.erase(it);
            break;
          }
        }
        break;
      case RdmaSession::Act::kCallDone:
        call_done = true;
        break;
      case RdmaSession::Act::kCallError:
        call_error = std::move(action.error);
        call_done = true;
        break;
      case RdmaSession::Act::kClose:
        Fail(action.error.value_or(Error(ErrorCode::kUnavailable, "rdma peer closed")));
        break;
    }
  }
}

void RdmaConnection::Handle(const ibv_wc& wc) {
  const std::uint64_t kind = wc.wr_id & kKindMask;
  const std::uint64_t low = wc.wr_id & ~kKindMask;
  if (kind == kSend) {
    Execute(session_->OnSendCompleted(wc.status == IBV_WC_SUCCESS));
    return;
  }
  if (kind == kRecv) {
    if (wc.status != IBV_WC_SUCCESS) {
      Fail(Error(ErrorCode::kUnavailable, "rdma: a RECV failed", true));
      return;
    }
    const char* at = buffers_.data() + low * kRdmaMaxMessage;
    Execute(session_->OnMessage(std::string_view(at, wc.byte_len), epoch));
    PostRecv(low);
    return;
  }
  if (reading_.empty() || reading_.front().first != low) {
    Fail(Error(ErrorCode::kInternal, "rdma: a READ completed that was not the oldest posted"));
    return;
  }
  auto [sequence, lease] = std::move(reading_.front());
  reading_.pop_front();
  if (wc.status != IBV_WC_SUCCESS) {
    Execute(session_->OnReadFailed(
        sequence, Error(ErrorCode::kUnavailable,
                        std::string("RDMA READ: ") + ibv_wc_status_str(wc.status), true)));
    return;
  }
  const std::string_view bytes = lease.bytes();
  auto actions = session_->OnReadCompleted(sequence, bytes);
  if (sequence != 0) {
    chunks.emplace_back(sequence, std::move(lease));
  }
  Execute(std::move(actions));
}

asio::awaitable<Result<void>> RdmaConnection::Pump() {
  while (!closed) {
    ibv_wc wcs[16];
    const int n = ibv_poll_cq(cq_, 16, wcs);
    if (n < 0) {
      Fail(VerbsError("ibv_poll_cq"));
      break;
    }
    for (int i = 0; i < n; ++i) {
      Handle(wcs[i]);
    }
    if (n > 0) {
      break;
    }
    boost::system::error_code ec;
    co_await fd_->async_wait(asio::posix::stream_descriptor::wait_read,
                             asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      Fail(Error(ErrorCode::kUnavailable, "rdma: stopping", true));
      break;
    }
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    if (ibv_get_cq_event(channel_, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
      if (ibv_req_notify_cq(cq_, 0) != 0) {
        Fail(VerbsError("ibv_req_notify_cq"));
      }
    }
  }
  if (closed) {
    co_return *closed;
  }
  co_return Ok();
}

void RdmaConnection::Shutdown() {
  Fail(Error(ErrorCode::kUnavailable, "rdma peer transport stopping", true));
  if (fd_) {
    boost::system::error_code ignored;
    fd_->cancel(ignored);
  }
}

}  // namespace strata::storage::peer
