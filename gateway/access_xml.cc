#include "gateway/access_xml.h"

#include <pugixml.hpp>

#include "gateway/xml.h"
#include "gateway/xml_load.h"

namespace strata::gateway {
namespace {

// The element children of `node`; false when it holds text of its own besides them.
template <typename F>
bool ForEachElement(const pugi::xml_node& node, F&& visit) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
      return false;
    }
    if (child.type() == pugi::node_element && !visit(child)) {
      return false;
    }
  }
  return true;
}

bool HasElementChild(const pugi::xml_node& node) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_element) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool IsObjectOwnership(std::string_view mode) {
  return mode == "BucketOwnerEnforced" || mode == "BucketOwnerPreferred" || mode == "ObjectWriter";
}

Result<std::string> ParseOwnershipControls(std::string_view body) {
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "OwnershipControls");
  if (!root) {
    return MalformedXmlError();
  }
  int rules = 0;
  std::string mode;
  const bool ok = ForEachElement(root, [&](const pugi::xml_node& rule) {
    if (std::string_view(rule.name()) != "Rule" || ++rules > 1) {
      return false;
    }
    int modes = 0;
    return ForEachElement(rule,
                          [&](const pugi::xml_node& field) {
                            if (std::string_view(field.name()) != "ObjectOwnership" ||
                                ++modes > 1 || HasElementChild(field)) {
                              return false;
                            }
                            mode = field.text().get();
                            return IsObjectOwnership(mode);
                          }) &&
           modes == 1;
  });
  if (!ok || rules != 1) {
    return MalformedXmlError();
  }
  return mode;
}

std::string OwnershipControlsXml(std::string_view mode) {
  XmlWriter xml("OwnershipControls");
  xml.Open("Rule").Element("ObjectOwnership", mode).Close();
  return xml.Finish();
}

Result<metadata::PublicAccessBlock> ParsePublicAccessBlock(std::string_view body) {
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "PublicAccessBlockConfiguration");
  if (!root) {
    return MalformedXmlError();
  }
  metadata::PublicAccessBlock block;
  unsigned seen = 0;
  const bool ok = ForEachElement(root, [&](const pugi::xml_node& field) {
    const std::string_view name = field.name();
    const std::string_view text = field.text().get();
    if ((text != "true" && text != "false") || HasElementChild(field)) {
      return false;
    }
    struct Flag {
      std::string_view name;
      bool* value;
    };
    const Flag flags[] = {{"BlockPublicAcls", &block.block_public_acls},
                          {"IgnorePublicAcls", &block.ignore_public_acls},
                          {"BlockPublicPolicy", &block.block_public_policy},
                          {"RestrictPublicBuckets", &block.restrict_public_buckets}};
    for (unsigned i = 0; i < 4; ++i) {
      if (flags[i].name == name) {
        if ((seen & (1u << i)) != 0) {
          return false;
        }
        seen |= 1u << i;
        *flags[i].value = text == "true";
        return true;
      }
    }
    return false;
  });
  if (!ok) {
    return MalformedXmlError();
  }
  return block;
}

std::string PublicAccessBlockXml(const metadata::PublicAccessBlock& block) {
  auto flag = [](bool on) { return on ? "true" : "false"; };
  XmlWriter xml("PublicAccessBlockConfiguration");
  xml.Element("BlockPublicAcls", flag(block.block_public_acls))
      .Element("IgnorePublicAcls", flag(block.ignore_public_acls))
      .Element("BlockPublicPolicy", flag(block.block_public_policy))
      .Element("RestrictPublicBuckets", flag(block.restrict_public_buckets));
  return xml.Finish();
}

}  // namespace strata::gateway
