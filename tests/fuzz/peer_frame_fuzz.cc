// The peer transport's frame decoder and hello parser (storage/peer/) on arbitrary bytes,
// as a peer that is broken or hostile would send them. The first byte picks how the
// stream is split into reads. Properties: no crash or leak; the decoder never buffers more
// than a header and its limit; every frame it yields encodes back to exactly the bytes it
// consumed, and so does its header made from the payload's own CRC (FrameHeader) followed
// by the payload; a hello that parses encodes back to its payload.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/crc64nvme.h"
#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "tests/fuzz/fuzz_check.h"

using strata::storage::peer::AppendFrame;
using strata::storage::peer::DecodeHello;
using strata::storage::peer::EncodeHello;
using strata::storage::peer::FrameDecoder;
using strata::storage::peer::FrameHeader;
using strata::storage::peer::kFrameHeaderBytes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t piece = 1 + data[0] % 64;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr std::uint32_t kLimit = 4096;
  FrameDecoder decoder(kLimit);
  std::string_view rest = input;
  std::size_t frame_start = 0;  // offset in `input` of the frame being read
  while (!rest.empty()) {
    std::string_view chunk = rest.substr(0, piece);
    rest.remove_prefix(chunk.size());
    bool failed = false;
    while (!chunk.empty()) {
      auto next = decoder.Next(chunk);
      FUZZ_CHECK(decoder.buffered() <= kFrameHeaderBytes + kLimit, input);
      if (!next.ok()) {
        failed = true;
        break;
      }
      if (*next) {
        const std::size_t end = input.size() - rest.size() - chunk.size();
        std::string again;
        FUZZ_CHECK(AppendFrame(again, **next).ok(), input);
        FUZZ_CHECK(again == input.substr(frame_start, end - frame_start), input);
        // The same frame made as a header from the payload's own CRC, then the payload.
        const auto& frame = **next;
        auto head = FrameHeader(frame.type, frame.flags, frame.request_id, frame.payload.size(),
                                strata::storage::Crc64Nvme(0, frame.payload));
        FUZZ_CHECK(head.ok() && *head + frame.payload == again, input);
        frame_start = end;
        // Every decoded frame's payload also goes through the hello parser.
        if (auto hello = DecodeHello((*next)->payload); hello.ok()) {
          auto encoded = EncodeHello(*hello);
          FUZZ_CHECK(encoded.ok() && *encoded == (*next)->payload, (*next)->payload);
        }
      }
    }
    if (failed) {
      break;
    }
  }
  if (auto hello = DecodeHello(input); hello.ok()) {
    auto encoded = EncodeHello(*hello);
    FUZZ_CHECK(encoded.ok() && *encoded == input, input);
  }
  return 0;
}
