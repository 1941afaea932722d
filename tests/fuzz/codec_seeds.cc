// Writes the seed corpus of codec_fuzz: records as metadata/codec encodes them, each
// behind its codec_fuzz selector byte. Run: build/fuzz/bin/codec_seeds tests/fuzz/corpus/codec
#include <cstdio>
#include <fstream>
#include <string>

#include "metadata/codec.h"
#include "metadata/keys.h"

using namespace strata;
using namespace strata::metadata;

namespace {

int written = 0;

void Write(const std::string& dir, char selector, const std::string& bytes) {
  std::ofstream(dir + "/seed-" + std::to_string(selector) + "-" + std::to_string(++written),
                std::ios::binary)
      << selector << bytes;
}

ObjectRecord SampleObject() {
  ObjectRecord o;
  o.version_id = VersionId("null");
  o.size = 123456789012ULL;
  o.etag = "0123456789abcdef0123456789abcdef-2";
  o.last_modified_ms = 1'700'000'000'123;
  o.content_type = "application/octet-stream";
  o.system_metadata = {{"cache-control", "no-cache"}, {"content-encoding", "gzip"}};
  o.user_metadata = {{"a", "1"}, {"empty", ""}};
  o.storage_class = "STANDARD_IA";
  o.checksums = {{"CRC64NVME", "AAAAAAAAAAA="}, {"SHA256", "abc="}};
  o.checksum_type = "COMPOSITE";
  o.parts = {{1, 5 << 20, {{"CRC32", "AAAAAA=="}}}, {3, 7, {}}};
  o.placements = {{"hot", {{"0123abcd", 5 << 20}, {"4567ef01", 7}}}, {"cold", {{"s3://x/y", 0}}}};
  o.tags = {{"project", "blue"}, {"caf\xc3\xa9", "\xe2\x82\xac"}};
  o.restore_expiry_ms = 1'700'100'000'000;
  o.restore_ongoing = true;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: codec_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  BucketRecord b;
  b.name = BucketName("seeds");
  b.owner = "strata";
  b.created_ms = 1'700'000'000'000;
  b.region = "eu-west-1";
  b.versioning = "Enabled";
  b.tags = {{"team", "ml"}};
  b.upstream_tier = "cold";
  b.upstream_bucket = "seeds";
  LifecycleRule rule;
  rule.id = "expire-logs";
  rule.filter.form = LifecycleFilter::Form::kAnd;
  rule.filter.prefix = "logs/";
  rule.filter.tags = {{"k", "v"}};
  rule.filter.size_greater_than = 10;
  rule.transitions = {{30, std::nullopt, "STANDARD_IA"}};
  rule.noncurrent_transitions = {{7, 2, "GLACIER"}};
  rule.expiration_days = 365;
  rule.noncurrent_expiration_days = 10;
  rule.abort_incomplete_days = 2;
  b.lifecycle = {rule};
  Write(dir, 0, EncodeBucket(b));
  Write(dir, 0, EncodeBucket(BucketRecord{BucketName("plain"), "strata", 1, ""}));
  Write(dir, 1, EncodeObject(SampleObject()));
  ObjectRecord marker;
  marker.version_id = VersionId("0000000001-abc");
  marker.delete_marker = true;
  Write(dir, 1, EncodeObject(marker));
  UploadRecord u;
  u.upload_id = UploadId("1700000000000-0123456789abcdef");
  u.initiated_ms = 1'700'000'000'000;
  u.owner = "strata";
  u.checksum_algorithm = "CRC32";
  u.checksum_type = "COMPOSITE";
  u.object = SampleObject();
  u.object.bucket = BucketName("seeds");
  u.object.key = ObjectKey("mp");
  Write(dir, 2, EncodeUpload(u));
  Write(dir, 3,
        EncodePart(PartRecord{2,
                              5 << 20,
                              "0123456789abcdef0123456789abcdef",
                              1'700'000'000'000,
                              {{"CRC64NVME", "AAAAAAAAAAA="}},
                              "hot",
                              "0123abcd"}));
  WritebackItem w;
  w.sequence = 42;
  w.enqueued_ms = 1'700'000'000'000;
  w.bytes = 4096;
  w.attempts = 3;
  w.retry_ms = 1'700'000'060'000;
  w.last_error = "503 SlowDown";
  w.upstream_deletes = {"v1", "v2"};
  Write(dir, 4, EncodeWriteback(w));
  Write(dir, 5, EncodeUser(UserRecord{"strata", "strata-secret-key", true, 1'700'000'000'000}));
  Write(dir, 6, EncodeUpstreamLocation(UpstreamLocation{"\"0123abcd\"", "3HL4kqtJlcpXroDTDmJ"}));
  Write(dir, 7, ObjectRowKey("seeds", "dir/key", 42));
  Write(dir, 8, WritebackRowKey("seeds", "dir/key"));
  Write(dir, 9, LifecycleRowKey(LifecycleRow{1'700'000'000'000, "seeds", "dir/key", ""}));
  Write(dir, 9, LifecycleRowKey(LifecycleRow{1'700'000'000'000, "seeds", "mp", "upload-1"}));
  VersionChange change{.version_id = VersionId("3HL4kqtJlcpXroDTDmJ"),
                       .etag = "0123abcd",
                       .last_modified_ms = 1'700'000'000'000,
                       .requires_placement_on = "cold",
                       .refuses_placements_on = {"hot", "warm"},
                       .refuses_storage_class = "GLACIER",
                       .refuses_pinned = VersionChange::Pin{"GLACIER", 1'700'000'000'001}};
  change.edits = {AddPlacementFirst{{"hot", {{"f1", 4096}}}},
                  ReplacePlacement{{"hot", {{"f1", 4096}}}, {"warm", {{"f2", 4096}}}},
                  RemovePlacementsOn{{"hot"}}, SetStorageClass{"GLACIER"},
                  SetRestoreState{1'700'086'400'000, true}};
  Write(dir, 10, EncodeVersionChange(change));
  UploadCompletion completion{
      UploadId("upload-1"), SampleObject(), {{1, "hot", "p1"}, {3, "hot", "p3"}}};
  Write(dir, 11, EncodeUploadCompletion(completion));
  std::printf("%d seeds in %s\n", written, dir.c_str());
  return 0;
}
