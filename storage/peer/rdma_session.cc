#include "storage/peer/rdma_session.h"

#include <utility>

#include "storage/crc64nvme.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

Error Unexpected(const Frame& frame, const char* state) {
  return Error(ErrorCode::kCorruption,
               "rdma peer: a message of type " + std::to_string(static_cast<int>(frame.type)) +
                   " (request " + std::to_string(frame.request_id) + ") " + state);
}

Error Misuse(const char* what) {
  return Error(ErrorCode::kInvalidArgument, std::string("rdma peer session: ") + what);
}

// An error as a kError payload that fits one RECV buffer.
std::string ErrorPayload(const Error& error, bool closing, std::uint64_t epoch, bool stale) {
  Error shortened = error;
  shortened.message = shortened.message.substr(0, kRdmaMaxInline / 2);
  return EncodeError(shortened, closing, epoch, stale);
}

}  // namespace

RdmaSession::RdmaSession(Options options) : options_(std::move(options)) {
  self_.node = options_.node;
  self_.nonce = options_.nonce;
}

Result<void> RdmaSession::Usable() const {
  if (state_ == State::kClosed) {
    return closed_error_.value_or(Error(ErrorCode::kUnavailable, "rdma peer connection closed"));
  }
  return Ok();
}

bool RdmaSession::Send(FrameType type, std::uint16_t flags, std::string payload, Actions& out) {
  auto message =
      EncodeMessage(type, flags, type == FrameType::kHello ? 0 : request_id_, std::move(payload));
  if (!message.ok()) {
    Close(std::move(message).error(), out);
    return false;
  }
  if (sends_in_flight_ >= max_sends_in_flight()) {
    Close(Error(ErrorCode::kInternal, "rdma peer: more SENDs in flight than the protocol allows"),
          out);
    return false;
  }
  ++sends_in_flight_;
  out.push_back(Action{.act = Act::kSend, .message = std::move(message).value()});
  return true;
}

void RdmaSession::Close(Error error, Actions& out) {
  if (state_ == State::kClosed) {
    return;
  }
  state_ = State::kClosed;
  closed_error_ = error;
  writer_.reset();
  reader_.reset();
  Action close{.act = Act::kClose};
  close.error = std::move(error);
  out.push_back(std::move(close));
}

RdmaSession::Actions RdmaSession::Start(std::uint64_t epoch) {
  Actions out;
  if (options_.role == Role::kAccept || state_ != State::kHello || request_id_ != 0) {
    return out;
  }
  self_.epoch = epoch;
  auto hello = EncodeHello(self_);
  if (!hello.ok()) {
    Close(std::move(hello).error(), out);
    return out;
  }
  Send(FrameType::kHello, 0, std::move(hello).value(), out);
  return out;
}

RdmaSession::Actions RdmaSession::OnMessage(std::string_view message, std::uint64_t epoch) {
  Actions out;
  if (state_ == State::kClosed) {
    return out;
  }
  auto frame = DecodeMessage(message);
  if (!frame.ok()) {
    Close(std::move(frame).error(), out);
    return out;
  }
  const bool accept = options_.role == Role::kAccept;
  switch (state_) {
    case State::kHello:
      accept ? OnHello(*frame, epoch, out) : OnAnswer(*frame, out);
      break;
    case State::kProof:
      OnProof(*frame, out);
      break;
    case State::kIdle:
      if (accept && frame->type == FrameType::kRequest) {
        OnRequest(*frame, epoch, out);
      } else {
        Close(Unexpected(*frame, "between calls"), out);
      }
      break;
    case State::kCall:
      if (frame->request_id != request_id_) {
        Close(Unexpected(*frame, "of another call"), out);
      } else if (frame->type == FrameType::kData) {
        OnData(*frame, out);
      } else if (frame->type == FrameType::kCredit) {
        OnCredit(*frame, out);
      } else if (!accept && frame->type == FrameType::kResponse) {
        OnResponse(*frame, out);
      } else if (!accept && frame->type == FrameType::kError) {
        OnError(*frame, out);
      } else {
        Close(Unexpected(*frame, "during a call"), out);
      }
      break;
    case State::kClosed:
      break;
  }
  return out;
}

