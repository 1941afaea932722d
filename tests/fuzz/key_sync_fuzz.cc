// A key sync's request and answer (storage/cluster/key_sync_wire.h) on arbitrary bytes, as a
// broken or hostile peer would send them. Properties: no crash or leak; a request that
// decodes is within its limits (no bytes flagged on a delete marker, keys of at most 1024
// bytes, every record of the request's bucket and key) and its encoding decodes to the
// same encoding (records are compared as the codec writes them: an older record format
// is written in the current one);
// an answer that decodes has increasing indexes below the version count; records read from
// a stream (in chunks of a size the input picks) stay within the request's count and the
// streamed limits, each of the request's key, and the rest of the stream is left alone.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/cluster/key_sync_wire.h"
#include "tests/fuzz/fuzz_check.h"

using strata::storage::cluster::DecodeKeySync;
using strata::storage::cluster::DecodeKeySyncAnswer;
using strata::storage::cluster::EncodeKeySync;
using strata::storage::cluster::EncodeKeySyncAnswer;
using strata::storage::cluster::KeySyncRequest;
using strata::storage::cluster::kMaxSyncVersions;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  if (auto request = DecodeKeySync(all); request.ok()) {
    const std::string encoded = EncodeKeySync(*request);
    auto again = DecodeKeySync(encoded);
    FUZZ_CHECK(again.ok() && EncodeKeySync(*again) == encoded, all);
    FUZZ_CHECK(request->versions.size() <= kMaxSyncVersions, all);
    FUZZ_CHECK(!request->key.empty() && request->key.size() <= 1024, all);
    for (const auto& version : request->versions) {
      FUZZ_CHECK(!(version.bytes_follow && version.record.delete_marker), all);
      FUZZ_CHECK(version.record.bucket.str() == request->bucket, all);
      FUZZ_CHECK(version.record.key.str() == request->key, all);
    }
  }
  if (auto range = strata::storage::cluster::DecodeKeyRange(all); range.ok()) {
    FUZZ_CHECK(strata::storage::cluster::EncodeKeyRange(*range) == all, all);
  }
  if (auto answer = strata::storage::cluster::DecodeCatchUpAnswer(all); answer.ok()) {
    FUZZ_CHECK(strata::storage::cluster::EncodeCatchUpAnswer(*answer) == all, all);
  }
  if (auto answer = strata::storage::cluster::DecodePullAnswer(all); answer.ok()) {
    FUZZ_CHECK(strata::storage::cluster::EncodePullAnswer(*answer) == all, all);
  }
  {
    // The input as a stream of records for a request of up to 8 streamed versions.
    KeySyncRequest request{"bucket", "key", {}, std::nullopt};
    request.streamed = size == 0 ? 1 : 1 + data[0] % 8;
    const std::size_t chunk = size < 2 ? 1 : 1 + data[1] % 64;
    strata::storage::cluster::StreamedVersionReader reader(request);
    std::uint64_t left = 0;
    for (std::size_t at = 0; at < size; at += chunk) {
      std::string_view piece = all.substr(at, chunk);
      if (!reader.Feed(piece).ok()) {
        break;
      }
      left += piece.size();
      FUZZ_CHECK(piece.empty() || reader.done(), all);
    }
    FUZZ_CHECK(request.versions.size() <= request.streamed, all);
    for (const auto& version : request.versions) {
      FUZZ_CHECK(!(version.bytes_follow && version.record.delete_marker), all);
      FUZZ_CHECK(version.record.key.str() == "key", all);
    }
    FUZZ_CHECK(left == 0 || reader.done(), all);
  }
  const std::size_t versions = size == 0 ? 0 : data[0];
  if (auto answer = DecodeKeySyncAnswer(all.substr(size == 0 ? 0 : 1), versions); answer.ok()) {
    for (std::size_t i = 0; i < answer->size(); ++i) {
      FUZZ_CHECK((*answer)[i] < versions, all);
      FUZZ_CHECK(i == 0 || (*answer)[i] > (*answer)[i - 1], all);
    }
    FUZZ_CHECK(EncodeKeySyncAnswer(*answer) == all.substr(1), all);
  }
  return 0;
}
