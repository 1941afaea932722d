// Parsing of the XML request bodies strata reads, with S3's character rules and bounds on
// what a body may make the parser build. Private to gateway/ (xml.cc, lifecycle_xml.cc).
// Pure logic; thread-safe.
#pragma once

#include <cstddef>
#include <pugixml.hpp>
#include <string_view>

#include "common/error.h"

namespace strata::gateway {

struct XmlLimits {
  // S3's deepest body (a lifecycle rule's Filter/And/Tag/Key) nests 6 elements.
  std::size_t max_depth = 32;
  // 10,000 parts of a CompleteMultipartUpload with a PartNumber, an ETag and a few
  // checksums each stay well below this.
  std::size_t max_elements = 100'000;
};

// Parses `body` into `doc` (pugixml's default options: no comments, no whitespace-only
// text). kMalformedXml when the body is not well-formed XML, is not UTF-8, holds a
// character XML 1.0 excludes (raw, or decoded from a character reference such as
// "&#x0;"), nests deeper than limits.max_depth or has more than limits.max_elements
// elements, or when pugixml runs past the current XmlLease's cap; kUnavailable (503
// SlowDown) when it runs past the process's XML budget (gateway/xml_budget.h).
Result<void> LoadXmlDocument(pugi::xml_document& doc, std::string_view body,
                             const XmlLimits& limits = {});

// The document's one root element when it is named `root`, else a null node.
pugi::xml_node SingleRoot(const pugi::xml_document& doc, std::string_view root);

// S3's MalformedXML: a body that does not validate against S3's schema.
Error MalformedXmlError();

}  // namespace strata::gateway
