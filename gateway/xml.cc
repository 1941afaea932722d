#include "gateway/xml.h"

#include <charconv>
#include <optional>
#include <pugixml.hpp>

#include "common/utf8.h"
#include "gateway/xml_load.h"

namespace strata::gateway {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const char c = text[pos];
    switch (c) {
      case '&':
        out += "&amp;";
        ++pos;
        continue;
      case '<':
        out += "&lt;";
        ++pos;
        continue;
      case '>':
        out += "&gt;";
        ++pos;
        continue;
      case '"':
        out += "&quot;";
        ++pos;
        continue;
      case '\'':
        out += "&apos;";
        ++pos;
        continue;
      case '\r':
        // A raw CR reads back as LF (XML 1.0 section 2.11 end-of-line handling): only
        // the reference keeps it.
        out += "&#13;";
        ++pos;
        continue;
      default:
        break;
    }
    const std::size_t start = pos;
    auto decoded = DecodeUtf8(text, pos);
    if (decoded && IsXmlChar(*decoded)) {
      out.append(text, start, pos - start);
    } else {
      // XML 1.0 cannot carry NUL, most C0 controls, U+FFFE/U+FFFF or bytes that are not
      // UTF-8, not even as character references (S3 writes "&#x0;" and clients' parsers
      // reject the whole document). U+FFFD keeps the document well-formed; listings
      // url-encode such keys instead (handlers/context.h, ListingNeedsUrlEncoding).
      out += "\xEF\xBF\xBD";
    }
  }
  return out;
}

XmlWriter::XmlWriter(std::string_view root, bool xmlns) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<";
  out_ += root;
  if (xmlns) {
    out_ += " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
  }
  out_ += '>';
  stack_.append(root).push_back('\0');
}

XmlWriter& XmlWriter::Open(std::string_view name) {
  out_ += '<';
  out_ += name;
  out_ += '>';
  stack_.append(name).push_back('\0');
  return *this;
}

XmlWriter& XmlWriter::Open(
    std::string_view name,
    std::initializer_list<std::pair<std::string_view, std::string_view>> attributes) {
  out_ += '<';
  out_ += name;
  for (const auto& [attribute, value] : attributes) {
    out_ += ' ';
    out_ += attribute;
    out_ += "=\"";
    out_ += XmlEscape(value);
    out_ += '"';
  }
  out_ += '>';
  stack_.append(name).push_back('\0');
  return *this;
}

XmlWriter& XmlWriter::Close() {
  if (stack_.empty()) {
    return *this;
  }
  stack_.pop_back();  // the trailing '\0'
  auto start = stack_.rfind('\0');
  start = start == std::string::npos ? 0 : start + 1;
  out_ += "</";
  out_.append(stack_, start, std::string::npos);
  out_ += '>';
  stack_.resize(start);
  return *this;
}

XmlWriter& XmlWriter::Element(std::string_view name, std::string_view text) {
  out_ += '<';
  out_ += name;
  out_ += '>';
  out_ += XmlEscape(text);
  out_ += "</";
  out_ += name;
  out_ += '>';
  return *this;
}

std::string XmlWriter::Finish() {
  while (!stack_.empty()) {
    Close();
  }
  return std::move(out_);
}

namespace {

Error Malformed() { return MalformedXmlError(); }

}  // namespace

Result<DeleteRequest> ParseDeleteRequest(std::string_view body) {
  constexpr std::size_t kMaxKeys = 1000;
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "Delete");
  if (!root) {
    return Malformed();
  }
  DeleteRequest request;
  for (auto child : root.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    std::string_view name = child.name();
    if (name == "Quiet") {
      std::string_view value = child.child_value();
      if (value != "true" && value != "false") {
        return Malformed();
      }
      request.quiet = value == "true";
    } else if (name == "Object") {
      auto key = child.child("Key");
      if (!key || std::string_view(key.child_value()).empty()) {
        return Malformed();
      }
      request.objects.push_back({key.child_value(), child.child("VersionId").child_value()});
      if (request.objects.size() > kMaxKeys) {
        return Malformed();
      }
    } else {
      return Malformed();
    }
  }
  if (request.objects.empty()) {
    return Malformed();
  }
  return request;
}

Result<std::string> ParseCreateBucketConfiguration(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return std::string();
  }
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "CreateBucketConfiguration");
  if (!root) {
    return Malformed();
  }
  return std::string(root.child("LocationConstraint").child_value());
}

namespace {

std::string Unquoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

}  // namespace

Result<std::string> ParseVersioningConfiguration(std::string_view body) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "VersioningConfiguration");
  if (!root) {
    return Malformed();
  }
  std::string status;
  for (auto child : root.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    std::string_view name = child.name();
    std::string_view value = child.child_value();
    if (name == "Status" && (value == "Enabled" || value == "Suspended")) {
      status = std::string(value);
    } else if (name == "MfaDelete" && value == "Disabled") {
      continue;
    } else if (name == "MfaDelete" && value == "Enabled") {
      return Error(ErrorCode::kNotImplemented, "MFA delete is not supported");
    } else {
      return Malformed();
    }
  }
  if (status.empty()) {
    return Malformed();
  }
  return status;
}

