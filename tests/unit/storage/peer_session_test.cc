// The peer transport's connection state machines (storage/peer/session.*) and call frames
// (storage/peer/wire.*), without sockets: a handshake and calls through any split of the
// bytes; every refusal (wrong proof, a proof of another connection, a request before the
// handshake, stale epochs with their kError, a stream whose length or CRC does not match,
// an out-of-order request id) failing the session for good.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "storage/peer/session.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

constexpr const char* kSecret = "a-long-random-string";

using Kind = ServerSession::Kind;

// Feeds `bytes` to `session` in pieces of `piece` bytes; the events, or the error.
Result<std::vector<ServerSession::Event>> Feed(ServerSession& session, std::string_view bytes,
                                               std::uint64_t epoch, std::size_t piece = 4096) {
  std::vector<ServerSession::Event> events;
  while (!bytes.empty()) {
    std::string_view chunk = bytes.substr(0, piece);
    bytes.remove_prefix(chunk.size());
    while (!chunk.empty()) {
      auto event = session.Next(chunk, epoch);
      if (!event.ok()) {
        return std::move(event).error();
      }
      if (*event) {
        events.push_back(std::move(**event));
      }
    }
  }
  return events;
}

std::string FrameOf(FrameType type, std::uint16_t flags, std::uint64_t id, std::string payload) {
  auto bytes = EncodeFrame(type, flags, id, std::move(payload));
  EXPECT_TRUE(bytes.ok());
  return *bytes;
}

std::string Request(std::uint64_t id, std::uint64_t epoch, PeerRequest request) {
  return FrameOf(FrameType::kRequest, 0, id, *EncodeRequest(epoch, request));
}

// Runs the handshake between `client` and `server`; the server's events.
void ShakeHands(ServerSession& server, ClientHandshake& client, std::uint64_t epoch) {
  auto events = Feed(server, *client.HelloFrame(), epoch);
  ASSERT_TRUE(events.ok()) << events.error().message;
  ASSERT_EQ(events->size(), 1u);
  ASSERT_EQ((*events)[0].kind, Kind::kSend);
  FrameDecoder decoder;
  std::string_view answer_bytes = (*events)[0].bytes;
  auto answer = decoder.Next(answer_bytes);
  ASSERT_TRUE(answer.ok() && *answer);
  auto reply = client.OnAnswer(**answer);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  events = Feed(server, *reply, epoch);
  ASSERT_TRUE(events.ok()) << events.error().message;
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].kind, Kind::kAuthenticated);
  EXPECT_TRUE(server.authenticated());
}

TEST(PeerSessionTest, AHandshakeThenCallsWithAStreamThroughAnySplit) {
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}}) {
    ServerSession server("gw-a", kSecret, NewNonce());
    ClientHandshake client("gw-b", kSecret, 3, NewNonce());
    // The handshake's own bytes in one piece; the calls in `piece`-byte pieces.
    ShakeHands(server, client, 3);
    EXPECT_EQ(server.peer(), "gw-b");
    EXPECT_EQ(client.peer().node, "gw-a");

    StreamCheck check;
    std::string bytes = Request(1, 3, {9, "record", true});
    for (const std::string chunk : {"first chunk", "second"}) {
      check.Add(chunk);
      bytes += FrameOf(FrameType::kData, 0, 1, chunk);
    }
    bytes += FrameOf(FrameType::kData, kFlagLast, 1, check.Trailer());
    bytes += Request(2, 4, {10, "", false});  // a later epoch is fine
    auto events = Feed(server, bytes, 3, piece);
    ASSERT_TRUE(events.ok()) << events.error().message;
    ASSERT_EQ(events->size(), 5u);
    EXPECT_EQ((*events)[0].kind, Kind::kRequest);
    EXPECT_EQ((*events)[0].request_id, 1u);
    EXPECT_EQ((*events)[0].request.op, 9u);
    EXPECT_EQ((*events)[0].request.payload, "record");
    EXPECT_TRUE((*events)[0].request.has_stream);
    EXPECT_EQ((*events)[1].bytes, "first chunk");
    EXPECT_EQ((*events)[2].bytes, "second");
    EXPECT_EQ((*events)[3].kind, Kind::kEnd);
    EXPECT_EQ((*events)[4].kind, Kind::kRequest);
    EXPECT_EQ((*events)[4].request.op, 10u);
    EXPECT_TRUE(server.idle());
  }
}

