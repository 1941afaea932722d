#include "storage/peer/session.h"

#include <utility>

namespace strata::storage::peer {
namespace {

Error Unexpected(const Frame& frame, const char* state) {
  return Error(ErrorCode::kCorruption,
               "peer: a frame of type " + std::to_string(static_cast<int>(frame.type)) +
                   " (request " + std::to_string(frame.request_id) + ") " + state);
}

bool SameIdentity(const Hello& a, const Hello& b) {
  return a.node == b.node && a.epoch == b.epoch && a.nonce == b.nonce;
}

}  // namespace

ServerSession::ServerSession(std::string node, std::string secret, std::string nonce)
    : secret_(std::move(secret)) {
  self_.node = std::move(node);
  self_.nonce = std::move(nonce);
}

Error ServerSession::Fail(Error error) {
  state_ = State::kFailed;
  failed_ = error;
  return error;
}

Result<std::optional<ServerSession::Event>> ServerSession::Next(std::string_view& in,
                                                                std::uint64_t epoch) {
  if (failed_) {
    return *failed_;
  }
  while (!in.empty()) {
    auto frame = decoder_.Next(in);
    if (!frame.ok()) {
      return Fail(std::move(frame).error());
    }
    if (!*frame) {
      break;
    }
    // Every frame the state expects makes an event; any other fails the session.
    return OnFrame(std::move(**frame), epoch);
  }
  return std::optional<Event>();
}

Result<std::optional<ServerSession::Event>> ServerSession::OnFrame(Frame frame,
                                                                   std::uint64_t epoch) {
  switch (state_) {
    case State::kHello: {
      if (frame.type != FrameType::kHello || frame.flags != 0 || frame.request_id != 0) {
        return Fail(Unexpected(frame, "before the hello"));
      }
      auto hello = DecodeHello(frame.payload);
      if (!hello.ok()) {
        return Fail(std::move(hello).error());
      }
      if (!hello->proof.empty()) {
        return Fail(Error(ErrorCode::kCorruption, "peer hello with a proof"));
      }
      peer_ = std::move(hello).value();
      if (peer_.epoch < epoch) {
        // The one answer an unauthenticated caller gets: which epoch to refresh to. The
        // epoch is no secret (every hello carries it), and a member that lagged behind
        // learns it must refresh rather than retry.
        Error stale = StaleEpochError(self_.node, epoch, peer_.epoch);
        auto frame_bytes =
            EncodeFrame(FrameType::kError, 0, 0, EncodeError(stale, true, epoch, true));
        if (frame_bytes.ok()) {
          farewell_ = std::move(frame_bytes).value();
        }
        return Fail(std::move(stale));
      }
      self_.epoch = epoch;
      Hello ack = self_;
      ack.proof = Proof(secret_, HandshakeRole::kAccept, self_, peer_);
      auto payload = EncodeHello(ack);
      if (!payload.ok()) {
        return Fail(std::move(payload).error());
      }
      auto bytes = EncodeFrame(FrameType::kHelloAck, 0, 0, std::move(payload).value());
      if (!bytes.ok()) {
        return Fail(std::move(bytes).error());
      }
      state_ = State::kProof;
      return std::optional<Event>(Event{Kind::kSend, std::move(bytes).value()});
    }
    case State::kProof: {
      if (frame.type != FrameType::kHelloAck || frame.flags != 0 || frame.request_id != 0) {
        return Fail(Unexpected(frame, "instead of the caller's proof"));
      }
      auto claimed = DecodeHello(frame.payload);
      if (!claimed.ok()) {
        return Fail(std::move(claimed).error());
      }
      // The proof must come from the hello this side answered: a proof from another
      // connection (another nonce of ours) or of another identity does not hold.
      if (!SameIdentity(*claimed, peer_) ||
          !CheckProof(secret_, HandshakeRole::kConnect, *claimed, self_)) {
        return Fail(Error(ErrorCode::kAccessDenied,
                          "peer handshake: the caller's proof does not hold (another cluster "
                          "secret, or a replayed answer)"));
      }
      state_ = State::kIdle;
      return std::optional<Event>(Event{Kind::kAuthenticated});
    }
    case State::kIdle: {
      if (frame.type != FrameType::kRequest || frame.flags != 0 ||
          frame.request_id <= request_id_) {
        return Fail(Unexpected(frame, "instead of a new request"));
      }
      auto wire = DecodeRequest(frame.payload);
      if (!wire.ok()) {
        return Fail(std::move(wire).error());
      }
      if (wire->epoch < epoch) {
        Error stale = StaleEpochError(self_.node, epoch, wire->epoch);
        auto frame_bytes = EncodeFrame(FrameType::kError, 0, frame.request_id,
                                       EncodeError(stale, true, epoch, true));
        if (frame_bytes.ok()) {
          farewell_ = std::move(frame_bytes).value();
        }
        return Fail(std::move(stale));
      }
      request_id_ = frame.request_id;
      if (wire->request.has_stream) {
        state_ = State::kStream;
        stream_ = StreamCheck();
      }
      Event event{Kind::kRequest};
      event.request_id = frame.request_id;
      event.request = std::move(wire->request);
      return std::optional<Event>(std::move(event));
    }
    case State::kStream: {
      if (frame.type != FrameType::kData || frame.request_id != request_id_) {
        return Fail(Unexpected(frame, "in a request's stream"));
      }
      if (frame.flags == kFlagLast) {
        if (auto verified = stream_.Verify(frame.payload); !verified.ok()) {
          return Fail(std::move(verified).error());
        }
        state_ = State::kIdle;
        return std::optional<Event>(Event{Kind::kEnd});
      }
      if (frame.payload.empty()) {
        return Fail(Error(ErrorCode::kCorruption, "peer: an empty chunk in a request's stream"));
      }
      stream_.Add(frame.payload, frame.payload_crc);
      return std::optional<Event>(Event{Kind::kData, std::move(frame.payload)});
    }
    case State::kFailed:
      break;
  }
  return Fail(Error(ErrorCode::kInternal, "peer session used after it failed"));
}

ClientHandshake::ClientHandshake(std::string node, std::string secret, std::uint64_t epoch,
                                 std::string nonce)
    : secret_(std::move(secret)) {
  self_.node = std::move(node);
  self_.epoch = epoch;
  self_.nonce = std::move(nonce);
}

Result<std::string> ClientHandshake::HelloFrame() const {
  auto payload = EncodeHello(self_);
  if (!payload.ok()) {
    return std::move(payload).error();
  }
  return EncodeFrame(FrameType::kHello, 0, 0, std::move(payload).value());
}

Result<std::string> ClientHandshake::OnAnswer(const Frame& frame) {
  if (frame.type == FrameType::kError && frame.request_id == 0) {
    auto refused = DecodeError(frame.payload);
    if (!refused.ok()) {
      return std::move(refused).error();
    }
    return std::move(refused->error);
  }
  if (frame.type != FrameType::kHelloAck || frame.flags != 0 || frame.request_id != 0) {
    return Unexpected(frame, "instead of the peer's answer to the hello");
  }
  auto answer = DecodeHello(frame.payload);
  if (!answer.ok()) {
    return std::move(answer).error();
  }
  if (!CheckProof(secret_, HandshakeRole::kAccept, *answer, self_)) {
    return Error(ErrorCode::kAccessDenied,
                 "peer handshake: the peer's proof does not hold (another cluster secret?)");
  }
  peer_ = std::move(answer).value();
  Hello reply = self_;
  reply.proof = Proof(secret_, HandshakeRole::kConnect, self_, peer_);
  auto payload = EncodeHello(reply);
  if (!payload.ok()) {
    return std::move(payload).error();
  }
  return EncodeFrame(FrameType::kHelloAck, 0, 0, std::move(payload).value());
}

}  // namespace strata::storage::peer
