// The key sync's wire format (storage/cluster/key_sync_wire.h): round trips, and refusals
// of every malformed shape a broken or hostile peer could send.
#include "storage/cluster/key_sync_wire.h"

#include <gtest/gtest.h>

#include <string>

#include "common/little_endian.h"

namespace strata::storage::cluster {
namespace {

metadata::ObjectRecord Version(const std::string& id, bool marker) {
  metadata::ObjectRecord record;
  record.bucket = BucketName("bucket");
  record.key = ObjectKey("dir/key");
  record.version_id = VersionId(id);
  record.delete_marker = marker;
  record.size = marker ? 0 : 11;
  record.etag = marker ? "" : "0123456789abcdef0123456789abcdef";
  record.last_modified_ms = 1234;
  record.user_metadata = {{"a", "b"}};
  record.checksums = {{"CRC64NVME", "AAAAAAAAAAA="}};
  record.placements = {{"hot", {{"file", 11}}}};
  return record;
}

metadata::WritebackItem Queued() {
  metadata::WritebackItem item;
  item.sequence = 77;
  item.enqueued_ms = 1'700'000'000'000;
  item.bytes = 11;
  item.attempts = 2;
  item.last_error = "503 SlowDown";
  item.upstream_deletes = {"u1", "u2"};
  return item;
}

KeySyncRequest Sample() {
  return KeySyncRequest{
      "bucket",
      "dir/key",
      {SyncedVersion{Version("v2", false), true}, SyncedVersion{Version("m1", true), false},
       SyncedVersion{Version("v0", false), false}},
      Queued()};
}

TEST(KeySyncWire, RequestRoundTrips) {
  const std::string bytes = EncodeKeySync(Sample());
  auto decoded = DecodeKeySync(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->bucket, "bucket");
  EXPECT_EQ(decoded->key, "dir/key");
  ASSERT_EQ(decoded->versions.size(), 3u);
  EXPECT_TRUE(decoded->versions[0].bytes_follow);
  EXPECT_EQ(decoded->versions[0].record.version_id.str(), "v2");
  EXPECT_EQ(decoded->versions[0].record.key.str(), "dir/key");
  EXPECT_EQ(decoded->versions[0].record.bucket.str(), "bucket");
  EXPECT_EQ(decoded->versions[0].record.user_metadata, Version("v2", false).user_metadata);
  EXPECT_TRUE(decoded->versions[1].record.delete_marker);
  EXPECT_FALSE(decoded->versions[2].bytes_follow);
  ASSERT_TRUE(decoded->writeback.has_value());
  EXPECT_EQ(decoded->writeback->enqueued_ms, Queued().enqueued_ms);
  EXPECT_EQ(decoded->writeback->bytes, 11u);
  EXPECT_EQ(decoded->writeback->upstream_deletes, Queued().upstream_deletes);
  EXPECT_EQ(EncodeKeySync(*decoded), bytes);
}

TEST(KeySyncWire, AKeyWithNothingToPushCarriesNoItem) {
  KeySyncRequest clean = Sample();
  clean.writeback.reset();
  auto decoded = DecodeKeySync(EncodeKeySync(clean));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_FALSE(decoded->writeback.has_value());
  EXPECT_EQ(decoded->versions.size(), 3u);
}

TEST(KeySyncWire, ABadWritebackItemIsRefused) {
  KeySyncRequest clean = Sample();
  clean.writeback.reset();
  std::string bytes = EncodeKeySync(clean);
  bytes.back() = 2;  // neither "none" nor "one follows"
  EXPECT_FALSE(DecodeKeySync(bytes).ok());
  bytes.back() = 1;  // one follows, but nothing does
  EXPECT_FALSE(DecodeKeySync(bytes).ok());
  std::string junk = bytes;
  PutLeString(junk, "not an item");
  EXPECT_FALSE(DecodeKeySync(junk).ok());
}

TEST(KeySyncWire, AnEmptyStackIsAKeyWithNoVersions) {
  auto decoded = DecodeKeySync(EncodeKeySync(KeySyncRequest{"bucket", "k", {}, std::nullopt}));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->versions.empty());
}

TEST(KeySyncWire, EveryTruncationAndTrailingByteIsRefused) {
  const std::string bytes = EncodeKeySync(Sample());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto decoded = DecodeKeySync(bytes.substr(0, cut));
    ASSERT_FALSE(decoded.ok()) << "cut at " << cut;
    EXPECT_EQ(decoded.error().code, ErrorCode::kCorruption);
  }
  EXPECT_FALSE(DecodeKeySync(bytes + "x").ok());
}

