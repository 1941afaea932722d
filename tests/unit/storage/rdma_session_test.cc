// The RDMA connection's state machine (storage/peer/rdma_session.*, rdma_stream.*) without
// hardware: two sessions wired to each other, each with a real chunk pool (a recording
// registrar in place of ibv_reg_mr), a SEND delivered to the other side's inbox and an
// RDMA READ done as a memcpy from the address the descriptor names, as the NIC would.
// Handshake, calls with inline and remote payloads, streams both ways under credits, and
// every refusal: wrong secret, stale epochs, CRC mismatches, descriptors outside the
// region or beyond the credits, anything out of order, failed READs and SENDs.
#include "storage/peer/rdma_session.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/peer/rdma_buffer_pool.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

using Act = RdmaSession::Act;
constexpr const char* kSecret = "a-long-random-string";
constexpr std::uint32_t kCredits = 2;
constexpr std::size_t kChunk = 64 * 1024;

class FakeRegistrar final : public MemoryRegistrar {
 public:
  explicit FakeRegistrar(std::uint32_t key) : key_(key) {}
  Result<Registration> Register(void*, std::size_t) override {
    return Registration{.lkey = key_, .rkey = key_};
  }
  void Deregister(const Registration&) override {}

 private:
  std::uint32_t key_;
};

struct Side {
  explicit Side(std::uint32_t key) : registrar(key) {
    pool = std::move(RdmaBufferPool::Make(registrar, 8, kChunk, kCredits).value());
  }
  FakeRegistrar registrar;
  std::unique_ptr<RdmaBufferPool> pool;
  std::unique_ptr<RdmaSession> session;
  std::uint64_t epoch = 1;
  std::deque<std::string> inbox;
  // READs posted and not completed (when complete_reads is off), oldest first.
  std::deque<std::pair<std::uint64_t, ChunkLease>> reads;
  std::map<std::uint64_t, ChunkLease> delivered;  // chunks read, not consumed
  std::map<std::uint64_t, ChunkLease> lent;       // this side's slots the peer may READ
  bool complete_reads = true;
  bool consume = true;
  bool complete_sends = true;
  // What the side saw.
  bool authenticated = false;
  std::vector<PeerRequest> requests;
  std::vector<PeerResponse> responses;
  std::string stream;
  int chunks = 0;
  int ends = 0;
  int calls_done = 0;
  std::optional<Error> call_error;
  std::optional<Error> closed;
  std::size_t peak_sends = 0;
  std::size_t peak_slots = 0;
};

class RdmaSessionTest : public ::testing::Test {
 protected:
  RdmaSessionTest() : a_(100), c_(200) { Make(kSecret); }

  void Make(const std::string& acceptor_secret) {
    c_.session =
        std::make_unique<RdmaSession>(RdmaSession::Options{.role = RdmaSession::Role::kConnect,
                                                           .node = "gw-c",
                                                           .secret = kSecret,
                                                           .nonce = std::string(kNonceBytes, 'c'),
                                                           .credits = kCredits,
                                                           .peer = a_.pool->Region()});
    a_.session =
        std::make_unique<RdmaSession>(RdmaSession::Options{.role = RdmaSession::Role::kAccept,
                                                           .node = "gw-a",
                                                           .secret = acceptor_secret,
                                                           .nonce = std::string(kNonceBytes, 'a'),
                                                           .credits = kCredits,
                                                           .peer = c_.pool->Region()});
  }

  Side& Peer(Side& s) { return &s == &a_ ? c_ : a_; }

  // New sessions on the same pools, nothing in flight, nothing seen.
  void Reset(const std::string& acceptor_secret = kSecret) {
    for (Side* s : {&a_, &c_}) {
      s->inbox.clear();
      s->reads.clear();
      s->delivered.clear();
      s->lent.clear();
      s->complete_reads = s->consume = s->complete_sends = true;
      s->authenticated = false;
      s->requests.clear();
      s->responses.clear();
      s->stream.clear();
      s->chunks = s->ends = s->calls_done = 0;
      s->call_error.reset();
      s->closed.reset();
    }
    Make(acceptor_secret);
  }