TEST(PeerSessionTest, WrongProofsAreRefused) {
  // The client holds another secret: it refuses the server's proof.
  {
    ServerSession server("gw-a", kSecret, NewNonce());
    ClientHandshake client("gw-b", "another-secret", 0, NewNonce());
    auto events = Feed(server, *client.HelloFrame(), 0);
    ASSERT_TRUE(events.ok());
    FrameDecoder decoder;
    std::string_view bytes = (*events)[0].bytes;
    auto answer = decoder.Next(bytes);
    auto reply = client.OnAnswer(**answer);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::kAccessDenied);
  }
  // A proof from an earlier connection (another server nonce) does not hold on this one.
  const std::string nonce = NewNonce();
  std::string recorded;
  {
    ServerSession server("gw-a", kSecret, NewNonce());
    ClientHandshake client("gw-b", kSecret, 0, nonce);
    auto events = Feed(server, *client.HelloFrame(), 0);
    FrameDecoder decoder;
    std::string_view bytes = (*events)[0].bytes;
    recorded = *client.OnAnswer(**decoder.Next(bytes));
  }
  ServerSession server("gw-a", kSecret, NewNonce());
  ClientHandshake client("gw-b", kSecret, 0, nonce);
  ASSERT_TRUE(Feed(server, *client.HelloFrame(), 0).ok());
  auto refused = Feed(server, recorded, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kAccessDenied);
  EXPECT_FALSE(server.authenticated());
  EXPECT_TRUE(server.farewell().empty()) << "nothing is answered to a failed proof";
  // Failed for good: even a request is refused.
  std::string_view more = Request(1, 0, {1, ""});
  EXPECT_FALSE(server.Next(more, 0).ok());
}

TEST(PeerSessionTest, NothingButAHelloBeforeTheHandshake) {
  for (const std::string& first :
       {Request(1, 0, {1, "x"}), FrameOf(FrameType::kData, kFlagLast, 1, std::string(16, '\0')),
        FrameOf(FrameType::kHelloAck, 0, 0, "x"), FrameOf(FrameType::kHello, 0, 5, "x"),
        std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n00000")}) {
    ServerSession server("gw-a", kSecret, NewNonce());
    auto events = Feed(server, first, 0);
    ASSERT_FALSE(events.ok());
    EXPECT_EQ(events.error().code, ErrorCode::kCorruption) << events.error().message;
    EXPECT_TRUE(server.farewell().empty());
  }
}

TEST(PeerSessionTest, StaleEpochsAreRefusedWithTheEpochToRefreshTo) {
  {
    ServerSession server("gw-a", kSecret, NewNonce());
    ClientHandshake client("gw-b", kSecret, 6, NewNonce());
    auto refused = Feed(server, *client.HelloFrame(), 7);
    ASSERT_FALSE(refused.ok());
    std::uint64_t epoch = 0;
    EXPECT_TRUE(IsStaleEpoch(refused.error(), &epoch));
    EXPECT_EQ(epoch, 7u);
    // The farewell tells the client, which returns the same error.
    FrameDecoder decoder;
    std::string_view bytes = server.farewell();
    auto frame = decoder.Next(bytes);
    ASSERT_TRUE(frame.ok() && *frame);
    auto answer = client.OnAnswer(**frame);
    ASSERT_FALSE(answer.ok());
    EXPECT_TRUE(IsStaleEpoch(answer.error(), &epoch));
    EXPECT_EQ(epoch, 7u);
    EXPECT_TRUE(answer.error().retryable);
  }
  // A request stamped before the session's epoch of the moment.
  ServerSession server("gw-a", kSecret, NewNonce());
  ClientHandshake client("gw-b", kSecret, 7, NewNonce());
  ShakeHands(server, client, 7);
  ASSERT_TRUE(Feed(server, Request(1, 7, {1, ""}), 7).ok());
  auto refused = Feed(server, Request(2, 7, {1, ""}), 8);
  ASSERT_FALSE(refused.ok());
  std::uint64_t epoch = 0;
  EXPECT_TRUE(IsStaleEpoch(refused.error(), &epoch));
  EXPECT_EQ(epoch, 8u);
  FrameDecoder decoder;
  std::string_view bytes = server.farewell();
  auto frame = decoder.Next(bytes);
  ASSERT_TRUE(frame.ok() && *frame);
  EXPECT_EQ((*frame)->request_id, 2u);
  auto error = DecodeError((*frame)->payload);
  ASSERT_TRUE(error.ok());
  EXPECT_TRUE(error->closing);
}

TEST(PeerSessionTest, AStreamMustMatchItsTrailerAndRequestsMustGoForward) {
  const auto session = [](std::uint64_t) {
    auto server = std::make_unique<ServerSession>("gw-a", kSecret, NewNonce());
    ClientHandshake client("gw-b", kSecret, 0, NewNonce());
    ShakeHands(*server, client, 0);
    return server;
  };
  StreamCheck sent;
  sent.Add("abc");
  StreamCheck other;
  other.Add("abd");
  const std::string start = Request(1, 0, {1, "", true}) + FrameOf(FrameType::kData, 0, 1, "abc");
  struct Case {
    const char* what;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"another CRC", start + FrameOf(FrameType::kData, kFlagLast, 1, other.Trailer())},
      {"a short trailer", start + FrameOf(FrameType::kData, kFlagLast, 1, "12345678")},
      {"another request's data", start + FrameOf(FrameType::kData, 0, 2, "x")},
      {"an empty chunk", start + FrameOf(FrameType::kData, 0, 1, "")},
      {"a request in a stream", start + Request(2, 0, {1, ""})},
      {"a request id going back", Request(3, 0, {1, ""}) + Request(2, 0, {1, ""})},
      {"a repeated request id", Request(3, 0, {1, ""}) + Request(3, 0, {1, ""})},
      {"request id 0", Request(0, 0, {1, ""})},
      {"a second hello", FrameOf(FrameType::kHello, 0, 0, "x")},
      {"a response", FrameOf(FrameType::kResponse, 0, 1, std::string(5, '\0'))},
  };
  for (const auto& c : cases) {
    auto server = session(0);
    auto events = Feed(*server, c.bytes, 0);
    ASSERT_FALSE(events.ok()) << c.what;
    EXPECT_EQ(events.error().code, ErrorCode::kCorruption) << c.what;
  }
  auto server = session(0);
  auto events = Feed(*server, start + FrameOf(FrameType::kData, kFlagLast, 1, sent.Trailer()), 0);
  ASSERT_TRUE(events.ok()) << events.error().message;
  EXPECT_EQ(events->back().kind, Kind::kEnd);
}