TEST(KeySyncWire, BadFieldsAreRefused) {
  std::string bytes = EncodeKeySync(Sample());
  bytes[0] = 1;  // the format before the write-back item joined
  EXPECT_FALSE(DecodeKeySync(bytes).ok());

  KeySyncRequest marker_with_bytes = Sample();
  marker_with_bytes.versions[1].bytes_follow = true;
  EXPECT_FALSE(DecodeKeySync(EncodeKeySync(marker_with_bytes)).ok());

  EXPECT_FALSE(DecodeKeySync(EncodeKeySync(KeySyncRequest{
                                 "bucket", std::string(1025, 'k'), {}, std::nullopt}))
                   .ok());
  EXPECT_FALSE(DecodeKeySync(EncodeKeySync(KeySyncRequest{"", "k", {}, std::nullopt})).ok());
  EXPECT_FALSE(DecodeKeySync(EncodeKeySync(KeySyncRequest{"bucket", "", {}, std::nullopt})).ok());

  // Unknown flag bits on the first version.
  std::string flags = EncodeKeySync(Sample());
  const std::size_t first_flag = 1 + 4 + 6 + 4 + 7 + 1 + 4;
  flags[first_flag] = 3;
  EXPECT_FALSE(DecodeKeySync(flags).ok());

  // A count past what the bytes can hold.
  std::string header;
  header.push_back(kKeySyncFormat);
  PutLe(header, 1, 4);
  header += "b";
  PutLe(header, 1, 4);
  header += "k";
  header.push_back(0);  // the records are here
  PutLe(header, kMaxSyncVersions, 4);
  EXPECT_FALSE(DecodeKeySync(header).ok());
  std::string over = header.substr(0, header.size() - 4);
  PutLe(over, kMaxSyncVersions + 1, 4);
  EXPECT_FALSE(DecodeKeySync(over).ok());
}

// A stack too large for the payload: its records travel at the head of the stream.
KeySyncRequest Streamed(std::size_t versions) {
  KeySyncRequest request{"bucket", "dir/key", {}, Queued()};
  for (std::size_t i = 0; i < versions; ++i) {
    request.versions.push_back(
        SyncedVersion{Version("v" + std::to_string(i), i % 3 == 1), i % 3 == 0});
  }
  return request;
}

std::string StreamOf(const KeySyncRequest& request) {
  std::string stream;
  for (const auto& version : request.versions) {
    AppendStreamedVersion(stream, version);
  }
  return stream;
}

TEST(KeySyncWire, StreamedRecordsReadBackInAnyChunking) {
  const KeySyncRequest sent = Streamed(kMaxSyncVersions + 7);
  auto head = DecodeKeySync(EncodeKeySyncHead(sent));
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(head->streamed, kMaxSyncVersions + 7);
  EXPECT_TRUE(head->versions.empty());
  ASSERT_TRUE(head->writeback.has_value());
  const std::string stream = StreamOf(sent) + "BYTES";  // what follows the records stays
  for (std::size_t chunk :
       {std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{97}, std::size_t{1} << 20}) {
    KeySyncRequest request = *head;
    StreamedVersionReader reader(request);
    std::string rest;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      std::string_view data = std::string_view(stream).substr(at, chunk);
      ASSERT_TRUE(reader.Feed(data).ok()) << chunk;
      rest.append(data);
    }
    ASSERT_TRUE(reader.done()) << chunk;
    EXPECT_EQ(rest, "BYTES") << chunk;
    ASSERT_EQ(request.versions.size(), sent.versions.size());
    for (std::size_t i = 0; i < sent.versions.size(); i += 97) {
      EXPECT_EQ(request.versions[i].record.version_id, sent.versions[i].record.version_id);
      EXPECT_EQ(request.versions[i].bytes_follow, sent.versions[i].bytes_follow);
      EXPECT_EQ(request.versions[i].record.key.str(), "dir/key");
    }
  }
}