  void Run(Side& s, RdmaSession::Actions actions) {
    for (auto& action : actions) {
      switch (action.act) {
        case Act::kSend:
          Peer(s).inbox.push_back(action.message);
          s.peak_sends = std::max(s.peak_sends, s.session->sends_in_flight());
          if (s.complete_sends) {
            Run(s, s.session->OnSendCompleted(true));
          }
          break;
        case Act::kRead: {
          auto lease = s.pool->Lease();
          ASSERT_TRUE(lease.ok()) << "the reader ran out of slots";
          std::memcpy(lease->data(), reinterpret_cast<const char*>(action.read.addr),
                      action.read.length);
          lease->set_size(action.read.length);
          s.reads.emplace_back(action.read.sequence, std::move(lease).value());
          s.peak_slots = std::max(s.peak_slots, s.pool->chunk_count() - s.pool->available());
          if (s.complete_reads) {
            CompleteRead(s);
          }
          break;
        }
        case Act::kAuthenticated:
          s.authenticated = true;
          break;
        case Act::kRequest:
          s.requests.push_back(action.request);
          break;
        case Act::kResponse:
          s.responses.push_back(action.response);
          break;
        case Act::kChunk: {
          ++s.chunks;
          ChunkLease& slot = s.delivered[action.sequence];
          s.stream += slot.bytes();
          if (s.consume) {
            Consume(s, action.sequence);
          }
          break;
        }
        case Act::kStreamEnd:
          ++s.ends;
          break;
        case Act::kRelease:
          ASSERT_EQ(s.lent.erase(action.sequence), 1u) << action.sequence;
          break;
        case Act::kCallDone:
          ++s.calls_done;
          break;
        case Act::kCallError:
          s.call_error = action.error;
          break;
        case Act::kClose:
          s.closed = action.error;
          break;
      }
    }
  }

  // Completes the oldest READ in flight of `s`.
  void CompleteRead(Side& s) {
    ASSERT_FALSE(s.reads.empty());
    auto [sequence, lease] = std::move(s.reads.front());
    s.reads.pop_front();
    const std::string bytes(lease.bytes());
    if (sequence != 0) {
      s.delivered[sequence] = std::move(lease);
    }
    Run(s, s.session->OnReadCompleted(sequence, bytes));
  }

  void Consume(Side& s, std::uint64_t sequence) {
    auto actions = s.session->Consume(sequence);
    ASSERT_TRUE(actions.ok()) << actions.error().message;
    s.delivered.erase(sequence);
    Run(s, std::move(actions).value());
  }

  // Delivers messages until both inboxes are empty.
  void Pump() {
    while (!a_.inbox.empty() || !c_.inbox.empty()) {
      for (Side* s : {&a_, &c_}) {
        while (!s->inbox.empty()) {
          std::string message = std::move(s->inbox.front());
          s->inbox.pop_front();
          Run(*s, s->session->OnMessage(message, s->epoch));
        }
      }
    }
  }

  void Handshake() {
    Run(c_, c_.session->Start(c_.epoch));
    Pump();
    ASSERT_TRUE(a_.authenticated && c_.authenticated);
    EXPECT_EQ(a_.session->peer(), "gw-c");
    EXPECT_EQ(c_.session->peer(), "gw-a");
  }

  // A slot of `s` holding `bytes`: the payload or chunk `sequence` it lends the peer.
  ReadDescriptor Lend(Side& s, const std::string& bytes, std::uint64_t sequence) {
    auto lease = std::move(s.pool->Lease()).value();
    std::memcpy(lease.data(), bytes.data(), bytes.size());
    lease.set_size(bytes.size());
    const ReadDescriptor d = lease.Describe(sequence);
    s.lent[sequence] = std::move(lease);
    return d;
  }

  Result<void> Write(Side& s, const std::string& bytes) {
    const std::uint64_t sequence = s.session->next_sequence();
    const ReadDescriptor d = Lend(s, bytes, sequence);
    auto actions = s.session->Write(d, bytes);
    if (!actions.ok()) {
      s.lent.erase(sequence);
      return std::move(actions).error();
    }
    Run(s, std::move(actions).value());
    return Ok();
  }

