// A member's listing page on the wire (gateway/listing_wire.h): round trips, rows split
// across chunks anywhere, and every malformed input refused.
#include "gateway/listing_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/little_endian.h"

namespace strata::gateway {
namespace {

ListingRequest SampleRequest() {
  ListingRequest request;
  request.kind = ListingKind::kVersions;
  request.bucket = "bucket";
  request.prefix = "photos/";
  request.marker = "photos/b";
  request.version_marker = "v123";
  request.limit = 1001;
  return request;
}

metadata::ObjectRecord Record(std::string key, std::string version, std::size_t meta = 0) {
  metadata::ObjectRecord record;
  record.bucket = BucketName("bucket");
  record.key = ObjectKey(std::move(key));
  record.version_id = VersionId(std::move(version));
  record.size = 12345;
  record.etag = "0123456789abcdef0123456789abcdef";
  record.last_modified_ms = 1'700'000'000'000;
  record.user_metadata.emplace_back("m", std::string(meta, 'x'));
  return record;
}

// Every row out of `stream` fed in pieces of `piece` bytes.
std::vector<metadata::VersionEntry> ReadAll(const std::string& stream, std::size_t piece,
                                            bool* failed = nullptr) {
  ListingRowReader reader("bucket");
  std::vector<metadata::VersionEntry> rows;
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    reader.Add(std::string_view(stream).substr(at, piece));
    while (true) {
      auto row = reader.Next();
      if (!row.ok()) {
        if (failed != nullptr) {
          *failed = true;
        }
        return rows;
      }
      if (!row->has_value()) {
        break;
      }
      rows.push_back(std::move(**row));
    }
  }
  EXPECT_FALSE(reader.has_partial());
  return rows;
}

TEST(ListingWireTest, RequestsRoundTripAndCutsAreRefused) {
  const auto request = SampleRequest();
  const std::string bytes = EncodeListingRequest(request);
  auto back = DecodeListingRequest(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kind, ListingKind::kVersions);
  EXPECT_EQ(back->bucket, "bucket");
  EXPECT_EQ(back->prefix, "photos/");
  EXPECT_EQ(back->marker, "photos/b");
  EXPECT_EQ(back->version_marker, "v123");
  EXPECT_EQ(back->limit, 1001u);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeListingRequest(bytes.substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(DecodeListingRequest(bytes + "x").ok());
}

TEST(ListingWireTest, RequestsOutOfRangeAreRefused) {
  auto refused = [](auto edit) {
    auto request = SampleRequest();
    edit(request);
    return !DecodeListingRequest(EncodeListingRequest(request)).ok();
  };
  EXPECT_TRUE(refused([](auto& r) { r.limit = 0; }));
  EXPECT_TRUE(refused([](auto& r) { r.limit = kMaxListingRows + 1; }));
  EXPECT_TRUE(refused([](auto& r) { r.kind = static_cast<ListingKind>(4); }));
  EXPECT_TRUE(refused([](auto& r) { r.bucket = std::string(256, 'b'); }));
  EXPECT_TRUE(refused([](auto& r) { r.prefix = std::string(1025, 'p'); }));
  // A marker past a common prefix is the prefix and 1025 bytes of 0xff.
  EXPECT_FALSE(
      refused([](auto& r) { r.marker = std::string(1024, 'k') + std::string(1025, '\xff'); }));
  EXPECT_FALSE(refused([](auto& r) { r.limit = kMaxListingRows; }));
  std::string bytes = EncodeListingRequest(SampleRequest());
  bytes[0] = 9;
  EXPECT_FALSE(DecodeListingRequest(bytes).ok());
}

TEST(ListingWireTest, AnswersAreTwoBytesExactly) {
  EXPECT_EQ(DecodeListingAnswer(EncodeListingAnswer(true)).value(), true);
  EXPECT_EQ(DecodeListingAnswer(EncodeListingAnswer(false)).value(), false);
  EXPECT_FALSE(DecodeListingAnswer("").ok());
  EXPECT_FALSE(DecodeListingAnswer(EncodeListingAnswer(true) + "x").ok());
  EXPECT_FALSE(DecodeListingAnswer(std::string("\x01\x02", 2)).ok());
}

TEST(ListingWireTest, RowsArriveWholeHoweverTheStreamIsCut) {
  std::string stream;
  std::vector<metadata::ObjectRecord> records;
  for (int i = 0; i < 5; ++i) {
    records.push_back(Record("photos/" + std::to_string(i), "v" + std::to_string(i),
                             static_cast<std::size_t>(i) * 700));
    AppendListingRow(stream, records.back(), i % 2 == 0);
  }
  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{64}, stream.size()}) {
    auto rows = ReadAll(stream, piece);
    ASSERT_EQ(rows.size(), records.size()) << piece;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].record.bucket.str(), "bucket");
      EXPECT_EQ(rows[i].record.key, records[i].key);
      EXPECT_EQ(rows[i].record.version_id, records[i].version_id);
      EXPECT_EQ(rows[i].record.user_metadata, records[i].user_metadata);
      EXPECT_EQ(rows[i].latest, i % 2 == 0);
    }
  }
  // A stream that ends inside a row leaves it partial.
  ListingRowReader reader("bucket");
  reader.Add(std::string_view(stream).substr(0, stream.size() - 1));
  while (true) {
    auto row = reader.Next();
    ASSERT_TRUE(row.ok());
    if (!row->has_value()) {
      break;
    }
  }
  EXPECT_TRUE(reader.has_partial());
}

