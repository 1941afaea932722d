// A member's listing request and its rows (gateway/listing_wire.h) on arbitrary bytes, as
// a broken or hostile peer would send them. The first byte picks how the row stream is
// cut into chunks. Properties: no crash or leak; a request that decodes encodes back to
// exactly its bytes, within its limits; every row read has a key of at most 1024 bytes
// and the reader's bucket.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/listing_wire.h"
#include "tests/fuzz/fuzz_check.h"

using strata::gateway::DecodeListingAnswer;
using strata::gateway::DecodeListingRequest;
using strata::gateway::EncodeListingRequest;
using strata::gateway::kMaxListingRows;
using strata::gateway::ListingRowReader;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  if (auto request = DecodeListingRequest(all); request.ok()) {
    FUZZ_CHECK(EncodeListingRequest(*request) == all, all);
    FUZZ_CHECK(request->limit >= 1 && request->limit <= kMaxListingRows, all);
  }
  (void)DecodeListingAnswer(all);
  if (size == 0) {
    return 0;
  }
  const std::size_t piece = 1 + data[0] % 97;
  std::string_view rest = all.substr(1);
  ListingRowReader reader("bucket");
  while (!rest.empty()) {
    reader.Add(rest.substr(0, piece));
    rest.remove_prefix(std::min(piece, rest.size()));
    bool failed = false;
    while (true) {
      auto row = reader.Next();
      if (!row.ok()) {
        failed = true;
        break;
      }
      if (!row->has_value()) {
        break;
      }
      FUZZ_CHECK((*row)->record.key.str().size() <= 1024, all);
      FUZZ_CHECK((*row)->record.bucket.str() == "bucket", all);
    }
    if (failed) {
      break;
    }
  }
  return 0;
}
