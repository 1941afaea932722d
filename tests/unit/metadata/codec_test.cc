#include "metadata/codec.h"

#include <gtest/gtest.h>

#include <limits>

#include "metadata/keys.h"

namespace strata::metadata {
namespace {

ObjectRecord SampleObject() {
  ObjectRecord o;
  o.bucket = BucketName("b");
  o.key = ObjectKey("k");
  o.version_id = VersionId("null");
  o.size = 123456789012ULL;
  o.etag = "0123456789abcdef0123456789abcdef";
  o.last_modified_ms = 1'700'000'000'123;
  o.content_type = "application/octet-stream";
  o.system_metadata = {{"cache-control", "no-cache"}, {"content-encoding", "gzip"}};
  o.user_metadata = {{"a", "1"}, {"empty", ""}, {"binary", std::string("\0\xff", 2)}};
  o.storage_class = "STANDARD_IA";
  o.checksums = {{"CRC64NVME", "AAAAAAAAAAA="}, {"SHA256", "abc="}};
  o.checksum_type = "COMPOSITE";
  o.parts = {{1, 5 << 20, {{"CRC32", "AAAAAA=="}}}, {3, 7, {}}};
  o.placements = {{"hot", {{"0123abcd", 5 << 20}, {"4567ef01", 7}}}, {"cold", {{"s3://x/y", 0}}}};
  o.tags = {{"project", "blue"}, {"empty", ""}, {"caf\xc3\xa9", "\xe2\x82\xac"}};
  return o;
}

TEST(CodecTest, VarintRoundTrip) {
  const std::uint64_t values[] = {
      0, 1, 127, 128, 16383, 16384, 1ULL << 35, std::numeric_limits<std::uint64_t>::max()};
  const std::int64_t signed_values[] = {0,
                                        1,
                                        -1,
                                        63,
                                        -64,
                                        1LL << 40,
                                        -(1LL << 40),
                                        std::numeric_limits<std::int64_t>::max(),
                                        std::numeric_limits<std::int64_t>::min()};
  Encoder e;
  for (auto v : values) {
    e.PutVarint(v);
  }
  for (auto v : signed_values) {
    e.PutSignedVarint(v);
  }
  const std::string bytes = std::move(e).Finish();
  Decoder d(bytes);
  for (auto v : values) {
    std::uint64_t got = 0;
    ASSERT_TRUE(d.GetVarint(&got));
    EXPECT_EQ(got, v);
  }
  for (auto v : signed_values) {
    std::int64_t got = 0;
    ASSERT_TRUE(d.GetSignedVarint(&got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(d.done());
}

TEST(CodecTest, OverlongVarintFails) {
  std::string eleven(11, '\x80');
  Decoder d(eleven);
  std::uint64_t v = 0;
  EXPECT_FALSE(d.GetVarint(&v));
  std::string too_big(9, '\xff');
  too_big.push_back('\x02');  // 10th byte may only be 0 or 1
  Decoder d2(too_big);
  EXPECT_FALSE(d2.GetVarint(&v));
}

TEST(CodecTest, ObjectRoundTrip) {
  const ObjectRecord o = SampleObject();
  auto decoded = DecodeObject(EncodeObject(o));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_TRUE(decoded->bucket.empty());
  EXPECT_TRUE(decoded->key.empty());
  EXPECT_EQ(decoded->version_id, o.version_id);
  EXPECT_EQ(decoded->size, o.size);
  EXPECT_EQ(decoded->etag, o.etag);
  EXPECT_EQ(decoded->last_modified_ms, o.last_modified_ms);
  EXPECT_EQ(decoded->content_type, o.content_type);
  EXPECT_EQ(decoded->system_metadata, o.system_metadata);
  EXPECT_EQ(decoded->user_metadata, o.user_metadata);
  EXPECT_EQ(decoded->storage_class, o.storage_class);
  EXPECT_EQ(decoded->checksums, o.checksums);
  EXPECT_EQ(decoded->checksum_type, "COMPOSITE");
  ASSERT_EQ(decoded->parts.size(), 2u);
  EXPECT_EQ(decoded->parts[0].number, 1u);
  EXPECT_EQ(decoded->parts[0].size, 5u << 20);
  EXPECT_EQ(decoded->parts[0].checksums, o.parts[0].checksums);
  EXPECT_EQ(decoded->parts[1].number, 3u);
  ASSERT_EQ(decoded->placements.size(), 2u);
  ASSERT_EQ(decoded->placements[0].extents.size(), 2u);
  EXPECT_EQ(decoded->placements[0].extents[1].location, "4567ef01");
  EXPECT_EQ(decoded->placements[0].extents[1].size, 7u);
  EXPECT_EQ(decoded->placements[1].tier, "cold");
  EXPECT_EQ(decoded->placements[1].extents.at(0).location, "s3://x/y");
  EXPECT_EQ(decoded->tags, o.tags);
}

// Format 2 (delete marker, checksum type and parts; no tags) still decodes, untagged.
TEST(CodecTest, ObjectFormatTwoStillDecodes) {
  Encoder e;
  e.PutByte(2);
  e.PutString("v1");
  e.PutVarint(3);
  e.PutString("etag");
  e.PutSignedVarint(42);
  e.PutString("text/plain");
  e.PutVarint(0);
  e.PutVarint(0);
  e.PutString("STANDARD");
  e.PutVarint(0);
  e.PutVarint(1);  // one placement, one extent
  e.PutString("hot");
  e.PutVarint(1);
  e.PutString("0123abcd");
  e.PutVarint(3);
  e.PutByte(0);  // not a delete marker
  e.PutString("COMPOSITE");
  e.PutVarint(1);  // one part
  e.PutVarint(1);
  e.PutVarint(3);
  e.PutVarint(0);
  const std::string bytes = std::move(e).Finish();
  auto decoded = DecodeObject(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->version_id.str(), "v1");
  EXPECT_EQ(decoded->checksum_type, "COMPOSITE");
  ASSERT_EQ(decoded->parts.size(), 1u);
  EXPECT_TRUE(decoded->tags.empty());
  // Trailing bytes after a format 2 record are still corruption (no tags field there).
  EXPECT_FALSE(DecodeObject(bytes + std::string(1, '\0')).ok());
  // The same fields under format 3 need the tag count.
  std::string as_three = bytes;
  as_three[0] = 3;
  EXPECT_FALSE(DecodeObject(as_three).ok());
  EXPECT_TRUE(DecodeObject(as_three + std::string(1, '\0')).ok());
  // Format 4 adds the restore state: a format 3 record reads as never restored, and
  // a format 4 one needs both fields, the flag 0 or 1.
  auto three = DecodeObject(as_three + std::string(1, '\0'));
  EXPECT_EQ(three->restore_expiry_ms, 0);
  EXPECT_FALSE(three->restore_ongoing);
  std::string as_four = as_three + std::string(1, '\0');
  as_four[0] = 4;
  EXPECT_FALSE(DecodeObject(as_four).ok());
  EXPECT_FALSE(DecodeObject(as_four + std::string(1, '\0')).ok());
  EXPECT_FALSE(DecodeObject(as_four + std::string("\x04\x02", 2)).ok());
  auto four = DecodeObject(as_four + std::string("\x04\x01", 2));
  ASSERT_TRUE(four.ok()) << four.error().message;
  EXPECT_EQ(four->restore_expiry_ms, 2);  // zigzag 4
  EXPECT_TRUE(four->restore_ongoing);
}

// Format 5 adds the completing upload's id: a format 4 record reads with none, and a
// format 5 one needs it.
TEST(CodecTest, ObjectUploadIdRoundTripsAndFormatFourReadsWithout) {
  ObjectRecord o;
  o.version_id = VersionId("v");
  o.upload_id = UploadId("upload-1");
  const std::string bytes = EncodeObject(o);
  auto decoded = DecodeObject(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->upload_id, o.upload_id);
  // Without format 6's five bytes (an empty owner, no grants, no retention, its date 0,
  // no hold) and the upload id ("upload-1": a length byte and 8 bytes), as format 4.
  std::string as_four = bytes.substr(0, bytes.size() - 5 - 9);
  EXPECT_FALSE(DecodeObject(as_four).ok());
  as_four[0] = 4;
  auto four = DecodeObject(as_four);
  ASSERT_TRUE(four.ok()) << four.error().message;
  EXPECT_TRUE(four->upload_id.empty());
}

TEST(CodecTest, ObjectRestoreStateRoundTrips) {
  ObjectRecord o;
  o.version_id = VersionId("v");
  o.restore_expiry_ms = 1'800'000'000'000;
  o.restore_ongoing = true;
  auto decoded = DecodeObject(EncodeObject(o));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->restore_expiry_ms, o.restore_expiry_ms);
  EXPECT_TRUE(decoded->restore_ongoing);
}

// Buckets of formats 1 (no versioning) and 2 (no tags) still decode.
TEST(CodecTest, BucketOlderFormatsStillDecode) {
  for (std::uint8_t format : {1, 2}) {
    Encoder e;
    e.PutByte(format);
    e.PutString("b1");
    e.PutString("AKIA");
    e.PutSignedVarint(5);
    e.PutString("");
    if (format == 2) {
      e.PutString("Enabled");
    }
    auto decoded = DecodeBucket(std::move(e).Finish());
    ASSERT_TRUE(decoded.ok()) << int(format);
    EXPECT_EQ(decoded->versioning, format == 2 ? "Enabled" : "");
    EXPECT_TRUE(decoded->tags.empty());
  }
}

// Format 6 adds the access settings: a format 5 record reads without any.
TEST(CodecTest, BucketAccessRoundTripsAndFormatFiveReadsWithout) {
  BucketRecord b;
  b.name = BucketName("b1");
  b.owner = "AKIA";
  b.access.policy = R"({"Statement": []})";
  b.access.object_ownership = "BucketOwnerEnforced";
  b.access.public_access_block = PublicAccessBlock{true, false, true, false};
  b.access.cors = "<CORSConfiguration/>";  // 20 bytes
  const std::string bytes = EncodeBucket(b);
  auto decoded = DecodeBucket(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->access, b.access);
  for (auto block :
       {std::optional<PublicAccessBlock>(), std::optional<PublicAccessBlock>(PublicAccessBlock{}),
        std::optional<PublicAccessBlock>(PublicAccessBlock{false, true, false, true})}) {
    b.access.public_access_block = block;
    auto again = DecodeBucket(EncodeBucket(b));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->access.public_access_block, block);
  }
  // A flags byte with unknown bits, or flags without the presence bit, is refused.
  // (format 7 ends it with five bytes: no grants, lock off, no default mode, days, years)
  const std::size_t flags_at = bytes.size() - 5 - 1 - 20 - 1;
  ASSERT_EQ(bytes[flags_at], 1 | 2 | 8);
  for (char bad : {'\x20', '\x02'}) {
    std::string changed = bytes;
    changed[flags_at] = bad;
    EXPECT_FALSE(DecodeBucket(changed).ok()) << int(bad);
  }
  // Without the access settings (the policy's length byte and its 17 bytes, the
  // ownership's and its 19, the flags byte, the CORS document's length and its 20), as
  // format 5 wrote it.
  std::string as_five = bytes.substr(0, flags_at - 1 - 19 - 1 - 17);
  EXPECT_FALSE(DecodeBucket(as_five).ok());
  as_five[0] = 5;
  auto five = DecodeBucket(as_five);
  ASSERT_TRUE(five.ok()) << five.error().message;
  // A bucket recorded before ACLs has its owner's private one.
  BucketAccess before_acls;
  before_acls.acl = {AclGrant{AclGrantee::kUser, "AKIA", AclPermission::kFullControl}};
  EXPECT_EQ(five->access, before_acls);
  EXPECT_EQ(five->owner, "AKIA");
}

// Format 7 adds the ACL and the object lock configuration; a format 6 record reads with
// its owner's private ACL and no lock.
TEST(CodecTest, BucketAclAndLockRoundTripAndFormatSixReadsPrivate) {
  BucketRecord b;
  b.name = BucketName("b1");
  b.owner = "alice";
  b.access.acl = {AclGrant{AclGrantee::kUser, "alice", AclPermission::kFullControl},
                  AclGrant{AclGrantee::kAllUsers, "", AclPermission::kRead},
                  AclGrant{AclGrantee::kLogDelivery, "", AclPermission::kWriteAcp}};
  b.access.object_lock = ObjectLockConfig{true, "COMPLIANCE", 0, 7};
  const std::string bytes = EncodeBucket(b);
  auto decoded = DecodeBucket(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->access, b.access);
  // An unknown grantee kind or permission is corruption.
  BucketRecord plain;
  plain.name = BucketName("b2");
  plain.owner = "bob";
  plain.access.acl = {AclGrant{AclGrantee::kUser, "", AclPermission::kRead}};
  std::string one_grant = EncodeBucket(plain);
  // ... grant count 1, grantee 0, user "" (0), permission 1, then the four lock bytes.
  const std::size_t grant_at = one_grant.size() - 4 - 3;
  ASSERT_EQ(one_grant[grant_at], 0);
  ASSERT_EQ(one_grant[grant_at + 2], 1);
  std::string bad_grantee = one_grant;
  bad_grantee[grant_at] = 4;
  EXPECT_FALSE(DecodeBucket(bad_grantee).ok());
  std::string bad_permission = one_grant;
  bad_permission[grant_at + 2] = 5;
  EXPECT_FALSE(DecodeBucket(bad_permission).ok());
  // Format 6: everything before the ACL.
  std::string as_six = one_grant.substr(0, grant_at - 1);
  as_six[0] = 6;
  auto six = DecodeBucket(as_six);
  ASSERT_TRUE(six.ok()) << six.error().message;
  ASSERT_EQ(six->access.acl.size(), 1u);
  EXPECT_EQ(six->access.acl[0], (AclGrant{AclGrantee::kUser, "bob", AclPermission::kFullControl}));
  EXPECT_FALSE(six->access.object_lock.enabled);
}

// Format 6 adds a version's owner, ACL and lock; a format 5 record reads without an owner
// (the bucket's owner owns it, gateway/acl.h) and unlocked.
TEST(CodecTest, ObjectOwnerAclAndLockRoundTripAndFormatFiveReadsWithout) {
  ObjectRecord o;
  o.version_id = VersionId("v");
  o.owner = "carol";
  o.acl = {AclGrant{AclGrantee::kUser, "carol", AclPermission::kFullControl},
           AclGrant{AclGrantee::kAuthenticatedUsers, "", AclPermission::kRead}};
  o.retention_mode = "GOVERNANCE";
  o.retain_until_ms = 1'900'000'000'000;
  o.legal_hold = true;
  const std::string bytes = EncodeObject(o);
  auto decoded = DecodeObject(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->owner, "carol");
  EXPECT_EQ(decoded->acl, o.acl);
  EXPECT_EQ(decoded->retention_mode, "GOVERNANCE");
  EXPECT_EQ(decoded->retain_until_ms, o.retain_until_ms);
  EXPECT_TRUE(decoded->legal_hold);
  std::string bad_hold = bytes;
  bad_hold.back() = 2;
  EXPECT_FALSE(DecodeObject(bad_hold).ok());

  ObjectRecord plain;
  plain.version_id = VersionId("v");
  std::string as_five = EncodeObject(plain);
  as_five.resize(as_five.size() - 5);  // format 6's five bytes
  EXPECT_FALSE(DecodeObject(as_five).ok());
  as_five[0] = 5;
  auto five = DecodeObject(as_five);
  ASSERT_TRUE(five.ok()) << five.error().message;
  EXPECT_TRUE(five->owner.empty());
  EXPECT_TRUE(five->acl.empty());
  EXPECT_TRUE(five->retention_mode.empty());
  EXPECT_FALSE(five->legal_hold);
}

// Records written by format 1 (one location per placement, no parts) still decode: the
// location becomes one extent holding the whole object.
TEST(CodecTest, ObjectFormatOneStillDecodes) {
  Encoder e;
  e.PutByte(1);
  e.PutString("null");
  e.PutVarint(11);
  e.PutString("etag");
  e.PutSignedVarint(42);
  e.PutString("text/plain");
  e.PutVarint(0);
  e.PutVarint(0);
  e.PutString("STANDARD");
  e.PutVarint(1);
  e.PutString("CRC64NVME");
  e.PutString("AAAAAAAAAAA=");
  e.PutVarint(1);
  e.PutString("hot");
  e.PutString("0123abcd");
  auto decoded = DecodeObject(std::move(e).Finish());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->size, 11u);
  EXPECT_EQ(decoded->checksum_type, "FULL_OBJECT");
  EXPECT_TRUE(decoded->parts.empty());
  ASSERT_EQ(decoded->placements.size(), 1u);
  ASSERT_EQ(decoded->placements[0].extents.size(), 1u);
  EXPECT_EQ(decoded->placements[0].extents[0].location, "0123abcd");
  EXPECT_EQ(decoded->placements[0].extents[0].size, 11u);
}

TEST(CodecTest, UploadAndPartRoundTrip) {
  UploadRecord u;
  u.upload_id = UploadId("0190000000001234567890abcdef0123");
  u.initiated_ms = 1'700'000'000'000;
  u.owner = "AKIA";
  u.checksum_algorithm = "CRC32C";
  u.checksum_type = "FULL_OBJECT";
  u.object = SampleObject();
  auto du = DecodeUpload(EncodeUpload(u));
  ASSERT_TRUE(du.ok()) << du.error().message;
  EXPECT_EQ(du->upload_id, u.upload_id);
  EXPECT_EQ(du->initiated_ms, u.initiated_ms);
  EXPECT_EQ(du->owner, "AKIA");
  EXPECT_EQ(du->checksum_algorithm, "CRC32C");
  EXPECT_EQ(du->checksum_type, "FULL_OBJECT");
  EXPECT_EQ(du->object.bucket, u.object.bucket);
  EXPECT_EQ(du->object.key, u.object.key);
  EXPECT_EQ(du->object.user_metadata, u.object.user_metadata);
  EXPECT_EQ(du->object.tags, u.object.tags);  // x-amz-tagging waits here for completion

  PartRecord p{
      10000, 5 << 20, "0123456789abcdef0123456789abcdef", -3, {{"CRC64NVME", "AAAAAAAAAAA="}},
      "hot", "abcdef"};
  auto dp = DecodePart(EncodePart(p));
  ASSERT_TRUE(dp.ok()) << dp.error().message;
  EXPECT_EQ(dp->number, 10000u);
  EXPECT_EQ(dp->size, 5u << 20);
  EXPECT_EQ(dp->etag, p.etag);
  EXPECT_EQ(dp->last_modified_ms, -3);
  EXPECT_EQ(dp->checksums, p.checksums);
  EXPECT_EQ(dp->tier, "hot");
  EXPECT_EQ(dp->location, "abcdef");

  // Every truncation of either encoding is refused, never read past the end.
  for (std::size_t n = 0; n < EncodePart(p).size(); ++n) {
    EXPECT_FALSE(DecodePart(EncodePart(p).substr(0, n)).ok()) << n;
  }
  for (std::size_t n = 0; n < EncodeUpload(u).size(); ++n) {
    EXPECT_FALSE(DecodeUpload(EncodeUpload(u).substr(0, n)).ok()) << n;
  }
}

TEST(CodecTest, BucketAndUserRoundTrip) {
  BucketRecord b{BucketName("my-bucket"),
                 "AKIA",
                 -5,
                 "eu-west-1",
                 "Suspended",
                 {{"team", "ml"}, {"cost-center", "42"}}};
  auto db = DecodeBucket(EncodeBucket(b));
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->versioning, "Suspended");
  EXPECT_EQ(db->tags, b.tags);
  EXPECT_EQ(db->name, b.name);
  EXPECT_EQ(db->owner, b.owner);
  EXPECT_EQ(db->created_ms, b.created_ms);
  EXPECT_EQ(db->region, b.region);