TEST(ListingWireTest, UploadRowsRoundTrip) {
  metadata::UploadRecord upload;
  upload.upload_id = UploadId("upload-1");
  upload.initiated_ms = 42;
  upload.owner = "strata";
  upload.object = Record("photos/big", "");
  std::string stream;
  AppendUploadRow(stream, upload);
  upload.upload_id = UploadId("upload-2");
  AppendUploadRow(stream, upload);
  ListingRowReader reader("bucket");
  std::vector<metadata::UploadRecord> rows;
  for (char c : stream) {
    reader.Add(std::string_view(&c, 1));
    auto row = reader.NextUpload();
    ASSERT_TRUE(row.ok()) << row.error().message;
    if (row->has_value()) {
      rows.push_back(std::move(**row));
    }
  }
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].upload_id.str(), "upload-1");
  EXPECT_EQ(rows[1].upload_id.str(), "upload-2");
  EXPECT_EQ(rows[1].object.key.str(), "photos/big");
  EXPECT_EQ(rows[1].object.bucket.str(), "bucket");
  EXPECT_EQ(rows[1].owner, "strata");
  // An object row is not an upload.
  std::string object_row;
  AppendListingRow(object_row, Record("k", "v"), false);
  ListingRowReader wrong("bucket");
  wrong.Add(object_row);
  EXPECT_FALSE(wrong.NextUpload().ok());
}

TEST(ListingWireTest, MalformedRowsAreRefusedAsSoonAsTheyShow) {
  // A key length over 1024, known from its 4 bytes alone.
  std::string stream;
  PutLe(stream, 1025, 4);
  bool failed = false;
  ReadAll(stream, 4, &failed);
  EXPECT_TRUE(failed);
  // A record length over the row limit, before its bytes come.
  stream.clear();
  PutLe(stream, 1, 4);
  stream += "k";
  stream.push_back(0);
  PutLe(stream, kMaxListingRowBytes + 1, 4);
  failed = false;
  ReadAll(stream, stream.size(), &failed);
  EXPECT_TRUE(failed);
  // Unknown flags, and a record that does not decode.
  std::string row;
  AppendListingRow(row, Record("k", "v"), false);
  std::string flagged = row;
  flagged[4 + 1] = 2;
  failed = false;
  ReadAll(flagged, flagged.size(), &failed);
  EXPECT_TRUE(failed);
  std::string garbled = row;
  garbled[garbled.size() - 3] ^= 0x55;
  garbled[4 + 1 + 4 + 1] ^= 0x7f;  // the record's first byte: its format
  failed = false;
  ReadAll(garbled, garbled.size(), &failed);
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace strata::gateway
