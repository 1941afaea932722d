// The upload sync's wire format (storage/cluster/upload_sync_wire.h): round trips, and
// refusals of every malformed shape a broken or hostile peer could send.
#include "storage/cluster/upload_sync_wire.h"

#include <gtest/gtest.h>

#include <string>

#include "common/little_endian.h"
#include "metadata/codec.h"

namespace strata::storage::cluster {
namespace {

metadata::UploadRecord Upload() {
  metadata::UploadRecord upload;
  upload.upload_id = UploadId("0000018c-upload");
  upload.initiated_ms = 1'700'000'000'000;
  upload.owner = "AKIDEXAMPLE";
  upload.checksum_algorithm = "CRC32";
  upload.checksum_type = "COMPOSITE";
  upload.object.bucket = BucketName("bucket");
  upload.object.key = ObjectKey("ckpt/model.pt");
  upload.object.content_type = "application/octet-stream";
  upload.object.user_metadata = {{"epoch", "7"}};
  return upload;
}

metadata::PartRecord Part(std::uint32_t number, std::uint64_t size) {
  return metadata::PartRecord{number,
                              size,
                              "0123456789abcdef0123456789abcdef",
                              1'700'000'000'500,
                              {{"CRC32", "AAAAAA=="}, {"CRC64NVME", "AAAAAAAAAAA="}},
                              "hot",
                              "file-1"};
}

// The request's bytes with `upload` and `part` encoded as given, flags as given.
std::string Raw(std::uint8_t flags, const std::string& upload, const std::string* part) {
  std::string out;
  out.push_back(static_cast<char>(kUploadSyncFormat));
  out.push_back(static_cast<char>(flags));
  PutLeString(out, upload);
  if (part != nullptr) {
    PutLeString(out, *part);
  }
  return out;
}

TEST(UploadSyncWire, APartRoundTrips) {
  const std::string bytes = EncodeUploadSync(UploadSyncRequest{Upload(), false, Part(3, 5 << 20)});
  auto decoded = DecodeUploadSync(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_FALSE(decoded->gone);
  EXPECT_EQ(decoded->upload.upload_id.str(), "0000018c-upload");
  EXPECT_EQ(decoded->upload.object.bucket.str(), "bucket");
  EXPECT_EQ(decoded->upload.object.key.str(), "ckpt/model.pt");
  EXPECT_EQ(decoded->upload.checksum_algorithm, "CRC32");
  EXPECT_EQ(decoded->upload.object.user_metadata, Upload().object.user_metadata);
  ASSERT_TRUE(decoded->part.has_value());
  EXPECT_EQ(decoded->part->number, 3u);
  EXPECT_EQ(decoded->part->size, 5u << 20);
  EXPECT_EQ(decoded->part->checksums, Part(3, 0).checksums);
  EXPECT_EQ(EncodeUploadSync(*decoded), bytes);
}

TEST(UploadSyncWire, ACreationAndAnAbortCarryNoPart) {
  auto created = DecodeUploadSync(EncodeUploadSync(UploadSyncRequest{Upload(), false, {}}));
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_FALSE(created->gone);
  EXPECT_FALSE(created->part.has_value());
  auto gone = DecodeUploadSync(EncodeUploadSync(UploadSyncRequest{Upload(), true, {}}));
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_TRUE(gone->gone);
  EXPECT_FALSE(gone->part.has_value());
}

TEST(UploadSyncWire, MalformedRequestsAreRefused) {
  const std::string upload = metadata::EncodeUpload(Upload());
  const std::string part = metadata::EncodePart(Part(1, 10));
  auto refused = [](const std::string& bytes) {
    auto decoded = DecodeUploadSync(bytes);
    return !decoded.ok() && decoded.error().code == ErrorCode::kCorruption;
  };
  EXPECT_TRUE(refused(""));
  EXPECT_TRUE(refused(std::string(1, '\x09')));         // unknown format
  EXPECT_TRUE(refused(Raw(4, upload, nullptr)));        // unknown flag
  EXPECT_TRUE(refused(Raw(3, upload, &part)));          // a part of a gone upload
  EXPECT_TRUE(refused(Raw(2, upload, nullptr)));        // the part is missing
  EXPECT_TRUE(refused(Raw(0, "junk", nullptr)));        // not an upload record
  EXPECT_TRUE(refused(Raw(2, upload, &upload)));        // not a part record
  EXPECT_TRUE(refused(Raw(0, upload, nullptr) + "x"));  // trailing bytes
  auto with = [&](auto change) {
    metadata::UploadRecord bad = Upload();
    change(bad);
    return Raw(0, metadata::EncodeUpload(bad), nullptr);
  };
  EXPECT_TRUE(refused(with([](auto& u) { u.object.bucket = BucketName("ab"); })));
  EXPECT_TRUE(refused(with([](auto& u) { u.object.bucket = BucketName(std::string(64, 'b')); })));
  EXPECT_TRUE(refused(with([](auto& u) { u.object.key = ObjectKey(""); })));
  EXPECT_TRUE(refused(with([](auto& u) { u.object.key = ObjectKey(std::string(1025, 'k')); })));
  EXPECT_TRUE(refused(with([](auto& u) { u.upload_id = UploadId(""); })));
  EXPECT_TRUE(refused(with([](auto& u) { u.upload_id = UploadId(std::string(129, 'u')); })));
  for (const auto& bad : {Part(0, 10), Part(10001, 10), Part(1, (5ull << 30) + 1)}) {
    const std::string encoded = metadata::EncodePart(bad);
    EXPECT_TRUE(refused(Raw(2, upload, &encoded))) << bad.number << " " << bad.size;
  }
  // Every truncation of a good request is refused.
  const std::string good = EncodeUploadSync(UploadSyncRequest{Upload(), false, Part(2, 99)});
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_TRUE(refused(good.substr(0, cut))) << cut;
  }
}

}  // namespace
}  // namespace strata::storage::cluster
