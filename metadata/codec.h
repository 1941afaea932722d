// Codec: the binary encoding of index records (values in RocksDB) and the byte-level
// helpers the key schema uses. Pure functions, no I/O, safe from any thread.
//
// Every encoded record starts with a format version byte, followed by fields written as
// varints (unsigned LEB128), zigzag varints (signed) and length-prefixed strings. A reader
// accepts every format version up to its own; decoding garbage, truncated or trailing
// bytes yields kCorruption, never a crash or an unbounded allocation.
//
// An ObjectRecord's bucket and key are not stored in the value: they are the row key's
// (metadata/README.md), and the index fills them in after decoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"
#include "metadata/upload_completion.h"
#include "metadata/version_change.h"

namespace strata::metadata {

inline constexpr std::uint8_t kBucketFormat = 7;
inline constexpr std::uint8_t kObjectFormat = 6;
inline constexpr std::uint8_t kUserFormat = 2;
inline constexpr std::uint8_t kUploadFormat = 1;
inline constexpr std::uint8_t kPartFormat = 1;
inline constexpr std::uint8_t kWritebackFormat = 2;
inline constexpr std::uint8_t kVersionChangeFormat = 1;
inline constexpr std::uint8_t kUploadCompletionFormat = 1;

std::string EncodeBucket(const BucketRecord& bucket);
Result<BucketRecord> DecodeBucket(std::string_view bytes);

// Encodes everything but `bucket` and `key`.
std::string EncodeObject(const ObjectRecord& object);
// `bucket` and `key` of the result are left empty.
Result<ObjectRecord> DecodeObject(std::string_view bytes);

// An upload with its object template (whose bucket and key are stored too).
std::string EncodeUpload(const UploadRecord& upload);
Result<UploadRecord> DecodeUpload(std::string_view bytes);

std::string EncodePart(const PartRecord& part);
Result<PartRecord> DecodePart(std::string_view bytes);

// A write-back item without its bucket and key (the row key's).
std::string EncodeWriteback(const WritebackItem& item);
Result<WritebackItem> DecodeWriteback(std::string_view bytes);

// An s3-tier extent's location: the ETag alone, or "<etag>\n<version id>" (neither holds
// a newline). Any string decodes: one without a newline is an ETag.
std::string EncodeUpstreamLocation(const UpstreamLocation& location);
UpstreamLocation DecodeUpstreamLocation(std::string_view location);

std::string EncodeUser(const UserRecord& user);
Result<UserRecord> DecodeUser(std::string_view bytes);

// A change of one version (metadata/version_change.h), as the cluster sends it to the
// key's partition: the expected version, the guards, the edits in order.
std::string EncodeVersionChange(const VersionChange& change);
Result<VersionChange> DecodeVersionChange(std::string_view bytes);

// A multipart completion (metadata/upload_completion.h), as the cluster sends it to the
// key's partition: the upload, the object it makes (all but bucket and key), the parts used.
std::string EncodeUploadCompletion(const UploadCompletion& completion);
Result<UploadCompletion> DecodeUploadCompletion(std::string_view bytes);

// Low-level writer and reader, exposed for the key schema and for tests.
class Encoder {
 public:
  void PutByte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void PutVarint(std::uint64_t v);
  void PutSignedVarint(std::int64_t v);  // zigzag
  void PutString(std::string_view s);    // varint length, then the bytes
  void PutBigEndian64(std::uint64_t v);
  std::string Finish() && { return std::move(out_); }

 private:
  std::string out_;
};

// Reads from a byte range; every getter returns false (and leaves the decoder failed)
// instead of reading past the end.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  bool GetByte(std::uint8_t* b);
  bool GetVarint(std::uint64_t* v);
  bool GetSignedVarint(std::int64_t* v);
  bool GetString(std::string* s);
  bool GetBigEndian64(std::uint64_t* v);
  // A count of items each at least `min_item_bytes` long: fails when the remaining
  // input could not possibly hold that many, so garbage cannot force a huge reserve().
  bool GetCount(std::size_t min_item_bytes, std::size_t* count);
  bool done() const { return in_.empty(); }
  std::size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace strata::metadata
