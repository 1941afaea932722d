// The peer transport's frames and handshake (storage/peer/): round trips through any
// split of the stream, and every kind of bad input refused (bad magic, version, type,
// flags, reserved bits, a flipped payload or header bit, a length over the limit refused
// from the header alone), the decoder staying failed after; a large payload's own CRC
// making the same frame (FrameHeader) and the same stream check; the handshake's proofs
// hold for the right secret, role and nonces only.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "storage/crc64nvme.h"
#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

std::string Bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (auto& c : out) {
    c = static_cast<char>(gen());
  }
  return out;
}

std::string Encode(const Frame& frame) {
  std::string out;
  EXPECT_TRUE(AppendFrame(out, frame).ok());
  return out;
}

// Decodes every frame of `stream`, fed in pieces of `piece` bytes; `left`, when given,
// gets the bytes buffered for a frame not yet whole at the end.
Result<std::vector<Frame>> DecodeAll(std::string_view stream, std::size_t piece,
                                     std::size_t* left = nullptr) {
  FrameDecoder decoder;
  std::vector<Frame> frames;
  while (!stream.empty()) {
    std::string_view chunk = stream.substr(0, piece);
    stream.remove_prefix(chunk.size());
    while (!chunk.empty()) {
      auto next = decoder.Next(chunk);
      if (!next.ok()) {
        return std::move(next).error();
      }
      if (*next) {
        frames.push_back(std::move(**next));
      }
    }
  }
  if (left != nullptr) {
    *left = decoder.buffered();
  }
  return frames;
}

TEST(PeerFrameTest, FramesRoundTripThroughAnySplitOfTheStream) {
  std::vector<Frame> sent = {
      {FrameType::kRequest, 0, 1, "GET data/key"},
      {FrameType::kData, 0, 1, Bytes(300'000, 1)},
      {FrameType::kData, kFlagLast, 1, ""},
      {FrameType::kError, 0, 0xffffffffffffffffull, "NoSuchKey"},
  };
  std::string stream;
  for (const auto& frame : sent) {
    stream += Encode(frame);
  }
  for (std::size_t piece :
       {std::size_t{1}, std::size_t{7}, std::size_t{32}, std::size_t{4096}, stream.size()}) {
    std::size_t left = 1;
    auto got = DecodeAll(stream, piece, &left);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(left, 0u) << "a frame left half read";
    ASSERT_EQ(got->size(), sent.size()) << piece;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      EXPECT_EQ((*got)[i].type, sent[i].type);
      EXPECT_EQ((*got)[i].flags, sent[i].flags);
      EXPECT_EQ((*got)[i].request_id, sent[i].request_id);
      EXPECT_TRUE((*got)[i].payload == sent[i].payload) << i;
    }
  }
}

TEST(PeerFrameTest, EveryFlippedBitIsRefused) {
  const std::string good = Encode({FrameType::kResponse, 0, 42, "payload bytes"});
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    std::string bad = good;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    auto got = DecodeAll(bad, bad.size());
    // A flipped length bit may leave the frame waiting for bytes that never come (no
    // frame, no error) or fail; it never yields a frame.
    if (got.ok()) {
      EXPECT_TRUE(got->empty()) << "bit " << bit << " flipped, a frame came out";
    } else {
      EXPECT_TRUE(got.error().code == ErrorCode::kCorruption ||
                  got.error().code == ErrorCode::kEntityTooLarge)
          << got.error().message;
    }
  }
}