// The acceptor's handshake: the frames and the proof of ServerSession (TCP), one whole
// message at a time.
void RdmaSession::OnHello(const Frame& frame, std::uint64_t epoch, Actions& out) {
  if (frame.type != FrameType::kHello || frame.flags != 0 || frame.request_id != 0) {
    Close(Unexpected(frame, "before the hello"), out);
    return;
  }
  auto hello = DecodeHello(frame.payload);
  if (!hello.ok() || !hello->proof.empty()) {
    Close(Error(ErrorCode::kCorruption, "rdma peer: a malformed hello"), out);
    return;
  }
  peer_ = std::move(hello).value();
  if (peer_.epoch < epoch) {
    Error stale = StaleEpochError(self_.node, epoch, peer_.epoch);
    Send(FrameType::kError, 0, ErrorPayload(stale, true, epoch, true), out);
    Close(std::move(stale), out);
    return;
  }
  self_.epoch = epoch;
  Hello ack = self_;
  ack.proof = Proof(options_.secret, HandshakeRole::kAccept, self_, peer_);
  auto payload = EncodeHello(ack);
  if (!payload.ok()) {
    Close(std::move(payload).error(), out);
    return;
  }
  if (Send(FrameType::kHelloAck, 0, std::move(payload).value(), out)) {
    state_ = State::kProof;
  }
}

void RdmaSession::OnProof(const Frame& frame, Actions& out) {
  if (frame.type != FrameType::kHelloAck || frame.flags != 0 || frame.request_id != 0) {
    Close(Unexpected(frame, "instead of the caller's proof"), out);
    return;
  }
  auto claimed = DecodeHello(frame.payload);
  if (!claimed.ok() || claimed->node != peer_.node || claimed->epoch != peer_.epoch ||
      claimed->nonce != peer_.nonce ||
      !CheckProof(options_.secret, HandshakeRole::kConnect, *claimed, self_)) {
    Close(Error(ErrorCode::kAccessDenied,
                "rdma peer handshake: the caller's proof does not hold (another cluster "
                "secret, or a replayed answer)"),
          out);
    return;
  }
  state_ = State::kIdle;
  out.push_back(Action{.act = Act::kAuthenticated});
}

void RdmaSession::OnAnswer(const Frame& frame, Actions& out) {
  if (frame.type == FrameType::kError && frame.request_id == 0) {
    auto refused = DecodeError(frame.payload);
    Close(refused.ok() ? std::move(refused->error) : std::move(refused).error(), out);
    return;
  }
  if (frame.type != FrameType::kHelloAck || frame.flags != 0 || frame.request_id != 0) {
    Close(Unexpected(frame, "instead of the answer to the hello"), out);
    return;
  }
  auto answer = DecodeHello(frame.payload);
  if (!answer.ok()) {
    Close(std::move(answer).error(), out);
    return;
  }
  if (!CheckProof(options_.secret, HandshakeRole::kAccept, *answer, self_)) {
    Close(Error(ErrorCode::kAccessDenied,
                "rdma peer handshake: the peer's proof does not hold (another cluster secret?)"),
          out);
    return;
  }
  peer_ = std::move(answer).value();
  Hello reply = self_;
  reply.proof = Proof(options_.secret, HandshakeRole::kConnect, self_, peer_);
  auto payload = EncodeHello(reply);
  if (!payload.ok()) {
    Close(std::move(payload).error(), out);
    return;
  }
  if (Send(FrameType::kHelloAck, 0, std::move(payload).value(), out)) {
    state_ = State::kIdle;
    out.push_back(Action{.act = Act::kAuthenticated});
  }
}

