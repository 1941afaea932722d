// The XML request bodies the gateway reads (gateway/xml, gateway/tags): DeleteObjects,
// CompleteMultipartUpload, Put{Object,Bucket}Tagging, PutBucketVersioning,
// CreateBucket's configuration, RestoreObject. The first byte picks the parser (the order
// of the cases below; capture_seeds.py writes real bodies so), the rest is the body.
// Lifecycle configurations have their own harness (lifecycle_xml_fuzz.cc).
//
// Properties: a refusal carries the code S3 answers (MalformedXML, or the few the parser
// documents); what is accepted keeps the documented bounds (1..1000 keys, none empty;
// part numbers 1..10000; a known status, tier and day count), and what the gateway echoes
// back from it (keys in DeleteResult, tags in GetObjectTagging) renders as XML that reads
// back to the same text.
#include <cstddef>
#include <cstdint>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "gateway/tags.h"
#include "gateway/xml.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace strata;
using namespace strata::gateway;

// Text XML 1.0 can carry at all (escaped or not): UTF-8 of XML characters. XmlEscape
// writes U+FFFD for anything else, so only such text echoes back unchanged.
bool XmlRepresentable(std::string_view s) { return IsXmlText(s); }

// `text` rendered as an element by XmlWriter reads back as `text`.
void CheckEcho(std::string_view text) {
  if (!XmlRepresentable(text)) {
    return;
  }
  XmlWriter w("Result");
  w.Element("Key", text);
  std::string doc = w.Finish();
  pugi::xml_document parsed;
  // As a client's parser reads it: no whitespace or CR/LF normalization of text.
  auto ok = parsed.load_buffer(doc.data(), doc.size(), pugi::parse_default & ~pugi::parse_eol);
  FUZZ_CHECK(ok, doc);
  FUZZ_CHECK(std::string_view(parsed.child("Result").child("Key").child_value()) == text, doc);
}

void CheckCode(const Error& e, std::initializer_list<ErrorCode> allowed, std::string_view in) {
  bool known = false;
  for (ErrorCode c : allowed) {
    known = known || e.code == c;
  }
  FUZZ_CHECK(known, in);
  FUZZ_CHECK(!e.message.empty(), in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto r = ParseDeleteRequest(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml}, body);
        break;
      }
      FUZZ_CHECK(!r->objects.empty() && r->objects.size() <= 1000, body);
      for (const auto& o : r->objects) {
        FUZZ_CHECK(!o.key.empty(), body);
        CheckEcho(o.key);
        CheckEcho(o.version_id);
      }
      break;
    }
    case 1: {
      auto r = ParseCompleteMultipartUpload(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml, ErrorCode::kInvalidPart}, body);
        break;
      }
      FUZZ_CHECK(r->size() <= 10000, body);
      for (const auto& p : *r) {
        FUZZ_CHECK(p.number >= 1 && p.number <= 10000, body);
        CheckEcho(p.etag);
      }
      break;
    }
    case 2: {
      auto r = ParseTagging(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml}, body);
        break;
      }
      for (TagOwner owner : {TagOwner::kObject, TagOwner::kBucket}) {
        auto valid = ValidateTags(*r, owner);
        if (!valid.ok()) {
          CheckCode(valid.error(), {ErrorCode::kInvalidTag, ErrorCode::kTooManyTags}, body);
          continue;
        }
        FUZZ_CHECK(r->size() <= (owner == TagOwner::kObject ? kMaxObjectTags : kMaxBucketTags),
                   body);
        for (const auto& [k, v] : *r) {
          FUZZ_CHECK(!k.empty() && !k.starts_with("aws:"), body);
          CheckEcho(k);
          CheckEcho(v);
        }
      }
      break;
    }
    case 3: {
      auto r = ParseVersioningConfiguration(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml, ErrorCode::kNotImplemented}, body);
        break;
      }
      FUZZ_CHECK(*r == "Enabled" || *r == "Suspended", body);
      break;
    }
    case 4: {
      auto r = ParseCreateBucketConfiguration(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml}, body);
        break;
      }
      CheckEcho(*r);
      break;
    }
    default: {
      auto r = ParseRestoreRequest(body);
      if (!r.ok()) {
        CheckCode(r.error(), {ErrorCode::kMalformedXml, ErrorCode::kNotImplemented}, body);
        break;
      }
      FUZZ_CHECK(r->days >= 1 && r->days <= 2147483647, body);
      FUZZ_CHECK(r->tier == "Standard" || r->tier == "Bulk" || r->tier == "Expedited", body);
      break;
    }
  }
  return 0;
}
