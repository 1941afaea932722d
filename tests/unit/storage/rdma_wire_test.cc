// The RDMA transport's control messages (storage/peer/rdma_wire.*): round trips, and the
// decoders refusing every truncation, every flipped bit, oversize lengths and descriptors
// outside the peer's region.
#include "storage/peer/rdma_wire.h"

#include <gtest/gtest.h>

#include <string>

#include "storage/peer/wire.h"

namespace strata::storage::peer {
namespace {

RdmaRegion Region() {
  return RdmaRegion{
      .addr = 0x10000, .rkey = 77, .chunk_bytes = 65536, .chunk_count = 4, .credits = 2};
}

ReadDescriptor Descriptor(std::uint64_t sequence = 3) {
  return ReadDescriptor{
      .addr = 0x10000 + 65536, .rkey = 77, .length = 1000, .crc = 0xabcdef, .sequence = sequence};
}

TEST(RdmaWireTest, RegionRoundTripsAndRefusesAnyOtherBytes) {
  const std::string bytes = EncodeRegion(Region());
  ASSERT_EQ(bytes.size(), kRdmaRegionBytes);
  auto back = DecodeRegion(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, Region());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeRegion(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeRegion(bytes + "x").ok());
  // Magic, version and padding bits; then impossible values.
  for (std::size_t bit = 0; bit < 64; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(DecodeRegion(flipped).ok()) << bit;
  }
  for (const auto& bad :
       {RdmaRegion{.addr = 0, .rkey = 1, .chunk_bytes = 100, .chunk_count = 1, .credits = 1},
        RdmaRegion{.addr = 0, .rkey = 1, .chunk_bytes = 2 << 20, .chunk_count = 1, .credits = 1},
        RdmaRegion{.addr = 0, .rkey = 1, .chunk_bytes = 4096, .chunk_count = 0, .credits = 1},
        RdmaRegion{.addr = 0, .rkey = 1, .chunk_bytes = 4096, .chunk_count = 1, .credits = 0},
        RdmaRegion{.addr = ~std::uint64_t{0} - 100,
        .rkey = 1,
        .chunk_bytes = 4096,
        .chunk_count = 1,
        .credits = 1}}) {
    EXPECT_EQ(DecodeRegion(EncodeRegion(bad)).error().code, ErrorCode::kCorruption);
  }
}

TEST(RdmaWireTest, RegionChecksDescriptors) {
  const RdmaRegion region = Region();
  EXPECT_TRUE(region.Check(Descriptor()).ok());
  auto with = [](auto change) {
    ReadDescriptor d = Descriptor();
    change(d);
    return d;
  };
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.rkey = 78; })).ok());
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.length = 0; })).ok());
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.length = 65537; })).ok());
  EXPECT_TRUE(region.Check(with([](ReadDescriptor& d) { d.length = 65536; })).ok());
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.addr = 0x10000 - 65536; })).ok());
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.addr += 8; })).ok());
  EXPECT_TRUE(region.Check(with([](ReadDescriptor& d) { d.addr = 0x10000 + 3 * 65536; })).ok());
  EXPECT_FALSE(region.Check(with([](ReadDescriptor& d) { d.addr = 0x10000 + 4 * 65536; })).ok());
}

TEST(RdmaWireTest, DescriptorAndCreditRoundTripStrictly) {
  const std::string bytes = EncodeDescriptor(Descriptor());
  ASSERT_EQ(bytes.size(), kRdmaDescriptorBytes);
  EXPECT_EQ(*DecodeDescriptor(bytes), Descriptor());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeDescriptor(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeDescriptor(bytes + "x").ok());
  ReadDescriptor oversize = Descriptor();
  oversize.length = kMaxPeerChunk + 1;
  EXPECT_EQ(DecodeDescriptor(EncodeDescriptor(oversize)).error().code, ErrorCode::kCorruption);
  oversize.length = 0;
  EXPECT_FALSE(DecodeDescriptor(EncodeDescriptor(oversize)).ok());

  EXPECT_EQ(*DecodeCredit(EncodeCredit(42)), 42u);
  EXPECT_FALSE(DecodeCredit("1234567").ok());
  EXPECT_FALSE(DecodeCredit("123456789").ok());
}

