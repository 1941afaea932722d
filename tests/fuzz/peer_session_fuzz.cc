// The peer transport's server side of a connection (storage/peer/session.h, what
// TcpTransport runs for every accepted socket) on arbitrary bytes, as a caller that is
// broken or hostile would send them: the handshake, then requests and their streams.
//
// Input: byte 0 picks the size of the reads (1 to 64 bytes); byte 1's low bit whether the
// harness first runs a genuine handshake (so that the fuzzer explores requests and
// streams), its next two bits the server's membership epoch (0 to 3); the rest is what the
// caller sends. The server's nonce is a hash of the whole input, so no input can carry a
// proof for it: without the harness's handshake, the session never authenticates.
//
// Properties: no crash, leak or UB; without the genuine handshake, no kAuthenticated and
// no request ever; with it, nothing but requests, chunks and ends, a chunk only inside a
// request's stream, every end after a request with a stream; the session never holds more
// than a frame header and kMaxFramePayload; once failed it stays failed; a farewell only
// for a stale epoch, and then a kError frame that decodes to it.
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/peer/frame.h"
#include "storage/peer/handshake.h"
#include "storage/peer/session.h"
#include "storage/peer/wire.h"
#include "tests/fuzz/fuzz_check.h"

using strata::ErrorCode;
using strata::storage::IsStaleEpoch;
using strata::storage::kMaxPeerChunk;
using strata::storage::peer::ClientHandshake;
using strata::storage::peer::DecodeError;
using strata::storage::peer::FrameDecoder;
using strata::storage::peer::FrameType;
using strata::storage::peer::kFrameHeaderBytes;
using strata::storage::peer::kMaxFramePayload;
using strata::storage::peer::kNonceBytes;
using strata::storage::peer::ServerSession;

namespace {

constexpr const char* kSecret = "fuzz-cluster-secret";

std::string NonceOf(std::string_view input) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), kNonceBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  const std::string_view whole(reinterpret_cast<const char*>(data), size);
  const std::size_t piece = 1 + data[0] % 64;
  const bool genuine = (data[1] & 1) != 0;
  const std::uint64_t epoch = (data[1] >> 1) & 3;
  const std::string_view input = whole.substr(2);

  ServerSession session("fuzz-server", kSecret, NonceOf(whole));
  if (genuine) {
    // A real caller's handshake, at the server's epoch, fed whole.
    ClientHandshake client("fuzz-client", kSecret, epoch, std::string(kNonceBytes, 'c'));
    auto hello = client.HelloFrame();
    FUZZ_CHECK(hello.ok(), whole);
    std::string_view in = *hello;
    auto sent = session.Next(in, epoch);
    FUZZ_CHECK(sent.ok() && *sent && (*sent)->kind == ServerSession::Kind::kSend, whole);
    FrameDecoder decoder;
    std::string_view answer_bytes = (*sent)->bytes;
    auto answer = decoder.Next(answer_bytes);
    FUZZ_CHECK(answer.ok() && *answer, whole);
    auto reply = client.OnAnswer(**answer);
    FUZZ_CHECK(reply.ok(), whole);
    in = *reply;
    auto done = session.Next(in, epoch);
    FUZZ_CHECK(done.ok() && *done && (*done)->kind == ServerSession::Kind::kAuthenticated, whole);
  }

  bool in_stream = false;
  bool failed = false;
  std::string_view rest = input;
  while (!rest.empty() && !failed) {
    std::string_view chunk = rest.substr(0, piece);
    rest.remove_prefix(chunk.size());
    while (!chunk.empty()) {
      auto event = session.Next(chunk, epoch);
      FUZZ_CHECK(session.buffered() <= kFrameHeaderBytes + kMaxFramePayload, input);
      if (!event.ok()) {
        failed = true;
        const auto& error = event.error();
        if (!session.farewell().empty()) {
          FUZZ_CHECK(IsStaleEpoch(error), input);
          FrameDecoder decoder;
          std::string_view bytes = session.farewell();
          auto frame = decoder.Next(bytes);
          FUZZ_CHECK(frame.ok() && *frame && (*frame)->type == FrameType::kError, input);
          auto decoded = DecodeError((*frame)->payload);
          FUZZ_CHECK(decoded.ok() && decoded->closing && IsStaleEpoch(decoded->error), input);
        } else {
          FUZZ_CHECK(error.code != ErrorCode::kPreconditionFailed, input);
        }
        // Failed for good.
        std::string_view more = "more bytes";
        FUZZ_CHECK(!session.Next(more, epoch).ok(), input);
        break;
      }
      if (!*event) {
        continue;
      }
      const auto kind = (*event)->kind;
      if (!genuine) {
        // Only the answer to a hello; never past the proof.
        FUZZ_CHECK(kind == ServerSession::Kind::kSend, input);
        FUZZ_CHECK(!session.authenticated(), input);
        continue;
      }
      switch (kind) {
        case ServerSession::Kind::kRequest:
          FUZZ_CHECK(!in_stream, input);
          in_stream = (*event)->request.has_stream;
          break;
        case ServerSession::Kind::kData:
          FUZZ_CHECK(in_stream, input);
          FUZZ_CHECK(!(*event)->bytes.empty() && (*event)->bytes.size() <= kMaxPeerChunk, input);
          break;
        case ServerSession::Kind::kEnd:
          FUZZ_CHECK(in_stream, input);
          in_stream = false;
          break;
        case ServerSession::Kind::kSend:
        case ServerSession::Kind::kAuthenticated:
          FUZZ_CHECK(false, input);  // the handshake is over
          break;
      }
    }
  }
  return 0;
}
