#include "gateway/xml_load.h"

#include <cstdint>

#include "common/utf8.h"
#include "gateway/xml_budget.h"

namespace strata::gateway {
namespace {

Error Malformed() {
  return Error(ErrorCode::kMalformedXml,
               "The XML you provided was not well-formed or did not validate against our "
               "published schema");
}

// Names, values and attributes after pugixml decoded entities and character references.
bool NodeIsXmlText(const pugi::xml_node& node) {
  if (!IsXmlText(node.name()) || !IsXmlText(node.value())) {
    return false;
  }
  for (auto attribute : node.attributes()) {
    if (!IsXmlText(attribute.name()) || !IsXmlText(attribute.value())) {
      return false;
    }
  }
  return true;
}

// Whether every character reference in `body` ("&#N;", "&#xH;") names an XML 1.0
// character: pugixml decodes "&#x0;" into a NUL that ends the C string it hands back, so
// the decoded text cannot show it.
bool ReferencesAreXmlChars(std::string_view body) {
  for (std::size_t at = body.find("&#"); at != std::string_view::npos;
       at = body.find("&#", at + 2)) {
    std::size_t pos = at + 2;
    const bool hex = pos < body.size() && body[pos] == 'x';
    pos += hex ? 1 : 0;
    std::uint32_t value = 0;
    std::size_t digits = 0;
    for (; pos < body.size() && body[pos] != ';'; ++pos, ++digits) {
      const char c = body[pos];
      int d = -1;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (hex && c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (hex && c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      }
      if (d < 0 || value > 0x10FFFF) {
        return false;
      }
      value = value * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
    }
    if (digits == 0 || pos >= body.size() || value > 0x10FFFF ||
        !IsXmlChar(static_cast<char32_t>(value))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<void> LoadXmlDocument(pugi::xml_document& doc, std::string_view body,
                             const XmlLimits& limits) {
  // pugixml accepts any byte and decodes "&#x0;"; a parser that follows XML 1.0 (S3's, the
  // clients' that read the configuration back) refuses both, so they are refused here
  // before they can be stored and echoed.
  if (!IsXmlText(body) || !ReferencesAreXmlChars(body)) {
    return Malformed();
  }
  auto parsed = doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  if (parsed.status == pugi::status_out_of_memory) {
    return XmlOutOfMemory();
  }
  if (!parsed) {
    return Malformed();
  }
  // Walk the tree without recursion (depth is what is being bounded).
  std::size_t elements = 0;
  std::size_t depth = 0;
  pugi::xml_node node = doc.first_child();
  while (node) {
    if (node.type() == pugi::node_element && ++elements > limits.max_elements) {
      return Malformed();
    }
    if (!NodeIsXmlText(node)) {
      return Malformed();
    }
    if (node.first_child()) {
      if (++depth > limits.max_depth) {
        return Malformed();
      }
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling()) {
      node = node.parent();
      --depth;
      if (node == doc) {
        return Ok();
      }
    }
    if (node) {
      node = node.next_sibling();
    }
  }
  return Ok();
}

pugi::xml_node SingleRoot(const pugi::xml_document& doc, std::string_view root) {
  int elements = 0;
  for (auto node : doc.children()) {
    elements += node.type() == pugi::node_element ? 1 : 0;
  }
  auto element = doc.document_element();
  if (elements != 1 || std::string_view(element.name()) != root) {
    return {};
  }
  return element;
}

Error MalformedXmlError() {
  return Error(ErrorCode::kMalformedXml,
               "The XML you provided was not well-formed or did not validate against our "
               "published schema");
}

}  // namespace strata::gateway