  UserRecord u{"ak", "sk", true, 42, "alice"};
  const std::string user_bytes = EncodeUser(u);
  auto du = DecodeUser(user_bytes);
  ASSERT_TRUE(du.ok());
  EXPECT_EQ(du->access_key, "ak");
  EXPECT_EQ(du->secret_key, "sk");
  EXPECT_TRUE(du->admin);
  EXPECT_EQ(du->created_ms, 42);
  EXPECT_EQ(du->user, "alice");
  // Format 1 had no user: the key is its own user, named as the key.
  std::string as_one = user_bytes.substr(0, user_bytes.size() - 6);  // "alice" and its length
  as_one[0] = 1;
  auto one = DecodeUser(as_one);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->user, "ak");
  EXPECT_FALSE(DecodeUser(user_bytes.substr(0, user_bytes.size() - 6)).ok());
}

TEST(CodecTest, EveryTruncationIsCorruption) {
  const std::string full = EncodeObject(SampleObject());
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto r = DecodeObject(std::string_view(full).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.error().code, ErrorCode::kCorruption);
  }
  const std::string bucket = EncodeBucket({BucketName("abc"), "o", 1, "", "", {{"k", "v"}}});
  for (std::size_t n = 0; n < bucket.size(); ++n) {
    EXPECT_FALSE(DecodeBucket(std::string_view(bucket).substr(0, n)).ok());
  }
  const std::string user = EncodeUser({"a", "b", false, 1});
  for (std::size_t n = 0; n < user.size(); ++n) {
    EXPECT_FALSE(DecodeUser(std::string_view(user).substr(0, n)).ok());
  }
}

