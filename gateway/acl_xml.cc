#include "gateway/acl_xml.h"

#include <pugixml.hpp>

#include "gateway/identity.h"
#include "gateway/xml.h"
#include "gateway/xml_load.h"

namespace strata::gateway {
namespace {

constexpr std::string_view kXsiNamespace = "http://www.w3.org/2001/XMLSchema-instance";

Error MalformedAcl() {
  return Error(ErrorCode::kMalformedAcl,
               "The XML you provided was not well-formed or did not validate against our "
               "published schema");
}

// The element's text when it has no element children, else nullopt.
std::optional<std::string> LeafText(const pugi::xml_node& node) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_element) {
      return std::nullopt;
    }
  }
  return std::string(node.text().get());
}

// The grantee type an xsi:type attribute (of whatever prefix) names; empty when none.
std::string_view GranteeType(const pugi::xml_node& grantee) {
  for (auto attribute : grantee.attributes()) {
    const std::string_view name = attribute.name();
    if (name == "type" || (name.size() > 5 && name.ends_with(":type"))) {
      return attribute.value();
    }
  }
  return {};
}

Result<metadata::AclGrant> ParseGrantee(const pugi::xml_node& node,
                                        const CanonicalIdResolver& resolve) {
  std::optional<std::string> id;
  std::optional<std::string> uri;
  bool email = false;
  for (auto child : node.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    const std::string_view name = child.name();
    auto text = LeafText(child);
    if (!text) {
      return MalformedAcl();
    }
    if (name == "ID" && !id) {
      id = std::move(text);
    } else if (name == "URI" && !uri) {
      uri = std::move(text);
    } else if (name == "EmailAddress") {
      email = true;
    } else if (name != "DisplayName") {
      return MalformedAcl();
    }
  }
  std::string_view type = GranteeType(node);
  if (type.empty()) {  // no xsi:type: what the grantee names tells
    type = id ? "CanonicalUser" : uri ? "Group" : email ? "AmazonCustomerByEmail" : "";
  }
  if (type == "AmazonCustomerByEmail" && email) {
    return Error(ErrorCode::kUnresolvableGrantByEmailAddress,
                 "The e-mail address you provided does not match any account on record.");
  }
  if (type == "CanonicalUser" && id) {
    auto user = resolve(*id);
    if (!user) {
      return Error(ErrorCode::kInvalidArgument, "Invalid id");
    }
    return metadata::AclGrant{metadata::AclGrantee::kUser, std::move(*user)};
  }
  if (type == "Group" && uri) {
    auto group = GroupOfUri(*uri);
    if (!group) {
      return Error(ErrorCode::kInvalidArgument, "Invalid group uri");
    }
    return metadata::AclGrant{*group, std::string()};
  }
  return MalformedAcl();
}

Result<metadata::AclGrant> ParseGrant(const pugi::xml_node& node,
                                      const CanonicalIdResolver& resolve) {
  std::optional<metadata::AclGrant> grant;
  std::optional<metadata::AclPermission> permission;
  for (auto child : node.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    const std::string_view name = child.name();
    if (name == "Grantee" && !grant) {
      auto grantee = ParseGrantee(child, resolve);
      if (!grantee.ok()) {
        return std::move(grantee).error();
      }
      grant = std::move(*grantee);
    } else if (name == "Permission" && !permission) {
      auto text = LeafText(child);
      permission = text ? ParsePermission(*text) : std::nullopt;
      if (!permission) {
        return MalformedAcl();
      }
    } else {
      return MalformedAcl();
    }
  }
  if (!grant || !permission) {
    return MalformedAcl();
  }
  grant->permission = *permission;
  return std::move(*grant);
}

}  // namespace

Result<AccessControlPolicy> ParseAccessControlPolicy(std::string_view body,
                                                     const CanonicalIdResolver& resolve) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return loaded.error().code == ErrorCode::kMalformedXml ? MalformedAcl() : loaded.error();
  }
  auto root = SingleRoot(doc, "AccessControlPolicy");
  if (!root) {
    return MalformedAcl();
  }
  AccessControlPolicy policy;
  bool have_list = false;
  for (auto child : root.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    const std::string_view name = child.name();
    if (name == "Owner" && !policy.owner_id) {
      for (auto field : child.children()) {
        if (field.type() != pugi::node_element) {
          continue;
        }
        const std::string_view field_name = field.name();
        auto text = LeafText(field);
        if (!text || (field_name != "ID" && field_name != "DisplayName")) {
          return MalformedAcl();
        }
        if (field_name == "ID") {
          policy.owner_id = std::move(*text);
        }
      }
      if (!policy.owner_id) {
        return MalformedAcl();
      }
    } else if (name == "AccessControlList" && !have_list) {
      have_list = true;
      for (auto grant : child.children()) {
        if (grant.type() != pugi::node_element) {
          continue;
        }
        if (std::string_view(grant.name()) != "Grant" || policy.acl.size() == kMaxAclGrants) {
          return MalformedAcl();
        }
        auto parsed = ParseGrant(grant, resolve);
        if (!parsed.ok()) {
          return std::move(parsed).error();
        }
        policy.acl.push_back(std::move(*parsed));
      }
    } else {
      return MalformedAcl();
    }
  }
  if (!have_list) {
    return MalformedAcl();
  }
  return policy;
}

std::string AccessControlPolicyXml(std::string_view owner, const metadata::Acl& acl) {
  XmlWriter xml("AccessControlPolicy");
  WriteOwner(xml, "Owner", owner);
  xml.Open("AccessControlList");
  for (const auto& grant : acl) {
    xml.Open("Grant");
    if (grant.grantee == metadata::AclGrantee::kUser) {
      xml.Open("Grantee", {{"xmlns:xsi", kXsiNamespace}, {"xsi:type", "CanonicalUser"}})
          .Element("ID", CanonicalUserId(grant.user))
          .Element("DisplayName", grant.user)
          .Close();
    } else {
      xml.Open("Grantee", {{"xmlns:xsi", kXsiNamespace}, {"xsi:type", "Group"}})
          .Element("URI", GroupUri(grant.grantee))
          .Close();
    }
    xml.Element("Permission", PermissionName(grant.permission)).Close();
  }
  return xml.Finish();
}

}  // namespace strata::gateway