TEST(PeerWireTest, PayloadsRoundTripAndMalformedOnesAreRefused) {
  auto request = EncodeRequest(42, {7, "payload", true});
  ASSERT_TRUE(request.ok());
  auto back = DecodeRequest(*request);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->epoch, 42u);
  EXPECT_EQ(back->request.op, 7u);
  EXPECT_EQ(back->request.payload, "payload");
  EXPECT_TRUE(back->request.has_stream);
  std::string bad = *request;
  bad[12] = 2;
  EXPECT_FALSE(DecodeRequest(bad).ok());
  EXPECT_FALSE(DecodeRequest(request->substr(0, kRequestHeadBytes - 1)).ok());
  EXPECT_FALSE(EncodeRequest(0, {1, std::string(kMaxPeerPayload + 1, 'x')}).ok());

  auto response = EncodeResponse({3, "answer", false});
  ASSERT_TRUE(response.ok());
  auto response_back = DecodeResponse(*response);
  ASSERT_TRUE(response_back.ok());
  EXPECT_EQ(response_back->status, 3u);
  EXPECT_EQ(response_back->payload, "answer");
  EXPECT_FALSE(response_back->has_stream);

  auto error = DecodeError(EncodeError(Error(ErrorCode::kNoSuchKey, "gone", true), false, 9));
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->error.code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(error->error.message, "gone");
  EXPECT_TRUE(error->error.retryable);
  EXPECT_FALSE(error->closing);
  EXPECT_FALSE(IsStaleEpoch(error->error));
  std::string unknown = EncodeError(Error(ErrorCode::kNoSuchKey, "gone"), false, 9);
  unknown[0] = static_cast<char>(0xff);
  EXPECT_FALSE(DecodeError(unknown).ok());
  // A stale-epoch flag on another code is not believed.
  std::string forged = EncodeError(Error(ErrorCode::kNoSuchKey, "gone"), false, 9, true);
  EXPECT_FALSE(DecodeError(forged).ok());
}

}  // namespace
}  // namespace strata::storage::peer