namespace {

// The text of an element that holds only text (or nothing); nullopt when it has child
// elements.
std::optional<std::string_view> TextOnly(const pugi::xml_node& node) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_element) {
      return std::nullopt;
    }
  }
  return std::string_view(node.child_value());
}

}  // namespace

Result<metadata::Tags> ParseTagging(std::string_view body) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "Tagging");
  if (!root) {
    return Malformed();
  }
  metadata::Tags tags;
  int tag_sets = 0;
  for (auto set : root.children()) {
    if (set.type() != pugi::node_element) {
      continue;
    }
    if (std::string_view(set.name()) != "TagSet" || ++tag_sets > 1) {
      return Malformed();
    }
    for (auto tag : set.children()) {
      if (tag.type() != pugi::node_element) {
        continue;
      }
      if (std::string_view(tag.name()) != "Tag") {
        return Malformed();
      }
      std::optional<std::string_view> key;
      std::optional<std::string_view> value;
      for (auto field : tag.children()) {
        if (field.type() != pugi::node_element) {
          continue;
        }
        std::string_view name = field.name();
        auto text = TextOnly(field);
        if (!text) {
          return Malformed();
        }
        if (name == "Key" && !key) {
          key = text;
        } else if (name == "Value" && !value) {
          value = text;
        } else {
          return Malformed();
        }
      }
      if (!key || !value) {
        return Malformed();
      }
      tags.emplace_back(std::string(*key), std::string(*value));
    }
  }
  if (tag_sets != 1) {
    return Malformed();
  }
  return tags;
}

Result<std::vector<storage::CompletedPart>> ParseCompleteMultipartUpload(std::string_view body) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "CompleteMultipartUpload");
  if (!root) {
    return Malformed();
  }
  std::vector<storage::CompletedPart> parts;
  for (auto child : root.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    if (std::string_view(child.name()) != "Part" || parts.size() == storage::kMaxPartNumber) {
      return Malformed();
    }
    storage::CompletedPart part;
    bool have_number = false;
    bool have_etag = false;
    for (auto field : child.children()) {
      if (field.type() != pugi::node_element) {
        continue;
      }
      std::string_view name = field.name();
      std::string_view value = field.child_value();
      if (name == "PartNumber") {
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), part.number);
        if (ec != std::errc() || p != value.data() + value.size() || part.number < 1 ||
            part.number > storage::kMaxPartNumber) {
          return Malformed();
        }
        have_number = true;
      } else if (name == "ETag") {
        part.etag = Unquoted(value);
        have_etag = true;
      } else if (name.starts_with("Checksum")) {
        auto algorithm = storage::ParseChecksumAlgorithm(name.substr(8));
        if (!algorithm) {
          return Error(ErrorCode::kInvalidPart, "Unknown checksum element " + std::string(name));
        }
        part.checksums.emplace_back(std::string(storage::ChecksumName(*algorithm)),
                                    std::string(value));
      } else {
        return Malformed();
      }
    }
    if (!have_number || !have_etag) {
      return Malformed();
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

Result<RestoreRequest> ParseRestoreRequest(std::string_view body) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  auto root = SingleRoot(doc, "RestoreRequest");
  if (!root) {
    return Malformed();
  }
  RestoreRequest request;
  bool have_days = false;
  bool have_job = false;
  bool have_description = false;
  for (auto child : root.children()) {
    if (child.type() != pugi::node_element) {
      continue;
    }
    const std::string_view name = child.name();
    if (name == "Type" || name == "SelectParameters" || name == "OutputLocation") {
      return Error(ErrorCode::kNotImplemented, "SELECT restores are not supported");
    }
    if (name == "Days" && !have_days) {
      auto value = TextOnly(child);
      if (!value) {
        return Malformed();
      }
      auto [p, ec] = std::from_chars(value->data(), value->data() + value->size(), request.days);
      if (ec != std::errc() || p != value->data() + value->size() || request.days < 1 ||
          request.days > 2'147'483'647) {
        return Malformed();
      }
      have_days = true;
    } else if (name == "GlacierJobParameters" && !have_job) {
      have_job = true;
      bool have_tier = false;
      for (auto job : child.children()) {
        if (job.type() != pugi::node_element) {
          continue;
        }
        auto value = TextOnly(job);
        if (std::string_view(job.name()) != "Tier" || have_tier || !value ||
            (*value != "Standard" && *value != "Bulk" && *value != "Expedited")) {
          return Malformed();
        }
        request.tier = std::string(*value);
        have_tier = true;
      }
      if (!have_tier) {
        return Malformed();
      }
    } else if (name == "Description" && !have_description && TextOnly(child)) {
      have_description = true;
    } else {
      return Malformed();
    }
  }
  if (!have_days) {
    return Malformed();
  }
  return request;
}

}  // namespace strata::gateway