  void Call(const PeerRequest& request, const std::optional<ReadDescriptor>& remote = {}) {
    auto actions = c_.session->Call(request, remote, c_.epoch);
    ASSERT_TRUE(actions.ok()) << actions.error().message;
    Run(c_, std::move(actions).value());
  }
  void Respond(const PeerResponse& response, const std::optional<ReadDescriptor>& remote = {}) {
    auto actions = a_.session->Respond(response, remote);
    ASSERT_TRUE(actions.ok()) << actions.error().message;
    Run(a_, std::move(actions).value());
  }
  void CloseStream(Side& s) {
    auto actions = s.session->CloseStream();
    ASSERT_TRUE(actions.ok()) << actions.error().message;
    Run(s, std::move(actions).value());
  }
  // A raw message from the peer, as a broken or hostile one would send it.
  void Inject(Side& s, FrameType type, std::uint16_t flags, std::uint64_t id, std::string payload) {
    auto message = EncodeMessage(type, flags, id, std::move(payload));
    ASSERT_TRUE(message.ok());
    Run(s, s.session->OnMessage(*message, s.epoch));
  }
  void ExpectClosed(Side& s, ErrorCode code) {
    ASSERT_TRUE(s.closed.has_value()) << "the session stayed open";
    EXPECT_EQ(s.closed->code, code) << s.closed->message;
    EXPECT_TRUE(s.session->closed());
    // Closed for good: events do nothing, steps fail.
    EXPECT_TRUE(s.session->OnMessage("anything", s.epoch).empty());
    EXPECT_FALSE(s.session->CloseStream().ok());
  }

  Side a_;  // the acceptor (callee)
  Side c_;  // the connector (caller)
};

std::string Bytes(std::size_t n, int seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) & 0xff);
  }
  return s;
}

