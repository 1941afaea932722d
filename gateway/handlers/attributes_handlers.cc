// GetObjectAttributes (GET ?attributes): what HeadObject and ListParts would tell about a
// version, in one XML document, limited to the attributes x-amz-object-attributes names.
#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "common/http_time.h"
#include "gateway/conditions.h"
#include "gateway/handlers/context.h"
#include "gateway/handlers/object_io.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

constexpr std::uint32_t kMaxAttributeParts = 1000;

struct Attributes {
  bool etag = false;
  bool checksum = false;
  bool object_parts = false;
  bool storage_class = false;
  bool object_size = false;
};

// x-amz-object-attributes: a comma-separated list of ETag, Checksum, ObjectParts,
// StorageClass, ObjectSize. kInvalidArgument when missing, empty or naming anything else.
Result<Attributes> ParseObjectAttributes(std::string_view header) {
  Attributes out;
  bool any = false;
  while (!header.empty()) {
    const auto comma = header.find(',');
    std::string_view name = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') {
      name.remove_prefix(1);
    }
    while (!name.empty() && name.back() == ' ') {
      name.remove_suffix(1);
    }
    if (name == "ETag") {
      out.etag = true;
    } else if (name == "Checksum") {
      out.checksum = true;
    } else if (name == "ObjectParts") {
      out.object_parts = true;
    } else if (name == "StorageClass") {
      out.storage_class = true;
    } else if (name == "ObjectSize") {
      out.object_size = true;
    } else {
      return Error(ErrorCode::kInvalidArgument, "Invalid attribute name specified.");
    }
    any = true;
  }
  if (!any) {
    return Error(ErrorCode::kInvalidArgument,
                 "The x-amz-object-attributes header specifying the attributes to be retrieved "
                 "is either missing or empty");
  }
  return out;
}

// A non-negative integer header; `fallback` when absent; kInvalidArgument otherwise.
Result<std::uint32_t> NumberHeader(const RequestContext& ctx, std::string_view name,
                                   std::uint32_t fallback) {
  auto text = ctx.Header(name);
  if (text.empty()) {
    return fallback;
  }
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "Provided " + std::string(name) + " not an integer or within integer range");
  }
  return v;
}

using Checksums = std::vector<std::pair<std::string, std::string>>;

// The checksums S3 shows: the one the client asked for, else the CRC64NVME every object
// has (strata keeps CRC64NVME besides a requested algorithm).
Checksums ShownChecksums(const Checksums& all) {
  Checksums requested;
  Checksums crc64;
  for (const auto& sum : all) {
    (sum.first == "CRC64NVME" ? crc64 : requested).push_back(sum);
  }
  return requested.empty() ? crc64 : requested;
}

bool HasRequestedChecksum(const Checksums& all) {
  for (const auto& sum : all) {
    if (sum.first != "CRC64NVME") {
      return true;
    }
  }
  return false;
}

void ObjectPartsXml(XmlWriter& xml, const metadata::ObjectRecord& record, std::uint32_t marker,
                    std::size_t max_parts) {
  // S3 lists the parts themselves only for objects uploaded with an additional checksum.
  const bool list_parts = HasRequestedChecksum(record.checksums);
  std::vector<const metadata::ObjectPart*> page;
  bool truncated = false;
  for (const auto& part : record.parts) {
    if (part.number <= marker) {
      continue;
    }
    if (page.size() == max_parts) {
      truncated = true;
      break;
    }
    page.push_back(&part);
  }
  xml.Open("ObjectParts")
      .Element("PartsCount", std::to_string(record.parts.size()))
      .Element("PartNumberMarker", std::to_string(marker))
      .Element("NextPartNumberMarker", std::to_string(page.empty() ? marker : page.back()->number))
      .Element("MaxParts", std::to_string(max_parts))
      .Element("IsTruncated", truncated ? "true" : "false");
  if (list_parts) {
    for (const auto* part : page) {
      xml.Open("Part")
          .Element("PartNumber", std::to_string(part->number))
          .Element("Size", std::to_string(part->size));
      for (const auto& [name, value] : part->checksums) {
        if (name != "CRC64NVME") {
          xml.Element("Checksum" + name, value);
        }
      }
      xml.Close();
    }
  }
  xml.Close();
}

}  // namespace

HandlerResult GetObjectAttributes(RequestContext& ctx) {
  STRATA_CO_TRY(auto attributes, ParseObjectAttributes(ctx.Header("x-amz-object-attributes")));
  STRATA_CO_TRY(auto max_parts, NumberHeader(ctx, "x-amz-max-parts", kMaxAttributeParts));
  STRATA_CO_TRY(auto marker, NumberHeader(ctx, "x-amz-part-number-marker", 0));
  STRATA_CO_RETURN_IF_ERROR(ExistingBucket(ctx));
  STRATA_CO_TRY(auto record, co_await AddressedVersion(ctx));
  auto answered = co_await AnswerUnreadable(ctx, record);
  if (answered) {
    co_return std::move(*answered);
  }

  XmlWriter xml("GetObjectAttributesResponse");
  if (attributes.etag) {
    xml.Element("ETag", record.etag);  // unquoted, as S3 answers here
  }
  if (attributes.checksum && !record.checksums.empty()) {
    const Checksums shown = ShownChecksums(record.checksums);
    xml.Open("Checksum");
    for (const auto& [name, value] : shown) {
      xml.Element("Checksum" + name, value);
    }
    const bool only_crc64 = shown.size() == 1 && shown.front().first == "CRC64NVME";
    xml.Element("ChecksumType", only_crc64 ? "FULL_OBJECT" : record.checksum_type);
    xml.Close();
  }
  if (attributes.object_parts && !record.parts.empty()) {
    ObjectPartsXml(xml, record, marker, std::min(max_parts, kMaxAttributeParts));
  }
  if (attributes.storage_class) {
    xml.Element("StorageClass", record.storage_class);
  }
  if (attributes.object_size) {
    xml.Element("ObjectSize", std::to_string(record.size));
  }
  ResponseHeader header;
  header.set(http::field::last_modified, FormatHttpDate(record.last_modified_ms));
  SetVersionHeader(ctx, record.version_id, header);
  co_return co_await SendXml(ctx, 200, xml.Finish(), std::move(header));
}

}  // namespace strata::gateway
