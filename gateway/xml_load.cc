#include "gateway/xml_load.h"

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

}  // namespace

Result<void> LoadXmlDocument(pugi::xml_document& doc, std::string_view body,
                             const XmlLimits& limits) {
  // pugixml accepts any byte and decodes "&#x0;"; a parser that follows XML 1.0 (S3's, the
  // clients' that read the configuration back) refuses both, so they are refused here
  // before they can be stored and echoed.
  if (!IsXmlText(body)) {
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

}  // namespace strata::gateway