TEST_F(RdmaSessionTest, HandshakeThenCallsOneAfterTheOther) {
  Handshake();
  for (int i = 0; i < 3; ++i) {
    Call({.op = 7, .payload = "ping " + std::to_string(i)});
    Pump();
    ASSERT_EQ(a_.requests.size(), static_cast<std::size_t>(i + 1));
    EXPECT_EQ(a_.requests.back().op, 7u);
    EXPECT_EQ(a_.requests.back().payload, "ping " + std::to_string(i));
    Respond({.status = 200, .payload = "pong"});
    Pump();
    ASSERT_EQ(c_.responses.size(), static_cast<std::size_t>(i + 1));
    EXPECT_EQ(c_.responses.back().payload, "pong");
    EXPECT_EQ(c_.calls_done, i + 1);
    EXPECT_EQ(a_.calls_done, i + 1);
    EXPECT_TRUE(c_.session->idle() && a_.session->idle());
  }
  // One call at a time.
  Call({.op = 1});
  EXPECT_EQ(c_.session->Call({.op = 2}, std::nullopt, 1).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(RdmaSessionTest, StreamsBothWaysUnderCreditsByteExact) {
  Handshake();
  const std::string up = Bytes(9 * 1000 + 17, 1);
  const std::string down = Bytes(kChunk * 5 + 3, 2);
  a_.consume = false;  // the handler reads slowly: the writer must stop at its credits
  Call({.op = 1, .payload = "put", .has_stream = true});
  Pump();
  ASSERT_EQ(a_.requests.size(), 1u);
  std::size_t at = 0;
  while (at < up.size()) {
    if (!c_.session->can_write()) {
      // Out of credits: the writer holds exactly that many slots, the reader as many.
      EXPECT_EQ(c_.lent.size(), kCredits);
      EXPECT_EQ(a_.delivered.size(), kCredits);
      EXPECT_EQ(Write(c_, "x").error().code, ErrorCode::kInvalidArgument);
      Consume(a_, a_.delivered.begin()->first);
      Pump();
      ASSERT_TRUE(c_.session->can_write());
      continue;
    }
    const std::string piece = up.substr(at, 1000);
    ASSERT_TRUE(Write(c_, piece).ok());
    at += piece.size();
    Pump();
  }
  CloseStream(c_);
  Pump();
  while (!a_.delivered.empty()) {
    Consume(a_, a_.delivered.begin()->first);
    Pump();
  }
  EXPECT_EQ(a_.stream, up);
  EXPECT_EQ(a_.ends, 1);
  EXPECT_TRUE(c_.lent.empty());

  Respond({.status = 0, .has_stream = true});
  Pump();
  for (std::size_t i = 0; i < down.size(); i += kChunk) {
    ASSERT_TRUE(a_.session->can_write());
    ASSERT_TRUE(Write(a_, down.substr(i, kChunk)).ok());
    Pump();
  }
  CloseStream(a_);
  Pump();
  EXPECT_EQ(c_.stream, down);
  EXPECT_EQ(c_.ends, 1);
  EXPECT_EQ(c_.calls_done, 1);
  EXPECT_EQ(a_.calls_done, 1);
  EXPECT_TRUE(a_.lent.empty());
  EXPECT_LE(a_.peak_slots, kCredits);
  EXPECT_LE(c_.peak_slots, kCredits);
  EXPECT_LE(a_.peak_sends, a_.session->max_sends_in_flight());
  EXPECT_EQ(a_.pool->available(), a_.pool->chunk_count());
  EXPECT_EQ(c_.pool->available(), c_.pool->chunk_count());
}

TEST_F(RdmaSessionTest, PayloadsOverTheInlineLimitAreRead) {
  Handshake();
  const std::string big = Bytes(kRdmaMaxInline + 5000, 3);
  Call({.op = 2}, Lend(c_, big, 0));
  Pump();
  ASSERT_EQ(a_.requests.size(), 1u);
  EXPECT_EQ(a_.requests[0].payload, big);
  EXPECT_TRUE(c_.lent.empty());  // credited once read
  const std::string answer = Bytes(kChunk, 4);
  Respond({.status = 1}, Lend(a_, answer, 0));
  Pump();
  ASSERT_EQ(c_.responses.size(), 1u);
  EXPECT_EQ(c_.responses[0].payload, answer);
  EXPECT_TRUE(a_.lent.empty());
  EXPECT_EQ(c_.calls_done, 1);
  EXPECT_EQ(a_.calls_done, 1);
}

TEST_F(RdmaSessionTest, AHandlerErrorEndsTheCallAndKeepsTheConnection) {
  Handshake();
  Call({.op = 3});
  Pump();
  auto actions = a_.session->RespondError(Error(ErrorCode::kNotFound, "no such key"));
  ASSERT_TRUE(actions.ok());
  Run(a_, std::move(actions).value());
  Pump();
  ASSERT_TRUE(c_.call_error.has_value());
  EXPECT_EQ(c_.call_error->code, ErrorCode::kNotFound);
  EXPECT_EQ(c_.call_error->message, "no such key");
  EXPECT_FALSE(c_.closed.has_value());
  EXPECT_TRUE(c_.session->idle() && a_.session->idle());
  Call({.op = 4});
  Pump();
  EXPECT_EQ(a_.requests.size(), 2u);
}

TEST_F(RdmaSessionTest, AnotherSecretIsRefused) {
  Reset("another-cluster-secret");
  Run(c_, c_.session->Start(c_.epoch));
  Pump();
  ExpectClosed(c_, ErrorCode::kAccessDenied);  // the acceptor's proof does not hold
  EXPECT_FALSE(a_.authenticated);
  EXPECT_TRUE(a_.requests.empty());
}

TEST_F(RdmaSessionTest, AForgedProofIsRefusedByTheAcceptor) {
  Run(c_, c_.session->Start(c_.epoch));
  const std::string hello = a_.inbox.front();
  a_.inbox.clear();
  Run(a_, a_.session->OnMessage(hello, 1));
  Hello forged{.node = "gw-c",
               .epoch = 1,
               .nonce = std::string(kNonceBytes, 'c'),
               .proof = std::string(kProofBytes, 'p')};
  Inject(a_, FrameType::kHelloAck, 0, 0, *EncodeHello(forged));
  ExpectClosed(a_, ErrorCode::kAccessDenied);
  EXPECT_FALSE(a_.authenticated);
}

TEST_F(RdmaSessionTest, StaleEpochsAreRefusedWithTheEpochToRefreshTo) {
  a_.epoch = 5;
  c_.epoch = 3;
  Run(c_, c_.session->Start(c_.epoch));
  Pump();
  ASSERT_TRUE(c_.closed.has_value());
  std::uint64_t epoch = 0;
  EXPECT_TRUE(IsStaleEpoch(*c_.closed, &epoch));
  EXPECT_EQ(epoch, 5u);
  EXPECT_TRUE(IsStaleEpoch(*a_.closed));

  // A request made after the acceptor moved on.
  Reset();
  a_.epoch = 3;
  Handshake();
  a_.epoch = 4;
  Call({.op = 1, .payload = "late"});
  Pump();
  EXPECT_TRUE(a_.requests.empty());
  ASSERT_TRUE(c_.closed.has_value());
  EXPECT_TRUE(IsStaleEpoch(*c_.closed, &epoch));
  EXPECT_EQ(epoch, 4u);
}

TEST_F(RdmaSessionTest, AChunkWhoseCrcDoesNotMatchClosesTheConnection) {
  Handshake();
  Call({.op = 1, .has_stream = true});
  Pump();
  const ReadDescriptor d = Lend(c_, "the bytes", 1);
  c_.lent[1].data()[0] ^= 1;  // changed after the CRC was taken: what a bad READ returns
  auto actions = c_.session->Write(d, "the bytes");
  ASSERT_TRUE(actions.ok());
  Run(c_, std::move(actions).value());
  Pump();
  ExpectClosed(a_, ErrorCode::kCorruption);
  EXPECT_EQ(a_.chunks, 0);
}

TEST_F(RdmaSessionTest, DescriptorsOutsideTheRegionOrBeyondCreditsAreRefused) {
  const ReadDescriptor good{.addr = c_.pool->Region().addr,
                            .rkey = c_.pool->rkey(),
                            .length = 10,
                            .crc = 0,
                            .sequence = 1};
  auto refused = [&](ReadDescriptor d, const char* why) {
    SCOPED_TRACE(why);
    Reset();
    Handshake();
    a_.complete_reads = false;
    Call({.op = 1, .has_stream = true});
    Pump();
    Inject(a_, FrameType::kData, 0, 1, EncodeDescriptor(d));
    ExpectClosed(a_, ErrorCode::kCorruption);
  };
  ReadDescriptor d = good;
  d.rkey += 1;
  refused(d, "another rkey");
  d = good;
  d.addr += 8;
  refused(d, "inside a slot");
  d = good;
  d.addr += kChunk * 8;
  refused(d, "past the region");
  d = good;
  d.addr -= kChunk;
  refused(d, "before the region");
  d = good;
  d.length = kChunk + 1;
  refused(d, "longer than a slot");
  d = good;
  d.sequence = 2;
  refused(d, "out of sequence");

  // More chunks than the credits, none consumed yet.
  Reset();
  Handshake();
  a_.complete_reads = false;
  Call({.op = 1, .has_stream = true});
  Pump();
  for (std::uint64_t i = 1; i <= kCredits; ++i) {
    d = good;
    d.sequence = i;
    d.addr += kChunk * i;
    Inject(a_, FrameType::kData, 0, 1, EncodeDescriptor(d));
    ASSERT_FALSE(a_.closed.has_value());
  }
  d.sequence = kCredits + 1;
  Inject(a_, FrameType::kData, 0, 1, EncodeDescriptor(d));
  ExpectClosed(a_, ErrorCode::kCorruption);
}

TEST_F(RdmaSessionTest, AnythingOutOfOrderClosesTheConnection) {
  auto fresh = [&] {
    Reset();
    Handshake();
  };
  // A request before the handshake.
  Inject(a_, FrameType::kRequest, 0, 1, *EncodeRdmaRequest({.request = {.op = 1}}));
  ExpectClosed(a_, ErrorCode::kCorruption);
  // A message to the connector between calls.
  fresh();
  Inject(c_, FrameType::kResponse, 0, 0, *EncodeRdmaResponse({}));
  ExpectClosed(c_, ErrorCode::kCorruption);
  // A request id that does not increase.
  fresh();
  Call({.op = 1});
  Pump();
  Respond({});
  Pump();
  Inject(a_, FrameType::kRequest, 0, 1, *EncodeRdmaRequest({.epoch = 1, .request = {.op = 1}}));
  ExpectClosed(a_, ErrorCode::kCorruption);
  // A response before the request's stream ended.
  fresh();
  Call({.op = 1, .has_stream = true});
  Inject(c_, FrameType::kResponse, 0, 1, *EncodeRdmaResponse({}));
  ExpectClosed(c_, ErrorCode::kCorruption);
  // A message of another call.
  fresh();
  Call({.op = 1});
  Inject(c_, FrameType::kResponse, 0, 2, *EncodeRdmaResponse({}));
  ExpectClosed(c_, ErrorCode::kCorruption);
  // A credit for a chunk never sent, and one out of order.
  fresh();
  Call({.op = 1, .has_stream = true});
  Inject(c_, FrameType::kCredit, 0, 1, EncodeCredit(1));
  ExpectClosed(c_, ErrorCode::kCorruption);
  fresh();
  a_.consume = false;
  Call({.op = 1, .has_stream = true});
  Pump();
  ASSERT_TRUE(Write(c_, "one").ok());
  ASSERT_TRUE(Write(c_, "two").ok());
  Inject(c_, FrameType::kCredit, 0, 1, EncodeCredit(2));
  ExpectClosed(c_, ErrorCode::kCorruption);
  // READ completions out of order.
  fresh();
  a_.complete_reads = false;
  Call({.op = 1, .has_stream = true});
  Pump();
  ASSERT_TRUE(Write(c_, "one").ok());
  ASSERT_TRUE(Write(c_, "two").ok());
  Pump();
  ASSERT_EQ(a_.reads.size(), 2u);
  Run(a_, a_.session->OnReadCompleted(2, a_.reads.back().second.bytes()));
  ExpectClosed(a_, ErrorCode::kCorruption);
  // A trailer that does not match the chunks read.
  fresh();
  Call({.op = 1, .has_stream = true});
  Pump();
  ASSERT_TRUE(Write(c_, "one").ok());
  Pump();
  StreamCheck other;
  other.Add("ONE");
  Inject(a_, FrameType::kData, kFlagLast, 1, other.Trailer());
  ExpectClosed(a_, ErrorCode::kCorruption);
  // Data where no stream was announced.
  fresh();
  Call({.op = 1});
  Pump();
  Inject(a_, FrameType::kData, 0, 1, EncodeDescriptor({.length = 1, .sequence = 1}));
  ExpectClosed(a_, ErrorCode::kCorruption);
  // A malformed message.
  fresh();
  Run(a_, a_.session->OnMessage("not a frame", 1));
  ExpectClosed(a_, ErrorCode::kCorruption);
}

TEST_F(RdmaSessionTest, FailedReadsAndSendsCloseTheConnection) {
  Handshake();
  a_.complete_reads = false;
  Call({.op = 1, .has_stream = true});
  Pump();
  ASSERT_TRUE(Write(c_, "bytes").ok());
  Pump();
  Run(a_, a_.session->OnReadFailed(1, Error(ErrorCode::kUnavailable, "remote access error")));
  ExpectClosed(a_, ErrorCode::kUnavailable);
  EXPECT_NE(a_.closed->message.find("remote access error"), std::string::npos);

  Reset();
  c_.complete_sends = false;
  Run(c_, c_.session->Start(1));
  EXPECT_EQ(c_.session->sends_in_flight(), 1u);
  Run(c_, c_.session->OnSendCompleted(false));
  ExpectClosed(c_, ErrorCode::kUnavailable);
}

TEST_F(RdmaSessionTest, StepsTheStateDoesNotAllowAreTheCallersBug) {
  EXPECT_EQ(c_.session->Call({.op = 1}, std::nullopt, 1).error().code,
            ErrorCode::kInvalidArgument);  // before the handshake
  Handshake();
  EXPECT_FALSE(a_.session->Call({.op = 1}, std::nullopt, 1).ok());  // the acceptor
  EXPECT_FALSE(a_.session->Respond({}, std::nullopt).ok());         // no call
  Call({.op = 1, .has_stream = true});
  Pump();
  EXPECT_FALSE(a_.session->Respond({}, std::nullopt).ok());  // the stream is unread
  EXPECT_FALSE(a_.session->Write({}, "x").ok());             // not its turn
  EXPECT_FALSE(c_.session->Consume(1).ok());                 // nothing to consume
  EXPECT_FALSE(
      c_.session->Call({.op = 2, .payload = std::string(kRdmaMaxInline + 1, 'x')}, std::nullopt, 1)
          .ok());
}

}  // namespace
}  // namespace strata::storage::peer
