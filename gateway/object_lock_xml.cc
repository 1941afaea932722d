#include "gateway/object_lock_xml.h"

#include <charconv>
#include <pugixml.hpp>

#include "common/http_time.h"
#include "gateway/xml.h"
#include "gateway/xml_load.h"
#include "metadata/object_lock.h"

namespace strata::gateway {
namespace {

constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;
constexpr std::int64_t kMaxYears = 100;

bool IsMode(std::string_view mode) {
  return mode == metadata::kGovernance || mode == metadata::kCompliance;
}

// The element children of `node` by name, each at most once; false for anything else
// (text beside elements, an element not in `names`, one given twice, or an element
// child inside a leaf).
template <std::size_t N>
bool Fields(const pugi::xml_node& node, const std::string_view (&names)[N],
            pugi::xml_node (&found)[N]) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
      return false;
    }
    if (child.type() != pugi::node_element) {
      continue;
    }
    bool known = false;
    for (std::size_t i = 0; i < N; ++i) {
      if (names[i] == child.name()) {
        if (found[i]) {
          return false;
        }
        found[i] = child;
        known = true;
      }
    }
    if (!known) {
      return false;
    }
  }
  return true;
}

std::optional<std::int64_t> PositiveNumber(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

Error BadPeriod() {
  return Error(ErrorCode::kInvalidArgument,
               "Default retention period must be a positive integer value");
}

}  // namespace

Result<metadata::ObjectLockConfig> ParseObjectLockConfiguration(std::string_view body) {
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "ObjectLockConfiguration");
  static constexpr std::string_view kTop[] = {"ObjectLockEnabled", "Rule"};
  pugi::xml_node top[2];
  if (!root || !Fields(root, kTop, top) || !top[0] ||
      std::string_view(top[0].text().get()) != "Enabled") {
    return MalformedXmlError();
  }
  metadata::ObjectLockConfig config;
  config.enabled = true;
  if (!top[1]) {
    return config;
  }
  static constexpr std::string_view kRule[] = {"DefaultRetention"};
  pugi::xml_node rule[1];
  static constexpr std::string_view kDefault[] = {"Mode", "Days", "Years"};
  pugi::xml_node fields[3];
  if (!Fields(top[1], kRule, rule) || !rule[0] || !Fields(rule[0], kDefault, fields) ||
      !fields[0] || !IsMode(fields[0].text().get()) || (!fields[1] == !fields[2])) {
    return MalformedXmlError();
  }
  config.default_mode = fields[0].text().get();
  auto period = PositiveNumber((fields[1] ? fields[1] : fields[2]).text().get());
  if (!period || *period <= 0) {
    return BadPeriod();
  }
  const std::int64_t max = fields[1] ? kMaxYears * 365 : kMaxYears;
  if (*period > max) {
    return Error(ErrorCode::kInvalidArgument, "Default retention period is too large.");
  }
  (fields[1] ? config.default_days : config.default_years) = *period;
  return config;
}

std::string ObjectLockConfigurationXml(const metadata::ObjectLockConfig& config) {
  XmlWriter xml("ObjectLockConfiguration");
  xml.Element("ObjectLockEnabled", "Enabled");
  if (!config.default_mode.empty()) {
    xml.Open("Rule").Open("DefaultRetention").Element("Mode", config.default_mode);
    if (config.default_days > 0) {
      xml.Element("Days", std::to_string(config.default_days));
    } else {
      xml.Element("Years", std::to_string(config.default_years));
    }
    xml.Close().Close();
  }
  return xml.Finish();
}

Result<Retention> ParseRetention(std::string_view body) {
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "Retention");
  static constexpr std::string_view kNames[] = {"Mode", "RetainUntilDate"};
  pugi::xml_node fields[2];
  if (!root || !Fields(root, kNames, fields) || (!fields[0] != !fields[1])) {
    return MalformedXmlError();
  }
  Retention retention;
  if (!fields[0]) {
    return retention;  // neither: the retention is removed
  }
  retention.mode = fields[0].text().get();
  if (!IsMode(retention.mode)) {
    return MalformedXmlError();
  }
  auto until = ParseIso8601(fields[1].text().get());
  if (!until) {
    return Error(ErrorCode::kInvalidArgument, "The retain until date is not a valid date.");
  }
  retention.until_ms = *until;
  return retention;
}

std::string RetentionXml(const Retention& retention) {
  XmlWriter xml("Retention");
  xml.Element("Mode", retention.mode).Element("RetainUntilDate", FormatIso8601(retention.until_ms));
  return xml.Finish();
}

Result<bool> ParseLegalHold(std::string_view body) {
  pugi::xml_document doc;
  STRATA_RETURN_IF_ERROR(LoadXmlDocument(doc, body));
  auto root = SingleRoot(doc, "LegalHold");
  static constexpr std::string_view kNames[] = {"Status"};
  pugi::xml_node fields[1];
  if (!root || !Fields(root, kNames, fields) || !fields[0]) {
    return MalformedXmlError();
  }
  const std::string_view status = fields[0].text().get();
  if (status != "ON" && status != "OFF") {
    return MalformedXmlError();
  }
  return status == "ON";
}

std::string LegalHoldXml(bool on) {
  XmlWriter xml("LegalHold");
  xml.Element("Status", on ? "ON" : "OFF");
  return xml.Finish();
}

Result<RequestedLock> ParseLockHeaders(std::string_view mode, std::string_view until,
                                       std::string_view legal_hold, std::int64_t now_ms) {
  RequestedLock lock;
  if (mode.empty() != until.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be "
                 "supplied");
  }
  if (!mode.empty()) {
    if (!IsMode(mode)) {
      return Error(ErrorCode::kInvalidArgument, "Unknown wormMode directive.");
    }
    auto until_ms = ParseIso8601(until);
    if (!until_ms) {
      return Error(ErrorCode::kInvalidArgument,
                   "The retain until date must be provided in ISO 8601 format");
    }
    if (*until_ms <= now_ms) {
      return Error(ErrorCode::kInvalidArgument, "The retain until date must be in the future!");
    }
    lock.retention = Retention{std::string(mode), *until_ms};
  }
  if (!legal_hold.empty()) {
    if (legal_hold != "ON" && legal_hold != "OFF") {
      return Error(ErrorCode::kInvalidArgument, "Legal Hold must be either of 'ON' or 'OFF'");
    }
    lock.legal_hold = legal_hold == "ON";
  }
  return lock;
}

Retention DefaultRetention(const metadata::ObjectLockConfig& config, std::int64_t now_ms) {
  if (!config.enabled || config.default_mode.empty()) {
    return {};
  }
  const std::int64_t days =
      config.default_days > 0 ? config.default_days : config.default_years * 365;
  return Retention{config.default_mode, now_ms + days * kDayMs};
}

}  // namespace strata::gateway
