#include "storage/multipart.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "storage/checksum.h"
#include "tests/unit/storage/test_bytes.h"

namespace strata::storage {
namespace {

using testing::ChecksumOf;
using testing::Md5Hex;
using testing::RandomBytes;

using metadata::PartRecord;
using metadata::UploadRecord;

// Hex to bytes, written here rather than borrowed so MultipartEtag is checked against an
// independent computation.
std::string HexToBytes(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

const std::string* Find(const std::vector<std::pair<std::string, std::string>>& checksums,
                        const std::string& name) {
  for (const auto& [n, v] : checksums) {
    if (n == name) {
      return &v;
    }
  }
  return nullptr;
}

// A part made from real bytes, with CRC64NVME and `extra` checksums as the store keeps them.
PartRecord RealPart(std::uint32_t number, const std::string& data,
                    const std::vector<ChecksumAlgorithm>& extra = {}) {
  PartRecord part;
  part.number = number;
  part.size = data.size();
  part.etag = Md5Hex(data);
  part.last_modified_ms = 5;
  for (auto algorithm : extra) {
    part.checksums.emplace_back(std::string(ChecksumName(algorithm)), ChecksumOf(algorithm, data));
  }
  part.checksums.emplace_back("CRC64NVME", ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, data));
  part.tier = "hot";
  part.location = "loc" + std::to_string(number);
  return part;
}

// A part whose bytes are not needed: its size and digests are made up but well formed.
PartRecord FakePart(std::uint32_t number, std::uint64_t size = kMinPartSize) {
  PartRecord part = RealPart(number, "part " + std::to_string(number));
  part.size = size;
  return part;
}

UploadRecord Upload(const std::string& algorithm = "", const std::string& type = "") {
  UploadRecord upload;
  upload.upload_id = UploadId("u1");
  upload.initiated_ms = 1;
  upload.owner = "alice";
  upload.checksum_algorithm = algorithm;
  upload.checksum_type = type;
  upload.object.bucket = BucketName("bucket");
  upload.object.key = ObjectKey("key");
  upload.object.content_type = "video/mp4";
  upload.object.user_metadata = {{"color", "red"}};
  upload.object.storage_class = "STANDARD";
  return upload;
}

CompletedPart Named(const PartRecord& part) { return {part.number, part.etag, {}}; }

CompletionRequest Naming(const std::vector<PartRecord>& parts) {
  CompletionRequest request;
  for (const auto& part : parts) {
    request.parts.push_back(Named(part));
  }
  return request;
}

// The error's code, nullopt on success: compares with an expected code in one EXPECT_EQ.
std::optional<ErrorCode> CodeOf(const Result<metadata::ObjectRecord>& r) {
  return r.ok() ? std::nullopt : std::optional<ErrorCode>(r.error().code);
}

// ---- ResolveChecksumType ----

TEST(ResolveChecksumType, DefaultsByAlgorithm) {
  EXPECT_EQ(ResolveChecksumType("", "").value(), "");
  EXPECT_EQ(ResolveChecksumType("CRC32", "").value(), "COMPOSITE");
  EXPECT_EQ(ResolveChecksumType("CRC32C", "").value(), "COMPOSITE");
  EXPECT_EQ(ResolveChecksumType("SHA1", "").value(), "COMPOSITE");
  EXPECT_EQ(ResolveChecksumType("SHA256", "").value(), "COMPOSITE");
  EXPECT_EQ(ResolveChecksumType("CRC64NVME", "").value(), "FULL_OBJECT");
}

TEST(ResolveChecksumType, AcceptsWhatS3Accepts) {
  for (const char* algorithm : {"CRC32", "CRC32C", "CRC64NVME"}) {
    auto r = ResolveChecksumType(algorithm, "FULL_OBJECT");
    ASSERT_TRUE(r.ok()) << algorithm;
    EXPECT_EQ(*r, "FULL_OBJECT");
  }
  for (const char* algorithm : {"CRC32", "CRC32C", "SHA1", "SHA256"}) {
    auto r = ResolveChecksumType(algorithm, "COMPOSITE");
    ASSERT_TRUE(r.ok()) << algorithm;
    EXPECT_EQ(*r, "COMPOSITE");
  }
}

TEST(ResolveChecksumType, RefusesWhatS3Refuses) {
  const std::pair<const char*, const char*> refused[] = {
      {"", "COMPOSITE"},           // a type needs an algorithm
      {"", "FULL_OBJECT"},         //
      {"SHA1", "FULL_OBJECT"},     // SHAs do not combine
      {"SHA256", "FULL_OBJECT"},   //
      {"CRC64NVME", "COMPOSITE"},  // CRC64NVME is always full-object
      {"MD5", ""},                 // not a checksum algorithm
      {"CRC16", "COMPOSITE"},      //
      {"CRC32", "BOGUS"},          // not a type
      {"CRC32", "full_object"},    // types are case-sensitive
  };
  for (const auto& [algorithm, type] : refused) {
    auto r = ResolveChecksumType(algorithm, type);
    ASSERT_FALSE(r.ok()) << algorithm << "/" << type;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidRequest) << algorithm << "/" << type;
  }
}

// ---- MultipartEtag ----

TEST(MultipartEtag, IsMd5OfBinaryMd5sWithCount) {
  const std::vector<std::string> etags = {Md5Hex("a"), Md5Hex("b"), Md5Hex("c")};
  const std::string expected =
      Md5Hex(HexToBytes(etags[0]) + HexToBytes(etags[1]) + HexToBytes(etags[2])) + "-3";
  EXPECT_EQ(MultipartEtag(etags), expected);
  // The same value computed outside C++ (Python hashlib), so the helper above is honest.
  EXPECT_EQ(expected, "4054c6f7787ecb7b323323155b0c0583-3");
  EXPECT_EQ(MultipartEtag({Md5Hex("a")}), "b6ff9a06b7e20bcb2858c5b8ff744aea-1");
}

TEST(MultipartEtag, AcceptsUpperCaseHex) {
  EXPECT_EQ(MultipartEtag({"0CC175B9C0F1B6A831C399E269772661"}),
            "b6ff9a06b7e20bcb2858c5b8ff744aea-1");
}

TEST(MultipartEtag, RejectsMalformedEtags) {
  const std::string good = Md5Hex("a");
  for (const std::string& bad :
       {good.substr(1), good + "0", "\"" + good + "\"", std::string(32, 'g'),
        good.substr(0, 31) + "-", good.substr(0, 30) + "-1", std::string(), std::string(32, ' ')}) {
    EXPECT_EQ(MultipartEtag({good, bad}), std::nullopt) << bad;
    EXPECT_EQ(MultipartEtag({bad}), std::nullopt) << bad;
  }
}

// ---- BuildUploadedObject: which completions are refused ----

TEST(BuildUploadedObject, NoPartsIsMalformedXml) {
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), {FakePart(1)}, CompletionRequest{}, 0)),
            ErrorCode::kMalformedXml);
}