TEST(KeySyncWire, BadStreamedRecordsAreRefused) {
  auto head = DecodeKeySync(EncodeKeySyncHead(Streamed(3)));
  ASSERT_TRUE(head.ok());
  auto refused = [&](const std::string& stream) {
    KeySyncRequest request = *head;
    StreamedVersionReader reader(request);
    std::string_view data = stream;
    auto fed = reader.Feed(data);
    return !fed.ok() && fed.error().code == ErrorCode::kCorruption;
  };
  std::string junk;
  junk.push_back(0);
  PutLeString(junk, "not a record");
  EXPECT_TRUE(refused(junk));
  std::string flags = StreamOf(Streamed(1));
  flags[0] = 2;  // unknown flag
  EXPECT_TRUE(refused(flags));
  KeySyncRequest marker = Streamed(2);
  marker.versions[1].bytes_follow = true;  // bytes on a delete marker
  EXPECT_TRUE(refused(StreamOf(marker)));
  std::string huge;
  huge.push_back(0);
  PutLe(huge, kMaxStreamedRecord + 1, 4);
  EXPECT_TRUE(refused(huge));
  // Records past the bytes a sync may hold: good ones, refused once they add up to more.
  KeySyncRequest many = *head;
  many.streamed = kMaxStreamedVersions;
  StreamedVersionReader reader(many);
  SyncedVersion large{Version("large", false), false};
  large.record.user_metadata = {{"a", std::string(kMaxStreamedRecord - 4096, 'x')}};
  std::string one;
  AppendStreamedVersion(one, large);
  ASSERT_LE(one.size(), kMaxStreamedRecord + 5);
  std::size_t accepted = 0;
  for (; accepted <= kMaxStreamedRecordBytes / one.size() + 1; ++accepted) {
    std::string_view data = one;
    auto fed = reader.Feed(data);
    if (!fed.ok()) {
      EXPECT_NE(fed.error().message.find("limit"), std::string::npos) << fed.error().message;
      break;
    }
  }
  EXPECT_EQ(accepted, kMaxStreamedRecordBytes / one.size());

  // Heads with a count of none, or over the streamed limit.
  std::string zero = EncodeKeySyncHead(Streamed(0));
  EXPECT_FALSE(DecodeKeySync(zero).ok());
  std::string bad_where = EncodeKeySyncHead(Streamed(3));
  bad_where[1 + 4 + 6 + 4 + 7] = 2;
  EXPECT_FALSE(DecodeKeySync(bad_where).ok());
  std::string over = EncodeKeySyncHead(Streamed(3));
  over.replace(1 + 4 + 6 + 4 + 7 + 1, 4, std::string("\xa1\x86\x01\x00", 4));  // 100,001
  EXPECT_FALSE(DecodeKeySync(over).ok());
}

TEST(KeySyncWire, AnswersRoundTripAndBadOnesAreRefused) {
  auto missing = DecodeKeySyncAnswer(EncodeKeySyncAnswer({0, 2}), 3);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, (std::vector<std::uint32_t>{0, 2}));
  auto applied = DecodeKeySyncAnswer(EncodeKeySyncAnswer({}), 3);
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(applied->empty());
  EXPECT_FALSE(DecodeKeySyncAnswer(EncodeKeySyncAnswer({3}), 3).ok());     // out of range
  EXPECT_FALSE(DecodeKeySyncAnswer(EncodeKeySyncAnswer({1, 1}), 3).ok());  // repeated
  EXPECT_FALSE(DecodeKeySyncAnswer(EncodeKeySyncAnswer({2, 1}), 3).ok());  // out of order
  EXPECT_FALSE(DecodeKeySyncAnswer(EncodeKeySyncAnswer({0}) + "x", 3).ok());
  EXPECT_FALSE(DecodeKeySyncAnswer("", 3).ok());
}

TEST(KeySyncWire, CatchUpMessagesRoundTripAndBadOnesAreRefused) {
  auto range = DecodeKeyRange(EncodeKeyRange(KeyRange{"bucket", "a/key"}));
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->bucket, "bucket");
  EXPECT_EQ(range->key, "a/key");
  EXPECT_TRUE(DecodeKeyRange(EncodeKeyRange(KeyRange{"bucket", ""})).ok());  // from the start
  EXPECT_FALSE(DecodeKeyRange(EncodeKeyRange(KeyRange{"", "k"})).ok());
  EXPECT_FALSE(DecodeKeyRange(EncodeKeyRange(KeyRange{"bucket", std::string(1025, 'k')})).ok());
  const std::string bytes = EncodeKeyRange(KeyRange{"bucket", "k"});
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeKeyRange(bytes.substr(0, cut)).ok());
  }
  EXPECT_FALSE(DecodeKeyRange(bytes + "x").ok());

  auto answer = DecodeCatchUpAnswer(EncodeCatchUpAnswer(CatchUpAnswer{true, "next"}));
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->done);
  EXPECT_EQ(answer->next, "next");
  std::string bad = EncodeCatchUpAnswer(CatchUpAnswer{false, "n"});
  bad[0] = 2;  // unknown flags
  EXPECT_FALSE(DecodeCatchUpAnswer(bad).ok());
  EXPECT_FALSE(DecodeCatchUpAnswer("").ok());
}

TEST(KeySyncWire, PullAnswerRoundTripsAndRefusesDamage) {
  const std::string bytes = EncodePullAnswer(PullAnswer{true, 5'000'000'000});
  auto answer = DecodePullAnswer(bytes);
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->keep);
  EXPECT_EQ(answer->moved, 5'000'000'000u);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodePullAnswer(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodePullAnswer(bytes + "x").ok());
  std::string bad = bytes;
  bad[0] = 2;  // neither synced nor keep
  EXPECT_FALSE(DecodePullAnswer(bad).ok());
}

}  // namespace
}  // namespace strata::storage::cluster
