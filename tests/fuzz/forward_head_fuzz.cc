// The heads of forwarded S3 requests and their answers (gateway/forward_wire.h) on
// arbitrary bytes, as a broken or hostile peer would send them. Properties: no crash or
// leak; a head that decodes encodes back to exactly its bytes, and carries nothing HTTP
// forbids (a CR or LF that could split a header, an unknown method, a target that is not
// a path).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/copy_source_wire.h"
#include "gateway/forward_wire.h"
#include "storage/read_cache.h"
#include "tests/fuzz/fuzz_check.h"

using strata::gateway::DecodeRequestHead;
using strata::gateway::DecodeResponseHead;
using strata::gateway::EncodeRequestHead;
using strata::gateway::EncodeResponseHead;

namespace {

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto request = DecodeRequestHead(input); request.ok()) {
    FUZZ_CHECK(EncodeRequestHead(*request) == input, input);
    FUZZ_CHECK(!request->target.empty() && request->target.front() == '/', input);
    FUZZ_CHECK(!HasLineBreak(request->target) && !HasLineBreak(request->request_id), input);
    for (const auto& [name, value] : request->fields) {
      FUZZ_CHECK(!name.empty() && !HasLineBreak(name) && !HasLineBreak(value), input);
    }
    FUZZ_CHECK(request->cached_tag.size() <= strata::storage::kMaxReadCacheTag &&
                   !HasLineBreak(request->cached_tag),
               input);
  }
  if (auto read = strata::gateway::DecodeReadVersion(input); read.ok()) {
    FUZZ_CHECK(strata::gateway::EncodeReadVersion(*read) == input, input);
    FUZZ_CHECK(!read->bucket.empty() && !read->key.empty() && read->key.size() <= 1024, input);
  }
  if (auto response = DecodeResponseHead(input); response.ok()) {
    FUZZ_CHECK(EncodeResponseHead(*response) == input, input);
    FUZZ_CHECK(response->status >= 100 && response->status <= 599, input);
    for (const auto& [name, value] : response->fields) {
      FUZZ_CHECK(!name.empty() && !HasLineBreak(name) && !HasLineBreak(value), input);
    }
    // A cached range never wraps past 2^64.
    FUZZ_CHECK(response->cache_first + response->content_length >= response->cache_first, input);
    FUZZ_CHECK(response->cache_tag.size() <= strata::storage::kMaxReadCacheTag, input);
  }
  return 0;
}
