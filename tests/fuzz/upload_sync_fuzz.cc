// An upload sync's request (storage/cluster/upload_sync_wire.h) on arbitrary bytes, as a
// broken or hostile peer would send it. Properties: no crash or leak; a request that
// decodes is within its limits (bucket of 3 to 63 bytes, a key of 1 to 1024, an upload id,
// no part on a gone upload, a part numbered 1 to 10000 of at most 5 GiB) and its encoding
// decodes to the same encoding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/cluster/upload_sync_wire.h"
#include "tests/fuzz/fuzz_check.h"

using strata::storage::cluster::DecodeUploadSync;
using strata::storage::cluster::EncodeUploadSync;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  auto request = DecodeUploadSync(all);
  if (!request.ok()) {
    return 0;
  }
  const std::string encoded = EncodeUploadSync(*request);
  auto again = DecodeUploadSync(encoded);
  FUZZ_CHECK(again.ok() && EncodeUploadSync(*again) == encoded, all);
  const auto& object = request->upload.object;
  FUZZ_CHECK(object.bucket.view().size() >= 3 && object.bucket.view().size() <= 63, all);
  FUZZ_CHECK(!object.key.empty() && object.key.view().size() <= 1024, all);
  FUZZ_CHECK(!request->upload.upload_id.empty(), all);
  FUZZ_CHECK(!(request->gone && request->part), all);
  if (request->part) {
    FUZZ_CHECK(request->part->number >= 1 && request->part->number <= 10000, all);
    FUZZ_CHECK(request->part->size <= (5ull << 30), all);
  }
  return 0;
}
