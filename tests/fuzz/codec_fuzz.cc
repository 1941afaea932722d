// The index codecs (metadata/codec, metadata/keys): every record strata reads back from
// RocksDB, where a damaged disk, a torn write or another version of strata may have left
// anything, and the version changes a cluster's peers will send. The first byte picks the record
// type (codec_seeds.cc writes real encodings so), the rest is the stored value or row key.
//
// Properties: garbage is kCorruption, never a crash or a huge allocation; a record that
// decodes re-encodes to bytes that decode and re-encode to themselves (the encoding of what
// was read is a fixed point, whatever older format the input was in); row keys that parse
// rebuild to the same row.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "metadata/codec.h"
#include "metadata/keys.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace strata;
using namespace strata::metadata;

template <typename Record>
void RoundTrip(std::string_view in, Result<Record> (*decode)(std::string_view),
               std::string (*encode)(const Record&)) {
  auto first = decode(in);
  if (!first.ok()) {
    FUZZ_CHECK(first.error().code == ErrorCode::kCorruption, in);
    return;
  }
  std::string encoded = encode(*first);
  auto second = decode(encoded);
  FUZZ_CHECK(second.ok(), encoded);
  FUZZ_CHECK(encode(*second) == encoded, encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 12) {
    case 0:
      RoundTrip<BucketRecord>(in, DecodeBucket, EncodeBucket);
      break;
    case 1:
      RoundTrip<ObjectRecord>(in, DecodeObject, EncodeObject);
      break;
    case 2:
      RoundTrip<UploadRecord>(in, DecodeUpload, EncodeUpload);
      break;
    case 3:
      RoundTrip<PartRecord>(in, DecodePart, EncodePart);
      break;
    case 4:
      RoundTrip<WritebackItem>(in, DecodeWriteback, EncodeWriteback);
      break;
    case 5:
      RoundTrip<UserRecord>(in, DecodeUser, EncodeUser);
      break;
    case 6: {
      UpstreamLocation loc = DecodeUpstreamLocation(in);
      if (loc.etag.find('\n') == std::string::npos &&
          loc.version_id.find('\n') == std::string::npos) {
        UpstreamLocation again = DecodeUpstreamLocation(EncodeUpstreamLocation(loc));
        FUZZ_CHECK(again.etag == loc.etag && again.version_id == loc.version_id, in);
      }
      break;
    }
    case 7:
      if (auto row = ParseObjectRowKey(in)) {
        FUZZ_CHECK(ObjectRowKey(row->bucket, row->key, row->sequence) == in, in);
      }
      break;
    case 8:
      if (auto row = ParseWritebackRowKey(in)) {
        FUZZ_CHECK(WritebackRowKey(row->bucket, row->key) == in, in);
      }
      break;
    case 9:
      if (auto row = ParseLifecycleRowKey(in)) {
        FUZZ_CHECK(LifecycleRowKey(*row) == in, in);
      }
      break;
    case 10:
      RoundTrip<VersionChange>(in, DecodeVersionChange, EncodeVersionChange);
      break;
    default:
      RoundTrip<UploadCompletion>(in, DecodeUploadCompletion, EncodeUploadCompletion);
      break;
  }
  return 0;
}
