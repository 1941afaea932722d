// The upstream's XML answers (storage/upstream/s3_responses): error bodies, ListBuckets,
// ListObjectsV2, InitiateMultipartUpload, CompleteMultipartUpload (also its 200-with-Error
// form) and GetBucketVersioning. The upstream is outside input: any S3 endpoint, or
// anything answering in its place. The first byte picks the parser (capture_seeds.py
// records moto's real answers so), the rest is the body.
//
// Properties: nonsense is kCorruption, never a crash; what is accepted is what S3
// documents (named buckets, keyed entries, a continuation token when truncated, a known
// versioning status); and the requests strata builds from accepted values read back:
// VersioningBody(status) parses to the status, and CompleteMultipartBody of the listed
// ETags is a completion the gateway's own parser accepts with those parts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "gateway/xml.h"
#include "storage/upstream/s3_responses.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace strata;
using namespace strata::storage::upstream;

bool XmlRepresentable(std::string_view s) { return IsXmlText(s); }

// As storage/upstream's EtagValue (s3_client.cc, not compiled here): quotes stripped.
std::string Unquote(std::string_view quoted) {
  if (quoted.size() >= 2 && quoted.front() == '"' && quoted.back() == '"') {
    quoted = quoted.substr(1, quoted.size() - 2);
  }
  return std::string(quoted);
}

void CheckRefusal(const Error& e, std::string_view xml) { FUZZ_CHECK(!e.message.empty(), xml); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto [code, message] = ParseErrorBody(xml);
      for (unsigned status : {400u, 403u, 404u, 409u, 500u, 503u}) {
        Error e = UpstreamError(status, code, message);
        FUZZ_CHECK(!e.message.empty(), xml);
      }
      break;
    }
    case 1: {
      auto r = ParseListBuckets(xml);
      if (!r.ok()) {
        CheckRefusal(r.error(), xml);
        break;
      }
      for (const auto& b : *r) {
        FUZZ_CHECK(!b.name.empty(), xml);
      }
      break;
    }
    case 2: {
      auto r = ParseListObjectsV2(xml);
      if (!r.ok()) {
        CheckRefusal(r.error(), xml);
        break;
      }
      FUZZ_CHECK(!r->truncated || !r->next_continuation_token.empty(), xml);
      std::vector<std::string> etags;
      for (const auto& o : r->objects) {
        FUZZ_CHECK(!o.key.empty(), xml);
        std::string etag = Unquote(o.etag);
        if (!etag.empty() && XmlRepresentable(etag) && etag.find('"') == std::string::npos &&
            etag.find_first_not_of(" \t\r\n") != std::string::npos) {
          etags.push_back(etag);
        }
      }
      if (!etags.empty() && etags.size() <= 10000) {
        std::string body = CompleteMultipartBody(etags);
        auto parts = gateway::ParseCompleteMultipartUpload(body);
        FUZZ_CHECK(parts.ok(), body);
        FUZZ_CHECK(parts->size() == etags.size(), body);
        for (std::size_t i = 0; i < etags.size(); ++i) {
          FUZZ_CHECK((*parts)[i].number == i + 1, body);
        }
      }
      break;
    }
    case 3: {
      auto r = ParseUploadId(xml);
      if (r.ok()) {
        FUZZ_CHECK(!r->empty(), xml);
      } else {
        CheckRefusal(r.error(), xml);
      }
      break;
    }
    case 4: {
      auto r = ParseCompleteResult(xml);
      if (r.ok()) {
        FUZZ_CHECK(!r->empty(), xml);
      } else {
        CheckRefusal(r.error(), xml);
      }
      break;
    }
    default: {
      auto r = ParseVersioningStatus(xml);
      if (!r.ok()) {
        CheckRefusal(r.error(), xml);
        break;
      }
      FUZZ_CHECK(r->empty() || *r == "Enabled" || *r == "Suspended", xml);
      if (!r->empty()) {
        auto again = ParseVersioningStatus(VersioningBody(*r));
        FUZZ_CHECK(again.ok() && *again == *r, xml);
      }
      break;
    }
  }
  return 0;
}