void RdmaSession::OnRequest(const Frame& frame, std::uint64_t epoch, Actions& out) {
  if (frame.flags != 0 || frame.request_id <= request_id_) {
    Close(Unexpected(frame, "instead of a new request"), out);
    return;
  }
  auto decoded = DecodeRdmaRequest(frame.payload);
  if (!decoded.ok()) {
    Close(std::move(decoded).error(), out);
    return;
  }
  request_id_ = frame.request_id;
  if (decoded->epoch < epoch) {
    Error stale = StaleEpochError(self_.node, epoch, decoded->epoch);
    Send(FrameType::kError, 0, ErrorPayload(stale, true, epoch, true), out);
    Close(std::move(stale), out);
    return;
  }
  if (decoded->remote) {
    if (auto in_region = options_.peer.Check(*decoded->remote); !in_region.ok()) {
      Close(std::move(in_region).error(), out);
      return;
    }
  }
  state_ = State::kCall;
  answered_ = false;
  end_delivered_ = false;
  incoming_stream_ = decoded->request.has_stream;
  outgoing_stream_ = false;
  payload_lent_ = false;
  writer_.reset();
  reader_.reset();
  if (incoming_stream_) {
    reader_.emplace(options_.credits, options_.peer);
  }
  if (decoded->remote) {
    payload_read_ = decoded->remote;
    pending_request_ = std::move(decoded->request);
    out.push_back(Action{.act = Act::kRead, .read = *payload_read_});
    return;
  }
  out.push_back(Action{.act = Act::kRequest, .request = std::move(decoded->request)});
}

void RdmaSession::OnResponse(const Frame& frame, Actions& out) {
  if (answered_ || frame.flags != 0 || (writer_ && !writer_->closed())) {
    Close(Unexpected(frame, "before the request's stream ended, or twice"), out);
    return;
  }
  auto decoded = DecodeRdmaResponse(frame.payload);
  if (!decoded.ok()) {
    Close(std::move(decoded).error(), out);
    return;
  }
  if (decoded->remote) {
    if (auto in_region = options_.peer.Check(*decoded->remote); !in_region.ok()) {
      Close(std::move(in_region).error(), out);
      return;
    }
  }
  answered_ = true;
  incoming_stream_ = decoded->response.has_stream;
  if (incoming_stream_) {
    reader_.emplace(options_.credits, options_.peer);
  }
  if (decoded->remote) {
    payload_read_ = decoded->remote;
    pending_response_ = std::move(decoded->response);
    out.push_back(Action{.act = Act::kRead, .read = *payload_read_});
    return;
  }
  out.push_back(Action{.act = Act::kResponse, .response = std::move(decoded->response)});
  MaybeDone(out);
}

void RdmaSession::OnError(const Frame& frame, Actions& out) {
  auto decoded = DecodeError(frame.payload);
  if (!decoded.ok()) {
    Close(std::move(decoded).error(), out);
    return;
  }
  // Only an answer in place of the response, after the request's stream was read and
  // credited, leaves the connection in step.
  if (decoded->closing || answered_ || payload_lent_ || (writer_ && !writer_->done())) {
    Close(std::move(decoded->error), out);
    return;
  }
  state_ = State::kIdle;
  writer_.reset();
  Action failed{.act = Act::kCallError};
  failed.error = std::move(decoded->error);
  out.push_back(std::move(failed));
}

void RdmaSession::OnData(const Frame& frame, Actions& out) {
  if (!reader_ || payload_read_ || (options_.role == Role::kConnect && !answered_)) {
    Close(Unexpected(frame, "where no stream of the peer was announced"), out);
    return;
  }
  if (frame.flags == kFlagLast) {
    if (auto set = reader_->SetTrailer(frame.payload); !set.ok()) {
      Close(std::move(set).error(), out);
      return;
    }
    AfterRead(out);
    return;
  }
  if (frame.flags != 0) {
    Close(Unexpected(frame, "with unknown flags"), out);
    return;
  }
  auto d = DecodeDescriptor(frame.payload);
  if (!d.ok()) {
    Close(std::move(d).error(), out);
    return;
  }
  if (auto offered = reader_->Offer(*d); !offered.ok()) {
    Close(std::move(offered).error(), out);
    return;
  }
  out.push_back(Action{.act = Act::kRead, .read = *d});
}

