#include "auth/internal/crypto.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace strata::auth::internal {
namespace {

std::string Hmac(std::string_view key, std::string_view data) {
  return HexLower(HmacSha256(key, data));
}

// RFC 4231's test cases 1 and 6, and keys at the block size and empty.
TEST(Crypto, HmacSha256MatchesKnownValues) {
  EXPECT_EQ(Hmac(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(
      Hmac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(Hmac(std::string(64, 'k'), "exactly one block of key"),
            "baa93ea4ccc7062ed6870c5e7937dbd35ad7791df4e29df9addeb429ff491acf");
  EXPECT_EQ(Hmac("", ""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(Crypto, Sha256OneShotAndIncremental) {
  EXPECT_EQ(HexLower(Sha256Of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexLower(Sha256Of("")), kEmptySha256);
  Sha256 sha;
  for (int i = 0; i < 10; ++i) {
    sha.Update(std::string(100, 'a'));
  }
  EXPECT_EQ(HexLower(sha.Final()),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  // Final resets: the same context digests the next input from scratch.
  sha.Update("abc");
  EXPECT_EQ(HexLower(sha.Final()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// One-shot digests share a per-thread context; an HMAC nested in another thread's work
// must not see this thread's state.
TEST(Crypto, ThreadsDoNotShareOneShotState) {
  std::string other;
  std::thread t([&] { other = Hmac(std::string(20, '\x0b'), "Hi There"); });
  const std::string here =
      Hmac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First");
  t.join();
  EXPECT_EQ(other, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(here, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

}  // namespace
}  // namespace strata::auth::internal