TEST(CodecTest, TrailingBytesAndUnknownFormatAreCorruption) {
  std::string full = EncodeObject(SampleObject());
  EXPECT_EQ(DecodeObject(full + "x").error().code, ErrorCode::kCorruption);
  std::string future = full;
  future[0] = static_cast<char>(kObjectFormat + 1);
  EXPECT_EQ(DecodeObject(future).error().code, ErrorCode::kCorruption);
  future[0] = 0;
  EXPECT_EQ(DecodeObject(future).error().code, ErrorCode::kCorruption);
}

TEST(CodecTest, HugeCountsDoNotAllocate) {
  Encoder e;
  e.PutByte(kObjectFormat);
  e.PutString("null");
  e.PutVarint(1);
  e.PutString("etag");
  e.PutSignedVarint(0);
  e.PutString("");
  e.PutVarint(std::numeric_limits<std::uint64_t>::max());  // system_metadata count
  auto r = DecodeObject(std::move(e).Finish());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCorruption);

  Encoder s;
  s.PutByte(kBucketFormat);
  s.PutVarint(1ULL << 60);  // string length far beyond the input
  EXPECT_FALSE(DecodeBucket(std::move(s).Finish()).ok());
}

TEST(CodecTest, UploadCompletionRoundTripsAndRefusesDamage) {
  UploadCompletion completion{
      UploadId("upload-1"), SampleObject(), {{1, "hot", "p1"}, {3, "warm", "p3"}}};
  const std::string bytes = EncodeUploadCompletion(completion);
  auto decoded = DecodeUploadCompletion(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->upload_id.str(), "upload-1");
  EXPECT_EQ(EncodeObject(decoded->object), EncodeObject(SampleObject()));
  ASSERT_EQ(decoded->parts.size(), 2u);
  EXPECT_EQ(decoded->parts[1].number, 3u);
  EXPECT_EQ(decoded->parts[1].tier, "warm");
  EXPECT_EQ(decoded->parts[1].location, "p3");
  EXPECT_EQ(EncodeUploadCompletion(*decoded), bytes);

  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto cut = DecodeUploadCompletion(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(cut.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(cut.error().code, ErrorCode::kCorruption);
  }
  EXPECT_FALSE(DecodeUploadCompletion(bytes + "x").ok());
  std::string newer = bytes;
  newer[0] = static_cast<char>(kUploadCompletionFormat + 1);
  EXPECT_FALSE(DecodeUploadCompletion(newer).ok());

  // A part count far beyond what the input could hold is refused before any allocation.
  Encoder e;
  e.PutByte(kUploadCompletionFormat);
  e.PutString("u");
  e.PutByte(kObjectFormat);
  std::string object = EncodeObject(SampleObject()).substr(1);
  std::string huge = std::move(e).Finish() + object;
  Encoder count;
  count.PutVarint(std::numeric_limits<std::uint64_t>::max());
  huge += std::move(count).Finish();
  EXPECT_FALSE(DecodeUploadCompletion(huge).ok());
}

TEST(KeysTest, VersionsSortNewestFirstAndKeysInOrder) {
  const std::string older = ObjectRowKey("b", "k", 5);
  const std::string newer = ObjectRowKey("b", "k", 6);
  EXPECT_LT(newer, older);
  // "k" and all its versions sort before "k!" and after "j~".
  EXPECT_LT(older, ObjectRowKey("b", "k!", 1000));
  EXPECT_LT(ObjectRowKey("b", "j~", 0), newer);
  // Bucket boundaries: "b" rows come before "b-" and "ba" rows.
  EXPECT_LT(ObjectRowKey("b", "\xff\xff", 0), ObjectRowKey("b-", "a", 0));
  EXPECT_EQ(ObjectRowKey("b", "k", 7).substr(0, ObjectKeyPrefix("b", "k").size()),
            ObjectKeyPrefix("b", "k"));

  const std::string row = ObjectRowKey("bucket", "a/b/c", 42);
  auto parsed = ParseObjectRowKey(row);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->bucket, "bucket");
  EXPECT_EQ(parsed->key, "a/b/c");
  EXPECT_EQ(parsed->sequence, 42u);
  EXPECT_FALSE(ParseObjectRowKey("short").has_value());
  EXPECT_FALSE(ParseObjectRowKey(std::string("nozero-at-all-here")).has_value());
}

}  // namespace
}  // namespace strata::metadata