TEST(RdmaWireTest, RequestsAndResponsesInlineOrRemote) {
  RdmaRequest inline_request{.epoch = 9,
                             .request = {.op = 5, .payload = "put", .has_stream = true}};
  auto bytes = EncodeRdmaRequest(inline_request);
  ASSERT_TRUE(bytes.ok());
  auto back = DecodeRdmaRequest(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->epoch, 9u);
  EXPECT_EQ(back->request.op, 5u);
  EXPECT_EQ(back->request.payload, "put");
  EXPECT_TRUE(back->request.has_stream);
  EXPECT_FALSE(back->remote);

  ReadDescriptor payload = Descriptor(0);
  payload.length = kRdmaMaxInline + 1;
  RdmaRequest remote{.epoch = 1, .request = {.op = 2}, .remote = payload};
  back = DecodeRdmaRequest(*EncodeRdmaRequest(remote));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->remote, payload);
  EXPECT_TRUE(back->request.payload.empty());

  RdmaResponse response{.response = {.status = 200, .payload = "ok", .has_stream = true}};
  auto decoded = DecodeRdmaResponse(*EncodeRdmaResponse(response));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->response.status, 200u);
  EXPECT_EQ(decoded->response.payload, "ok");
  EXPECT_TRUE(decoded->response.has_stream);

  // What the encoders refuse.
  EXPECT_EQ(EncodeRdmaRequest({.request = {.payload = std::string(kRdmaMaxInline + 1, 'x')}})
                .error()
                .code,
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(EncodeRdmaRequest({.request = {.payload = "x"}, .remote = payload}).ok());
  ReadDescriptor small = payload;
  small.length = 10;  // would fit inline
  EXPECT_FALSE(EncodeRdmaResponse({.remote = small}).ok());
  ReadDescriptor chunk = payload;
  chunk.sequence = 1;
  EXPECT_FALSE(EncodeRdmaResponse({.remote = chunk}).ok());
}

TEST(RdmaWireTest, RequestDecoderRefusesMalformedPayloads) {
  ReadDescriptor payload = Descriptor(0);
  payload.length = kRdmaMaxInline + 1;
  const std::string remote = *EncodeRdmaRequest({.request = {.op = 2}, .remote = payload});
  // A remote request cut anywhere but its head is an inline one... unless the flag says
  // remote: then every cut is refused.
  for (std::size_t cut = 0; cut < remote.size(); ++cut) {
    EXPECT_FALSE(DecodeRdmaRequest(remote.substr(0, cut)).ok()) << cut;
  }
  std::string flags = remote;
  flags[12] = 4;
  EXPECT_FALSE(DecodeRdmaRequest(flags).ok());
  EXPECT_FALSE(DecodeRdmaResponse(std::string(4, '\0')).ok());
  std::string big_inline(kRequestHeadBytes, '\0');
  big_inline += std::string(kRdmaMaxInline + 1, 'x');
  EXPECT_FALSE(DecodeRdmaRequest(big_inline).ok());
}

TEST(RdmaWireTest, MessagesAreOneWholeFrameOfOneBuffer) {
  auto message = EncodeMessage(FrameType::kCredit, 0, 4, EncodeCredit(1));
  ASSERT_TRUE(message.ok());
  auto frame = DecodeMessage(*message);
  ASSERT_TRUE(frame.ok()) << frame.error().message;
  EXPECT_EQ(frame->type, FrameType::kCredit);
  EXPECT_EQ(frame->request_id, 4u);

  for (std::size_t cut = 0; cut < message->size(); ++cut) {
    EXPECT_FALSE(DecodeMessage(message->substr(0, cut)).ok()) << cut;
  }
  for (std::size_t bit = 0; bit < message->size() * 8; ++bit) {
    std::string flipped = *message;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(DecodeMessage(flipped).ok()) << bit;
  }
  EXPECT_FALSE(DecodeMessage(*message + *message).ok());  // two frames in one SEND
  EXPECT_FALSE(EncodeMessage(FrameType::kRequest, 0, 1, std::string(kRdmaMaxMessage, 'x')).ok());
  // A frame that TCP would take but one RECV buffer cannot hold.
  auto big = EncodeFrame(FrameType::kRequest, 0, 1, std::string(kRdmaMaxMessage, 'x'));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(DecodeMessage(*big).error().code, ErrorCode::kEntityTooLarge);
  EXPECT_EQ(DecodeMessage(big->substr(0, kRdmaMaxMessage)).error().code,
            ErrorCode::kEntityTooLarge);
}

}  // namespace
}  // namespace strata::storage::peer
