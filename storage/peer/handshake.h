// The peer transport's handshake (private to storage/): two gateways prove to each other
// that they hold the cluster's `secret` ([cluster] secret) before either acts on a
// request, without sending it. Three frames (storage/peer/frame.h):
//   connector -> acceptor  kHello     {node, epoch, nonce}
//   acceptor -> connector  kHelloAck  {node, epoch, nonce, proof("accept")}
//   connector -> acceptor  kHelloAck  {node, epoch, nonce, proof("connect")}
// A proof is HMAC-SHA256(secret, role, both hellos' node, epoch and nonce), so it holds
// only for this connection (a fresh 16-byte random nonce from each side: a recorded
// answer does not replay) and this direction (the role: a proof reflected back does not
// verify). Compared in constant time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata::storage::peer {

inline constexpr std::size_t kNonceBytes = 16;
inline constexpr std::size_t kProofBytes = 32;
inline constexpr std::size_t kMaxNodeName = 255;

enum class HandshakeRole { kAccept, kConnect };

struct Hello {
  std::string node;         // the sender's [cluster] node
  std::uint64_t epoch = 0;  // the membership epoch it knows
  std::string nonce;        // kNonceBytes random bytes
  std::string proof = {};   // empty in the first hello, kProofBytes in the answers
};

// The payload of a kHello / kHelloAck frame:
//   u8 node length, node, u64 epoch (little-endian), nonce, then the proof if any.
// kInvalidArgument when the hello cannot be encoded (name too long or empty, nonce or
// proof of the wrong size).
Result<std::string> EncodeHello(const Hello& hello);
// kCorruption for any payload EncodeHello would not have made.
Result<Hello> DecodeHello(std::string_view payload);

// kNonceBytes from OpenSSL's CSPRNG.
std::string NewNonce();

// The proof `self` sends in `role`, answering (or answered by) `peer`.
std::string Proof(std::string_view secret, HandshakeRole role, const Hello& self,
                  const Hello& peer);
// Whether `claimed.proof` is the proof `claimed`'s sender owes in `role` to `self`.
bool CheckProof(std::string_view secret, HandshakeRole role, const Hello& claimed,
                const Hello& self);

}  // namespace strata::storage::peer
