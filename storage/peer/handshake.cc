#include "storage/peer/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace strata::storage::peer {
namespace {

void PutU64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// node, epoch and nonce of a hello, each length-prefixed where it varies: the bytes a
// proof covers.
void AppendIdentity(std::string& out, const Hello& hello) {
  out.push_back(static_cast<char>(hello.node.size()));
  out += hello.node;
  PutU64(out, hello.epoch);
  out += hello.nonce;
}

}  // namespace

Result<std::string> EncodeHello(const Hello& hello) {
  if (hello.node.empty() || hello.node.size() > kMaxNodeName) {
    return Error(ErrorCode::kInvalidArgument,
                 "peer hello: node name of " + std::to_string(hello.node.size()) + " bytes");
  }
  if (hello.nonce.size() != kNonceBytes ||
      (!hello.proof.empty() && hello.proof.size() != kProofBytes)) {
    return Error(ErrorCode::kInvalidArgument, "peer hello: nonce or proof of the wrong size");
  }
  std::string out;
  AppendIdentity(out, hello);
  out += hello.proof;
  return out;
}

Result<Hello> DecodeHello(std::string_view payload) {
  const auto bad = [](const char* what) {
    return Error(ErrorCode::kCorruption, std::string("peer hello: ") + what);
  };
  if (payload.empty()) {
    return bad("empty");
  }
  const std::size_t name = static_cast<unsigned char>(payload[0]);
  if (name == 0) {
    return bad("no node name");
  }
  const std::size_t fixed = 1 + name + 8 + kNonceBytes;
  if (payload.size() != fixed && payload.size() != fixed + kProofBytes) {
    return bad("wrong length");
  }
  Hello hello;
  hello.node = std::string(payload.substr(1, name));
  for (int i = 7; i >= 0; --i) {
    hello.epoch = (hello.epoch << 8) |
                  static_cast<unsigned char>(payload[1 + name + static_cast<std::size_t>(i)]);
  }
  hello.nonce = std::string(payload.substr(1 + name + 8, kNonceBytes));
  hello.proof = std::string(payload.substr(fixed));
  return hello;
}

std::string NewNonce() {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(kNonceBytes)) !=
      1) {
    // No randomness means no safe handshake at all: never go on with a predictable nonce.
    throw std::runtime_error("RAND_bytes failed: no nonce for the peer handshake");
  }
  return nonce;
}

std::string Proof(std::string_view secret, HandshakeRole role, const Hello& self,
                  const Hello& peer) {
  std::string message =
      role == HandshakeRole::kAccept ? "strata-peer-v1 accept" : "strata-peer-v1 connect";
  message.push_back('\0');
  AppendIdentity(message, self);
  AppendIdentity(message, peer);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  return std::string(reinterpret_cast<const char*>(mac), length);
}

bool CheckProof(std::string_view secret, HandshakeRole role, const Hello& claimed,
                const Hello& self) {
  if (claimed.proof.size() != kProofBytes) {
    return false;
  }
  const std::string expected = Proof(secret, role, claimed, self);
  return CRYPTO_memcmp(expected.data(), claimed.proof.data(), kProofBytes) == 0;
}

}  // namespace strata::storage::peer
