// The RDMA peer transport's control messages (storage/peer/rdma_wire.h) and the acceptor's
// state machine (storage/peer/rdma_session.h) on arbitrary bytes, as a broken or hostile
// peer would send them over the queue pair, and the region announcement it would put in
// rdma_cm's private data.
//
// Input: byte 0 is ignored (kept for the format's sake), byte 1's low bit says whether
// the harness first runs a genuine handshake; bytes 2..33 the peer's region announcement;
// the rest the messages, one SEND each, each preceded by its u16 little-endian length.
//
// Properties: no crash, leak or UB; a decoder that accepts re-encodes to the same bytes;
// every descriptor a READ is asked for lies inside the announced region; without the
// genuine handshake no request is ever delivered; a closed session stays closed and says
// nothing more.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/peer/rdma_session.h"
#include "storage/peer/rdma_wire.h"
#include "tests/fuzz/fuzz_check.h"

using namespace strata::storage::peer;  // NOLINT: a harness

namespace {

constexpr const char* kSecret = "fuzz-cluster-secret";

void CheckDecoders(std::string_view bytes) {
  if (auto region = DecodeRegion(bytes); region.ok()) {
    FUZZ_CHECK(EncodeRegion(*region) == bytes, bytes);
  }
  if (auto d = DecodeDescriptor(bytes); d.ok()) {
    FUZZ_CHECK(EncodeDescriptor(*d) == bytes, bytes);
  }
  if (auto request = DecodeRdmaRequest(bytes); request.ok()) {
    auto again = EncodeRdmaRequest(*request);
    FUZZ_CHECK(again.ok() && *again == bytes, bytes);
  }
  if (auto response = DecodeRdmaResponse(bytes); response.ok()) {
    auto again = EncodeRdmaResponse(*response);
    FUZZ_CHECK(again.ok() && *again == bytes, bytes);
  }
  if (auto frame = DecodeMessage(bytes); frame.ok()) {
    FUZZ_CHECK(bytes.size() <= kRdmaMaxMessage, bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 + kRdmaRegionBytes) {
    CheckDecoders(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
  }
  const std::string_view whole(reinterpret_cast<const char*>(data), size);
  const bool genuine = (data[1] & 1) != 0;
  CheckDecoders(whole.substr(2));
  auto region = DecodeRegion(whole.substr(2, kRdmaRegionBytes));
  if (!region.ok()) {
    region = RdmaRegion{
        .addr = 1u << 20, .rkey = 9, .chunk_bytes = 4096, .chunk_count = 4, .credits = 2};
  }
  RdmaSession acceptor(RdmaSession::Options{.role = RdmaSession::Role::kAccept,
                                            .node = "fuzz-acceptor",
                                            .secret = kSecret,
                                            .nonce = std::string(kNonceBytes, 'a'),
                                            .credits = 2,
                                            .peer = *region});
  if (genuine) {
    RdmaSession connector(RdmaSession::Options{.role = RdmaSession::Role::kConnect,
                                               .node = "fuzz-connector",
                                               .secret = kSecret,
                                               .nonce = std::string(kNonceBytes, 'c'),
                                               .credits = 2,
                                               .peer = *region});
    auto hello = connector.Start(1);
    FUZZ_CHECK(hello.size() == 1, whole);
    auto ack = acceptor.OnMessage(hello[0].message, 1);
    FUZZ_CHECK(!ack.empty() && ack[0].act == RdmaSession::Act::kSend, whole);
    auto proof = connector.OnMessage(ack[0].message, 1);
    FUZZ_CHECK(!proof.empty() && proof[0].act == RdmaSession::Act::kSend, whole);
    (void)acceptor.OnMessage(proof[0].message, 1);
    (void)acceptor.OnSendCompleted(true);
    FUZZ_CHECK(acceptor.authenticated(), whole);
  }
  std::string_view rest = whole.substr(2 + kRdmaRegionBytes);
  while (!rest.empty()) {
    std::size_t length = static_cast<unsigned char>(rest[0]);
    if (rest.size() > 1) {
      length |= std::size_t{static_cast<unsigned char>(rest[1])} << 8;
    }
    rest.remove_prefix(std::min<std::size_t>(2, rest.size()));
    const std::string_view message = rest.substr(0, length);
    rest.remove_prefix(message.size());
    CheckDecoders(message);
    const bool was_closed = acceptor.closed();
    auto actions = acceptor.OnMessage(message, 1);
    if (was_closed) {
      FUZZ_CHECK(actions.empty(), message);
    }
    for (const auto& action : actions) {
      switch (action.act) {
        case RdmaSession::Act::kRead:
          FUZZ_CHECK(region->Check(action.read).ok(), message);
          break;
        case RdmaSession::Act::kRequest:
          FUZZ_CHECK(genuine, message);
          break;
        case RdmaSession::Act::kSend:
          FUZZ_CHECK(action.message.size() <= kRdmaMaxMessage, message);
          (void)acceptor.OnSendCompleted(true);
          break;
        default:
          break;
      }
    }
    FUZZ_CHECK(acceptor.sends_in_flight() <= acceptor.max_sends_in_flight(), message);
  }
  return 0;
}
