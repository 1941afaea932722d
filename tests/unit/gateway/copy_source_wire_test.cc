// The kPeerOpReadVersion request (gateway/copy_source_wire.h): round trips, and refuses
// every cut, trailing bytes, a wrong format, an empty bucket or key, a key over 1024 bytes
// and a range that overflows.
#include "gateway/copy_source_wire.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace strata::gateway {
namespace {

ReadVersionRequest Sample() {
  return ReadVersionRequest{"bucket",
                            "dir/key with spaces",
                            "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrH",
                            "\"9b2cf535f27731c974343645a3985328\"",
                            5 << 20,
                            7 << 20};
}

TEST(CopySourceWire, RoundTrips) {
  const std::string bytes = EncodeReadVersion(Sample());
  auto back = DecodeReadVersion(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->bucket, "bucket");
  EXPECT_EQ(back->key, "dir/key with spaces");
  EXPECT_EQ(back->version_id, "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrH");
  EXPECT_EQ(back->if_etag, "\"9b2cf535f27731c974343645a3985328\"");
  EXPECT_EQ(back->first, 5u << 20);
  EXPECT_EQ(back->length, 7u << 20);
  ReadVersionRequest head_only{"b", "k", "", "", 0, 0};
  auto head = DecodeReadVersion(EncodeReadVersion(head_only));
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->version_id.empty());
  EXPECT_EQ(head->length, 0u);
}

TEST(CopySourceWire, RefusesDamage) {
  const std::string bytes = EncodeReadVersion(Sample());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeReadVersion(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeReadVersion(bytes + "x").ok());
  std::string format = bytes;
  format[0] = 2;
  EXPECT_FALSE(DecodeReadVersion(format).ok());
  ReadVersionRequest bad = Sample();
  bad.bucket.clear();
  EXPECT_FALSE(DecodeReadVersion(EncodeReadVersion(bad)).ok());
  bad = Sample();
  bad.key.clear();
  EXPECT_FALSE(DecodeReadVersion(EncodeReadVersion(bad)).ok());
  bad = Sample();
  bad.key.assign(1025, 'k');
  EXPECT_FALSE(DecodeReadVersion(EncodeReadVersion(bad)).ok());
  bad = Sample();
  bad.first = std::numeric_limits<std::uint64_t>::max();
  bad.length = 2;
  EXPECT_FALSE(DecodeReadVersion(EncodeReadVersion(bad)).ok());
}

}  // namespace
}  // namespace strata::gateway