TEST(BuildUploadedObject, PartsMustAscendStrictly) {
  const std::vector<PartRecord> stored = {FakePart(1), FakePart(2), FakePart(3)};
  CompletionRequest descending = Naming({stored[1], stored[0]});
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, descending, 0)),
            ErrorCode::kInvalidPartOrder);
  CompletionRequest duplicate = Naming({stored[0], stored[1], stored[1]});
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, duplicate, 0)),
            ErrorCode::kInvalidPartOrder);
  // Order is checked before existence: a later unknown part does not mask it.
  CompletionRequest both = Naming({stored[2], stored[0]});
  both.parts.push_back({9, stored[0].etag, {}});
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, both, 0)), ErrorCode::kInvalidPartOrder);
}

TEST(BuildUploadedObject, UnknownPartWrongEtagOrChecksumIsInvalidPart) {
  const std::vector<PartRecord> stored = {FakePart(1), FakePart(3)};
  CompletionRequest unknown = Naming(stored);
  unknown.parts.insert(unknown.parts.begin() + 1, {2, stored[0].etag, {}});
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, unknown, 0)), ErrorCode::kInvalidPart);

  CompletionRequest past_end = Naming(stored);
  past_end.parts.push_back({4, stored[1].etag, {}});
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, past_end, 0)), ErrorCode::kInvalidPart);

  CompletionRequest wrong_etag = Naming(stored);
  wrong_etag.parts[1].etag = Md5Hex("something else");
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, wrong_etag, 0)), ErrorCode::kInvalidPart);

  CompletionRequest wrong_checksum = Naming(stored);
  wrong_checksum.parts[0].checksums = {{"CRC64NVME", "AAAAAAAAAAA="}};
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, wrong_checksum, 0)),
            ErrorCode::kInvalidPart);

  // A checksum the part was not stored with cannot be confirmed either.
  CompletionRequest absent_checksum = Naming(stored);
  absent_checksum.parts[0].checksums = {{"CRC32", "AAAAAA=="}};
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, absent_checksum, 0)),
            ErrorCode::kInvalidPart);

  // The right checksum is accepted.
  CompletionRequest right_checksum = Naming(stored);
  right_checksum.parts[0].checksums = {{"CRC64NVME", *Find(stored[0].checksums, "CRC64NVME")}};
  EXPECT_TRUE(BuildUploadedObject(Upload(), stored, right_checksum, 0).ok());
}