void RdmaSession::OnCredit(const Frame& frame, Actions& out) {
  auto sequence = DecodeCredit(frame.payload);
  if (!sequence.ok() || frame.flags != 0) {
    Close(sequence.ok() ? Unexpected(frame, "with flags") : std::move(sequence).error(), out);
    return;
  }
  if (*sequence == 0) {
    if (!payload_lent_) {
      Close(Unexpected(frame, "crediting a payload never lent"), out);
      return;
    }
    payload_lent_ = false;
  } else if (!writer_) {
    Close(Unexpected(frame, "crediting a chunk of no stream"), out);
    return;
  } else if (auto credited = writer_->Credit(*sequence); !credited.ok()) {
    Close(std::move(credited).error(), out);
    return;
  }
  out.push_back(Action{.act = Act::kRelease, .sequence = *sequence});
  MaybeDone(out);
}

RdmaSession::Actions RdmaSession::OnReadCompleted(std::uint64_t sequence, std::string_view bytes) {
  Actions out;
  if (state_ != State::kCall) {
    if (state_ != State::kClosed) {
      Close(Error(ErrorCode::kInternal, "rdma peer: a READ completed outside a call"), out);
    }
    return out;
  }
  if (sequence == 0) {
    if (!payload_read_ || bytes.size() != payload_read_->length ||
        Crc64Nvme(0, bytes) != payload_read_->crc) {
      Close(Error(ErrorCode::kCorruption,
                  "rdma peer: a remote payload read that was not posted, or whose length or "
                  "CRC64NVME mismatch"),
            out);
      return out;
    }
    payload_read_.reset();
    if (!Send(FrameType::kCredit, 0, EncodeCredit(0), out)) {
      return out;
    }
    if (pending_request_) {
      pending_request_->payload = std::string(bytes);
      out.push_back(Action{.act = Act::kRequest, .request = std::move(*pending_request_)});
      pending_request_.reset();
    } else if (pending_response_) {
      pending_response_->payload = std::string(bytes);
      out.push_back(Action{.act = Act::kResponse, .response = std::move(*pending_response_)});
      pending_response_.reset();
    }
    AfterRead(out);
    MaybeDone(out);
    return out;
  }
  if (!reader_ || payload_read_) {
    Close(Error(ErrorCode::kCorruption, "rdma peer: a chunk's READ completed out of order"), out);
    return out;
  }
  if (auto completed = reader_->Completed(sequence, bytes); !completed.ok()) {
    Close(std::move(completed).error(), out);
    return out;
  }
  out.push_back(Action{.act = Act::kChunk, .sequence = sequence});
  AfterRead(out);
  return out;
}

void RdmaSession::AfterRead(Actions& out) {
  if (!reader_ || payload_read_ || end_delivered_) {
    return;
  }
  auto ended = reader_->Ended();
  if (!ended.ok()) {
    Close(std::move(ended).error(), out);
    return;
  }
  if (*ended) {
    end_delivered_ = true;
    out.push_back(Action{.act = Act::kStreamEnd});
    MaybeDone(out);
  }
}

RdmaSession::Actions RdmaSession::OnReadFailed(std::uint64_t sequence, const Error& error) {
  Actions out;
  Close(Error(error.code,
              "rdma peer: the READ of " + std::to_string(sequence) + " failed: " + error.message,
              error.retryable),
        out);
  return out;
}

RdmaSession::Actions RdmaSession::OnSendCompleted(bool ok) {
  Actions out;
  if (sends_in_flight_ > 0) {
    --sends_in_flight_;
  }
  if (!ok) {
    Close(Error(ErrorCode::kUnavailable, "rdma peer: a SEND failed", true), out);
  }
  return out;
}

void RdmaSession::MaybeDone(Actions& out) {
  if (state_ != State::kCall || !answered_ || payload_read_ || payload_lent_ ||
      (outgoing_stream_ && !(writer_ && writer_->done())) ||
      (incoming_stream_ && !(reader_ && reader_->done()))) {
    return;
  }
  state_ = State::kIdle;
  writer_.reset();
  reader_.reset();
  out.push_back(Action{.act = Act::kCallDone});
}