TEST(PeerFrameTest, ALengthOverTheLimitIsRefusedFromTheHeaderAlone) {
  const std::string big = Encode({FrameType::kData, 0, 7, Bytes(5'000, 2)});
  FrameDecoder decoder(4'096);
  std::string_view header = std::string_view(big).substr(0, kFrameHeaderBytes);
  auto got = decoder.Next(header);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kEntityTooLarge) << got.error().message;
  EXPECT_EQ(decoder.buffered(), 0u);
  // Failed for good: a good frame after it is refused too.
  const std::string small = Encode({FrameType::kData, 0, 8, "x"});
  std::string_view next = small;
  EXPECT_FALSE(decoder.Next(next).ok());
}

TEST(PeerFrameTest, BadFieldsAreRefused) {
  const std::string good = Encode({FrameType::kRequest, 0, 1, "x"});
  const auto refused = [](std::string bytes) {
    auto got = DecodeAll(bytes, bytes.size());
    return !got.ok() && got.error().code == ErrorCode::kCorruption;
  };
  std::string bad = good;
  bad[0] = 'X';  // magic
  EXPECT_TRUE(refused(bad));
  bad = good;
  bad[4] = 2;  // version
  EXPECT_TRUE(refused(bad));
  bad = good;
  bad[5] = 0;  // type
  EXPECT_TRUE(refused(bad));
  bad[5] = 7;
  EXPECT_TRUE(refused(bad));
  bad = good;
  bad[6] = 2;  // an unknown flag
  EXPECT_TRUE(refused(bad));
  bad = good;
  bad[20] = 1;  // reserved
  EXPECT_TRUE(refused(bad));
  // And the encoder refuses what the decoder would.
  std::string out;
  EXPECT_FALSE(AppendFrame(out, {FrameType::kData, 4, 1, ""}).ok());
  EXPECT_FALSE(AppendFrame(out, {static_cast<FrameType>(9), 0, 1, ""}).ok());
  EXPECT_FALSE(
      AppendFrame(out, {FrameType::kData, 0, 1, std::string(kMaxFramePayload + 1, 'a')}).ok());
  EXPECT_TRUE(out.empty());
}

TEST(PeerFrameTest, ALargePayloadsOwnCrcMakesTheSameFrameAndIsHandedToTheReader) {
  for (std::size_t size : {kOwnCrcFrom - 1, kOwnCrcFrom, std::size_t{kMaxFramePayload}}) {
    const Frame frame{FrameType::kData, kFlagLast, 42, Bytes(size, static_cast<unsigned>(size))};
    const std::uint64_t payload_crc = Crc64Nvme(0, frame.payload);
    // The header alone, then the payload as it is: the bytes AppendFrame makes.
    auto head = FrameHeader(frame.type, frame.flags, frame.request_id, size, payload_crc);
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(*head + frame.payload, Encode(frame)) << size;
    // The decoder hands a large payload's own CRC on (a stream's check reuses it).
    auto decoded = DecodeAll(Encode(frame), 70'001);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    ASSERT_EQ(decoded->size(), 1u);
    EXPECT_EQ(decoded->front().payload, frame.payload);
    if (size >= kOwnCrcFrom) {
      EXPECT_EQ(decoded->front().payload_crc, payload_crc) << size;
    } else {
      EXPECT_FALSE(decoded->front().payload_crc) << size;
    }
    // A wrong CRC given to the header makes a frame the decoder refuses.
    auto bad = FrameHeader(frame.type, frame.flags, frame.request_id, size, payload_crc ^ 1);
    ASSERT_TRUE(bad.ok());
    EXPECT_FALSE(DecodeAll(*bad + frame.payload, 4096).ok()) << size;
  }
  EXPECT_FALSE(FrameHeader(FrameType::kData, 0, 1, kMaxFramePayload + 1, 0).ok());
  EXPECT_FALSE(FrameHeader(FrameType::kData, 4, 1, 10, 0).ok());
}

TEST(PeerFrameTest, AStreamsCheckIsTheSameWithChunksOwnCrcs) {
  StreamCheck plain;
  StreamCheck reusing;
  for (std::size_t size : {std::size_t{10}, kOwnCrcFrom, std::size_t{1} << 20, std::size_t{3}}) {
    const std::string chunk = Bytes(size, 7);
    plain.Add(chunk);
    reusing.Add(chunk, size >= kOwnCrcFrom ? std::optional(Crc64Nvme(0, chunk)) : std::nullopt);
  }
  EXPECT_EQ(plain.Trailer(), reusing.Trailer());
  EXPECT_TRUE(reusing.Verify(plain.Trailer()).ok());
}

Hello MakeHello(std::string node, std::uint64_t epoch) {
  return {std::move(node), epoch, NewNonce()};
}

TEST(PeerHandshakeTest, HellosRoundTripAndMalformedOnesAreRefused) {
  Hello hello = MakeHello("gw-a", 12);
  auto bytes = EncodeHello(hello);
  ASSERT_TRUE(bytes.ok());
  auto back = DecodeHello(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->node, "gw-a");
  EXPECT_EQ(back->epoch, 12u);
  EXPECT_EQ(back->nonce, hello.nonce);
  EXPECT_TRUE(back->proof.empty());
  hello.proof = std::string(kProofBytes, 'p');
  bytes = EncodeHello(hello);
  ASSERT_TRUE(bytes.ok());
  back = DecodeHello(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->proof, hello.proof);
  // Every cut and every extra byte is refused.
  for (std::size_t n = 0; n < bytes->size(); ++n) {
    if (n == bytes->size() - kProofBytes) {
      continue;  // a hello without its proof is a first hello: well formed
    }
    EXPECT_FALSE(DecodeHello(std::string_view(*bytes).substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(DecodeHello(*bytes + "x").ok());
  EXPECT_FALSE(EncodeHello({"", 1, NewNonce()}).ok());
  EXPECT_FALSE(EncodeHello({std::string(256, 'n'), 1, NewNonce()}).ok());
  EXPECT_FALSE(EncodeHello({"gw", 1, "short"}).ok());
  EXPECT_NE(NewNonce(), NewNonce());
}

TEST(PeerHandshakeTest, AProofHoldsForTheRightSecretRoleAndNoncesOnly) {
  const std::string secret = "a-long-random-string";
  Hello connector = MakeHello("gw-a", 3);
  Hello acceptor = MakeHello("gw-b", 3);
  acceptor.proof = Proof(secret, HandshakeRole::kAccept, acceptor, connector);
  EXPECT_TRUE(CheckProof(secret, HandshakeRole::kAccept, acceptor, connector));
  connector.proof = Proof(secret, HandshakeRole::kConnect, connector, acceptor);
  EXPECT_TRUE(CheckProof(secret, HandshakeRole::kConnect, connector, acceptor));

  EXPECT_FALSE(CheckProof("another-secret", HandshakeRole::kAccept, acceptor, connector));
  // Reflected: the acceptor's proof passed off as a connector's.
  EXPECT_FALSE(CheckProof(secret, HandshakeRole::kConnect, acceptor, connector));
  // Replayed to a new connection: the connector's nonce is fresh.
  Hello next_connector = MakeHello("gw-a", 3);
  EXPECT_FALSE(CheckProof(secret, HandshakeRole::kAccept, acceptor, next_connector));
  // Another name or epoch than the one proved.
  Hello renamed = acceptor;
  renamed.node = "gw-c";
  EXPECT_FALSE(CheckProof(secret, HandshakeRole::kAccept, renamed, connector));
  Hello later = acceptor;
  later.epoch = 4;
  EXPECT_FALSE(CheckProof(secret, HandshakeRole::kAccept, later, connector));
  Hello unproved = acceptor;
  unproved.proof.clear();
  EXPECT_FALSE(CheckProof(secret, HandshakeRole::kAccept, unproved, connector));
}

}  // namespace
}  // namespace strata::storage::peer