TEST(BuildUploadedObject, OnlyTheLastPartMayBeSmall) {
  const std::vector<PartRecord> small_middle = {FakePart(1), FakePart(2, kMinPartSize - 1),
                                                FakePart(3)};
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), small_middle, Naming(small_middle), 0)),
            ErrorCode::kEntityTooSmall);

  const std::vector<PartRecord> small_last = {FakePart(1), FakePart(2), FakePart(3, 1)};
  EXPECT_TRUE(BuildUploadedObject(Upload(), small_last, Naming(small_last), 0).ok());

  const std::vector<PartRecord> single_small = {FakePart(7, 0)};
  auto single = BuildUploadedObject(Upload(), single_small, Naming(single_small), 0);
  ASSERT_TRUE(single.ok()) << single.error().message;
  EXPECT_EQ(single->size, 0u);

  // A small part that is not named does not count, even when it sits between named ones.
  const std::vector<PartRecord> skipped = {FakePart(1), FakePart(2, 10), FakePart(3)};
  EXPECT_TRUE(BuildUploadedObject(Upload(), skipped, Naming({skipped[0], skipped[2]}), 0).ok());
}

TEST(PartsUsed, NamesTheStoredFilesOfTheNamedPartsOnly) {
  const std::vector<PartRecord> stored = {FakePart(1), FakePart(2), FakePart(3)};
  CompletionRequest request = Naming({stored[0], stored[2]});
  request.parts.push_back({9, "absent", {}});  // BuildUploadedObject refuses it
  const auto used = PartsUsed(stored, request);
  ASSERT_EQ(used.size(), 2u);
  EXPECT_EQ(used[0].number, 1u);
  EXPECT_EQ(used[0].tier, stored[0].tier);
  EXPECT_EQ(used[0].location, stored[0].location);
  EXPECT_EQ(used[1].number, 3u);
  EXPECT_EQ(used[1].location, stored[2].location);
}

TEST(BuildUploadedObject, ObjectSizeHeaderMustMatch) {
  const std::vector<PartRecord> stored = {FakePart(1), FakePart(2, 123)};
  CompletionRequest request = Naming(stored);
  request.object_size = kMinPartSize + 123;
  EXPECT_TRUE(BuildUploadedObject(Upload(), stored, request, 0).ok());
  request.object_size = kMinPartSize + 124;
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, request, 0)), ErrorCode::kInvalidRequest);
  request.object_size = 0;
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload(), stored, request, 0)), ErrorCode::kInvalidRequest);
}

TEST(BuildUploadedObject, PartWithoutTheUploadsAlgorithmIsRefused) {
  // An upload created with CRC32 whose part somehow lacks it (a bug or an old record).
  const std::vector<PartRecord> stored = {FakePart(1)};
  EXPECT_EQ(CodeOf(BuildUploadedObject(Upload("CRC32"), stored, Naming(stored), 0)),
            ErrorCode::kInvalidRequest);
}

// ---- BuildUploadedObject: the object it makes ----

// Three parts of real bytes (5 MiB, 5 MiB, 1000 bytes) and one unnamed part, built once.
class BuiltObjectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::vector<ChecksumAlgorithm> all = {
        ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kSha1,
        ChecksumAlgorithm::kSha256};
    data_ = new std::vector<std::string>{RandomBytes(kMinPartSize, 1), RandomBytes(77, 2),
                                         RandomBytes(kMinPartSize, 3), RandomBytes(1000, 4)};
    stored_ = new std::vector<PartRecord>;
    // Numbers 1, 2 (unnamed in completions), 5, 9: gaps are allowed.
    const std::uint32_t numbers[] = {1, 2, 5, 9};
    for (std::size_t i = 0; i < data_->size(); ++i) {
      stored_->push_back(RealPart(numbers[i], (*data_)[i], all));
    }
  }
  static void TearDownTestSuite() {
    delete data_;
    delete stored_;
  }

  static std::vector<PartRecord> Stored() { return *stored_; }
  static std::vector<PartRecord> NamedParts() {
    return {(*stored_)[0], (*stored_)[2], (*stored_)[3]};
  }
  static std::string NamedBytes() { return (*data_)[0] + (*data_)[2] + (*data_)[3]; }

  static std::vector<std::string>* data_;
  static std::vector<PartRecord>* stored_;
};