Result<RdmaSession::Actions> RdmaSession::Call(const PeerRequest& request,
                                               const std::optional<ReadDescriptor>& remote,
                                               std::uint64_t epoch) {
  STRATA_RETURN_IF_ERROR(Usable());
  if (options_.role != Role::kConnect || state_ != State::kIdle) {
    return Misuse("a call before the handshake, during another call, or by the acceptor");
  }
  RdmaRequest wire{.epoch = epoch, .request = request, .remote = remote};
  auto payload = EncodeRdmaRequest(wire);
  if (!payload.ok()) {
    return std::move(payload).error();
  }
  Actions out;
  ++request_id_;
  state_ = State::kCall;
  answered_ = false;
  incoming_stream_ = false;
  outgoing_stream_ = request.has_stream;
  end_delivered_ = false;
  payload_lent_ = remote.has_value();
  reader_.reset();
  writer_.reset();
  if (outgoing_stream_) {
    writer_.emplace(options_.peer.credits);
  }
  Send(FrameType::kRequest, 0, std::move(payload).value(), out);
  return out;
}

Result<RdmaSession::Actions> RdmaSession::Respond(const PeerResponse& response,
                                                  const std::optional<ReadDescriptor>& remote) {
  STRATA_RETURN_IF_ERROR(Usable());
  if (options_.role != Role::kAccept || state_ != State::kCall || answered_ || payload_read_ ||
      (incoming_stream_ && !(reader_ && reader_->done()))) {
    return Misuse("a response outside a call, twice, or before the request's stream was read");
  }
  RdmaResponse wire{.response = response, .remote = remote};
  auto payload = EncodeRdmaResponse(wire);
  if (!payload.ok()) {
    return std::move(payload).error();
  }
  Actions out;
  if (!Send(FrameType::kResponse, 0, std::move(payload).value(), out)) {
    return out;
  }
  answered_ = true;
  outgoing_stream_ = response.has_stream;
  payload_lent_ = remote.has_value();
  if (outgoing_stream_) {
    writer_.emplace(options_.peer.credits);
  }
  MaybeDone(out);
  return out;
}

Result<RdmaSession::Actions> RdmaSession::RespondError(const Error& error) {
  STRATA_RETURN_IF_ERROR(Usable());
  if (options_.role != Role::kAccept || state_ != State::kCall || answered_ || payload_read_ ||
      (incoming_stream_ && !(reader_ && reader_->done()))) {
    return Misuse("an error response outside a call, twice, or before the stream was read");
  }
  Actions out;
  if (Send(FrameType::kError, 0, ErrorPayload(error, false, 0, false), out)) {
    answered_ = true;
    MaybeDone(out);
  }
  return out;
}

Result<RdmaSession::Actions> RdmaSession::Write(const ReadDescriptor& d, std::string_view bytes) {
  STRATA_RETURN_IF_ERROR(Usable());
  const bool my_turn = options_.role == Role::kConnect ? !answered_ : answered_;
  if (state_ != State::kCall || !writer_ || !my_turn) {
    return Misuse("a chunk where this side has no stream open");
  }
  STRATA_RETURN_IF_ERROR(writer_->Write(d, bytes));
  Actions out;
  Send(FrameType::kData, 0, EncodeDescriptor(d), out);
  return out;
}

Result<RdmaSession::Actions> RdmaSession::CloseStream() {
  STRATA_RETURN_IF_ERROR(Usable());
  const bool my_turn = options_.role == Role::kConnect ? !answered_ : answered_;
  if (state_ != State::kCall || !writer_ || !my_turn) {
    return Misuse("closing a stream this side does not have open");
  }
  auto trailer = writer_->Close();
  if (!trailer.ok()) {
    return std::move(trailer).error();
  }
  Actions out;
  if (Send(FrameType::kData, kFlagLast, std::move(trailer).value(), out)) {
    MaybeDone(out);
  }
  return out;
}

Result<RdmaSession::Actions> RdmaSession::Consume(std::uint64_t sequence) {
  STRATA_RETURN_IF_ERROR(Usable());
  if (state_ != State::kCall || !reader_) {
    return Misuse("consuming a chunk of no stream");
  }
  STRATA_RETURN_IF_ERROR(reader_->Consume(sequence));
  Actions out;
  if (Send(FrameType::kCredit, 0, EncodeCredit(sequence), out)) {
    MaybeDone(out);
  }
  return out;
}

}  // namespace strata::storage::peer