std::vector<std::string>* BuiltObjectTest::data_ = nullptr;
std::vector<PartRecord>* BuiltObjectTest::stored_ = nullptr;

TEST_F(BuiltObjectTest, DescribesTheNamedPartsInOrder) {
  auto object = BuildUploadedObject(Upload(), Stored(), Naming(NamedParts()), 1234);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_EQ(object->bucket.str(), "bucket");
  EXPECT_EQ(object->key.str(), "key");
  EXPECT_EQ(object->version_id.str(), "null");
  EXPECT_EQ(object->last_modified_ms, 1234);
  EXPECT_EQ(object->content_type, "video/mp4");
  ASSERT_EQ(object->user_metadata.size(), 1u);
  EXPECT_EQ(object->user_metadata[0].second, "red");
  EXPECT_EQ(object->size, 2 * kMinPartSize + 1000);
  EXPECT_EQ(object->etag, Md5Hex(HexToBytes(Md5Hex((*data_)[0])) + HexToBytes(Md5Hex((*data_)[2])) +
                                 HexToBytes(Md5Hex((*data_)[3]))) +
                              "-3");

  // Extents are exactly the named parts' files, in order; the unnamed part 2 is absent.
  ASSERT_EQ(object->placements.size(), 1u);
  EXPECT_EQ(object->placements[0].tier, "hot");
  const auto& extents = object->placements[0].extents;
  ASSERT_EQ(extents.size(), 3u);
  EXPECT_EQ(extents[0].location, "loc1");
  EXPECT_EQ(extents[0].size, kMinPartSize);
  EXPECT_EQ(extents[1].location, "loc5");
  EXPECT_EQ(extents[1].size, kMinPartSize);
  EXPECT_EQ(extents[2].location, "loc9");
  EXPECT_EQ(extents[2].size, 1000u);

  ASSERT_EQ(object->parts.size(), 3u);
  EXPECT_EQ(object->parts[0].number, 1u);
  EXPECT_EQ(object->parts[1].number, 5u);
  EXPECT_EQ(object->parts[2].number, 9u);
  EXPECT_EQ(object->parts[2].size, 1000u);
  EXPECT_EQ(object->parts[1].checksums, (*stored_)[2].checksums);
}

TEST_F(BuiltObjectTest, WithoutAlgorithmOnlyFullObjectCrc64) {
  auto object = BuildUploadedObject(Upload(), Stored(), Naming(NamedParts()), 0);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_EQ(object->checksum_type, "FULL_OBJECT");
  ASSERT_EQ(object->checksums.size(), 1u);
  EXPECT_EQ(object->checksums[0].first, "CRC64NVME");
  EXPECT_EQ(object->checksums[0].second, ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, NamedBytes()));
}

TEST_F(BuiltObjectTest, FullObjectCrcIsTheCrcOfAllTheBytes) {
  for (auto algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme}) {
    const std::string name(ChecksumName(algorithm));
    auto object =
        BuildUploadedObject(Upload(name, "FULL_OBJECT"), Stored(), Naming(NamedParts()), 0);
    ASSERT_TRUE(object.ok()) << name << ": " << object.error().message;
    EXPECT_EQ(object->checksum_type, "FULL_OBJECT");
    const std::string* value = Find(object->checksums, name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(*value, ChecksumOf(algorithm, NamedBytes())) << name;
    // CRC64NVME is always there, and only once.
    const std::string* crc64 = Find(object->checksums, "CRC64NVME");
    ASSERT_NE(crc64, nullptr);
    EXPECT_EQ(*crc64, ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, NamedBytes()));
    EXPECT_EQ(object->checksums.size(), algorithm == ChecksumAlgorithm::kCrc64Nvme ? 1u : 2u);
  }
}

TEST_F(BuiltObjectTest, CompositeIsChecksumOfRawPartChecksums) {
  for (auto algorithm : {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c,
                         ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    const std::string name(ChecksumName(algorithm));
    auto object = BuildUploadedObject(Upload(name, ""), Stored(), Naming(NamedParts()), 0);
    ASSERT_TRUE(object.ok()) << name << ": " << object.error().message;
    EXPECT_EQ(object->checksum_type, "COMPOSITE");
    std::string raw;
    for (const std::string& bytes : {(*data_)[0], (*data_)[2], (*data_)[3]}) {
      raw += *Base64Decode(ChecksumOf(algorithm, bytes));
    }
    const std::string* value = Find(object->checksums, name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(*value, ChecksumOf(algorithm, raw) + "-3") << name;
    const std::string* crc64 = Find(object->checksums, "CRC64NVME");
    ASSERT_NE(crc64, nullptr) << name;
    EXPECT_EQ(*crc64, ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, NamedBytes())) << name;
  }
}

TEST_F(BuiltObjectTest, WholeObjectChecksumIsVerified) {
  const std::string crc32c = ChecksumOf(ChecksumAlgorithm::kCrc32c, NamedBytes());
  const UploadRecord upload = Upload("CRC32C", "FULL_OBJECT");

  CompletionRequest right = Naming(NamedParts());
  right.object_checksum = {ChecksumAlgorithm::kCrc32c, crc32c};
  EXPECT_TRUE(BuildUploadedObject(upload, Stored(), right, 0).ok());

  CompletionRequest wrong = right;
  wrong.object_checksum = {ChecksumAlgorithm::kCrc32c, ChecksumOf(ChecksumAlgorithm::kCrc32c, "x")};
  EXPECT_EQ(CodeOf(BuildUploadedObject(upload, Stored(), wrong, 0)), ErrorCode::kBadDigest);

  // The object's CRC64NVME may be checked too; an algorithm the object lacks cannot match.
  CompletionRequest crc64 = Naming(NamedParts());
  crc64.object_checksum = {ChecksumAlgorithm::kCrc64Nvme,
                           ChecksumOf(ChecksumAlgorithm::kCrc64Nvme, NamedBytes())};
  EXPECT_TRUE(BuildUploadedObject(upload, Stored(), crc64, 0).ok());
  CompletionRequest absent = Naming(NamedParts());
  absent.object_checksum = {ChecksumAlgorithm::kSha256,
                            ChecksumOf(ChecksumAlgorithm::kSha256, NamedBytes())};
  EXPECT_EQ(CodeOf(BuildUploadedObject(upload, Stored(), absent, 0)), ErrorCode::kBadDigest);

  // A composite value is compared with its "-N" suffix.
  const UploadRecord composite = Upload("SHA256", "COMPOSITE");
  auto built = BuildUploadedObject(composite, Stored(), Naming(NamedParts()), 0);
  ASSERT_TRUE(built.ok());
  CompletionRequest composite_right = Naming(NamedParts());
  composite_right.object_checksum = {ChecksumAlgorithm::kSha256, *Find(built->checksums, "SHA256")};
  EXPECT_TRUE(BuildUploadedObject(composite, Stored(), composite_right, 0).ok());
  CompletionRequest composite_whole = Naming(NamedParts());
  composite_whole.object_checksum = {ChecksumAlgorithm::kSha256,
                                     ChecksumOf(ChecksumAlgorithm::kSha256, NamedBytes())};
  EXPECT_EQ(CodeOf(BuildUploadedObject(composite, Stored(), composite_whole, 0)),
            ErrorCode::kBadDigest);
}

// ---- IsSameCompletion ----

TEST(IsSameCompletion, MatchesOnlyTheSameUploadAndPartsList) {
  std::vector<PartRecord> stored = {FakePart(1), FakePart(3, 10)};
  auto object = BuildUploadedObject(Upload(), stored, Naming(stored), 7);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_EQ(object->upload_id, UploadId("u1"));
  EXPECT_TRUE(IsSameCompletion(*object, UploadId("u1"), Naming(stored)));
  EXPECT_FALSE(IsSameCompletion(*object, UploadId("u2"), Naming(stored)));
  EXPECT_FALSE(IsSameCompletion(*object, UploadId("u1"), Naming({stored[0]})));
  CompletionRequest renumbered = Naming(stored);
  renumbered.parts[1].number = 2;
  EXPECT_FALSE(IsSameCompletion(*object, UploadId("u1"), renumbered));
  CompletionRequest other_etag = Naming(stored);
  other_etag.parts[1].etag = stored[0].etag;
  EXPECT_FALSE(IsSameCompletion(*object, UploadId("u1"), other_etag));
  CompletionRequest with_checksum = Naming(stored);
  with_checksum.parts[0].checksums = {{"CRC64NVME", *Find(stored[0].checksums, "CRC64NVME")}};
  EXPECT_TRUE(IsSameCompletion(*object, UploadId("u1"), with_checksum));
  with_checksum.parts[0].checksums = {{"CRC64NVME", *Find(stored[1].checksums, "CRC64NVME")}};
  EXPECT_FALSE(IsSameCompletion(*object, UploadId("u1"), with_checksum));
  // A version not made by an upload never matches.
  metadata::ObjectRecord plain = *object;
  plain.upload_id = UploadId();
  EXPECT_FALSE(IsSameCompletion(plain, UploadId(""), Naming(stored)));
}

}  // namespace
}  // namespace strata::storage
