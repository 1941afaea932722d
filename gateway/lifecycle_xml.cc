#include "gateway/lifecycle_xml.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <pugixml.hpp>
#include <set>

#include "common/http_time.h"
#include "gateway/xml.h"
#include "gateway/xml_load.h"

namespace strata::gateway {
namespace {

using metadata::LifecycleFilter;
using metadata::LifecycleRule;

constexpr std::size_t kMaxRuleIdChars = 255;
constexpr std::int64_t kMaxDays = 2'147'483'647;
constexpr std::int64_t kMaxNewerNoncurrentVersions = 100;
constexpr std::int64_t kDayMs = 86'400'000;

// The classes a lifecycle rule may name: S3's, and strata's tier names.
constexpr std::string_view kRuleClasses[] = {
    "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA",  "ONEZONE_IA", "INTELLIGENT_TIERING",
    "GLACIER",  "GLACIER_IR",         "DEEP_ARCHIVE", "HOT",        "WARM",
    "COLD"};

Error Malformed() {
  return Error(ErrorCode::kMalformedXml,
               "The XML you provided was not well-formed or did not validate against our "
               "published schema");
}

Error Invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

// The element children of `node`, by name, checked against the names allowed and how
// often each may occur (every name here at most once unless listed in `repeatable`).
class Children {
 public:
  static Result<Children> Of(const pugi::xml_node& node,
                             std::initializer_list<std::string_view> names,
                             std::initializer_list<std::string_view> repeatable = {}) {
    Children out;
    for (auto child : node.children()) {
      if (child.type() == pugi::node_pcdata) {
        // Text next to child elements is not in S3's schema; whitespace is layout.
        std::string_view text = child.value();
        if (text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
          return Malformed();
        }
        continue;
      }
      if (child.type() != pugi::node_element) {
        continue;
      }
      std::string_view name = child.name();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        return Malformed();
      }
      const bool many = std::find(repeatable.begin(), repeatable.end(), name) != repeatable.end();
      if (!many && out.Has(name)) {
        return Malformed();
      }
      out.nodes_.push_back(child);
    }
    return out;
  }

  bool Has(std::string_view name) const { return !All(name).empty(); }
  pugi::xml_node One(std::string_view name) const {
    auto all = All(name);
    return all.empty() ? pugi::xml_node() : all.front();
  }
  std::vector<pugi::xml_node> All(std::string_view name) const {
    std::vector<pugi::xml_node> out;
    for (const auto& n : nodes_) {
      if (name == n.name()) {
        out.push_back(n);
      }
    }
    return out;
  }
  std::size_t size() const { return nodes_.size(); }

 private:
  std::vector<pugi::xml_node> nodes_;
};

// An element that holds only text.
Result<std::string> Text(const pugi::xml_node& node) {
  for (auto child : node.children()) {
    if (child.type() == pugi::node_element) {
      return Malformed();
    }
  }
  return std::string(node.child_value());
}

// A whole number written in decimal digits (S3's schema has xsd:int and xsd:long here).
Result<std::int64_t> Number(const pugi::xml_node& node) {
  auto text = Text(node);
  if (!text.ok()) {
    return std::move(text).error();
  }
  std::string_view s = *text;
  std::int64_t value = 0;
  const bool negative = s.starts_with('-');
  std::string_view digits = negative ? s.substr(1) : s;
  // from_chars takes a sign of its own: only digits may follow ours.
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') {
    return Malformed();
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return Malformed();
  }
  return negative ? -value : value;
}

// Days that must be at least `min` (0 or 1).
Result<std::int64_t> Days(const pugi::xml_node& node, std::int64_t min, std::string_view what) {
  auto days = Number(node);
  if (!days.ok()) {
    return days;
  }
  if (*days < min || *days > kMaxDays) {
    return Invalid(std::string(what) +
                   (min > 0 ? " must be a positive integer" : " must be nonnegative"));
  }
  return days;
}

// S3's lifecycle dates are ISO 8601 at midnight UTC.
Result<std::int64_t> Date(const pugi::xml_node& node) {
  auto text = Text(node);
  if (!text.ok()) {
    return std::move(text).error();
  }
  auto ms = ParseIso8601(*text);
  if (!ms) {
    return Invalid("Date must be in ISO 8601 format");
  }
  if (*ms % kDayMs != 0) {
    return Invalid("'Date' must be at midnight GMT");
  }
  return *ms;
}

Result<std::string> StorageClass(const Children& fields) {
  if (!fields.Has("StorageClass")) {
    return Malformed();
  }
  auto text = Text(fields.One("StorageClass"));
  if (!text.ok()) {
    return text;
  }
  if (std::find(std::begin(kRuleClasses), std::end(kRuleClasses), *text) ==
      std::end(kRuleClasses)) {
    return Malformed();
  }
  if (*text == "STANDARD" || *text == "HOT") {
    return Invalid("'StorageClass' of a transition must be a class other than " + *text);
  }
  return text;
}

Result<std::pair<std::string, std::string>> FilterTag(const pugi::xml_node& node) {
  auto fields = Children::Of(node, {"Key", "Value"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  if (!fields->Has("Key") || !fields->Has("Value")) {
    return Malformed();
  }
  auto key = Text(fields->One("Key"));
  auto value = Text(fields->One("Value"));
  if (!key.ok() || !value.ok()) {
    return Malformed();
  }
  return std::make_pair(std::move(*key), std::move(*value));
}

// Prefix, Tag*, ObjectSizeGreaterThan, ObjectSizeLessThan: the predicates of a filter.
Result<void> ReadPredicates(const Children& fields, LifecycleFilter& filter) {
  if (fields.Has("Prefix")) {
    auto prefix = Text(fields.One("Prefix"));
    if (!prefix.ok()) {
      return std::move(prefix).error();
    }
    filter.prefix = std::move(*prefix);
  }
  for (const auto& node : fields.All("Tag")) {
    auto tag = FilterTag(node);
    if (!tag.ok()) {
      return std::move(tag).error();
    }
    const bool repeated = std::any_of(filter.tags.begin(), filter.tags.end(),
                                      [&](const auto& t) { return t.first == tag->first; });
    if (repeated) {
      return Invalid("Duplicate Tag Keys are not allowed.");
    }
    filter.tags.push_back(std::move(*tag));
  }
  for (auto [name, field] : {std::pair{"ObjectSizeGreaterThan", &filter.size_greater_than},
                             std::pair{"ObjectSizeLessThan", &filter.size_less_than}}) {
    if (!fields.Has(name)) {
      continue;
    }
    auto size = Number(fields.One(name));
    if (!size.ok()) {
      return std::move(size).error();
    }
    if (*size < 0) {
      return Invalid(std::string(name) + " must be a nonnegative integer");
    }
    *field = static_cast<std::uint64_t>(*size);
  }
  if (filter.size_greater_than && filter.size_less_than &&
      *filter.size_greater_than >= *filter.size_less_than) {
    return Invalid("ObjectSizeGreaterThan must be less than ObjectSizeLessThan");
  }
  return Ok();
}

Result<LifecycleFilter> ReadFilter(const pugi::xml_node& node) {
  auto fields =
      Children::Of(node, {"Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan", "And"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  LifecycleFilter filter;
  filter.form = LifecycleFilter::Form::kFilter;
  if (fields->size() > 1) {
    return Malformed();  // several predicates need an <And>
  }
  if (fields->Has("And")) {
    filter.form = LifecycleFilter::Form::kAnd;
    auto inner =
        Children::Of(fields->One("And"),
                     {"Prefix", "Tag", "ObjectSizeGreaterThan", "ObjectSizeLessThan"}, {"Tag"});
    if (!inner.ok()) {
      return std::move(inner).error();
    }
    if (inner->size() == 0) {
      return Malformed();
    }
    STRATA_RETURN_IF_ERROR(ReadPredicates(*inner, filter));
    return filter;
  }
  STRATA_RETURN_IF_ERROR(ReadPredicates(*fields, filter));
  return filter;
}

// NewerNoncurrentVersions, when present: 1..100.
Result<void> ReadNewerVersions(const Children& fields, std::optional<std::int64_t>& out) {
  if (!fields.Has("NewerNoncurrentVersions")) {
    return Ok();
  }
  auto newer = Number(fields.One("NewerNoncurrentVersions"));
  if (!newer.ok()) {
    return std::move(newer).error();
  }
  if (*newer < 1 || *newer > kMaxNewerNoncurrentVersions) {
    return Invalid("'NewerNoncurrentVersions' must be between 1 and 100");
  }
  out = *newer;
  return Ok();
}

// A days element the action cannot go without (kMalformedXml when missing).
Result<std::int64_t> RequiredDays(const Children& fields, std::string_view name, std::int64_t min,
                                  std::string_view what) {
  if (!fields.Has(name)) {
    return Malformed();
  }
  return Days(fields.One(name), min, what);
}

Result<void> ReadTransition(const pugi::xml_node& node, LifecycleRule& rule) {
  auto fields = Children::Of(node, {"Days", "Date", "StorageClass"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  if (fields->Has("Days") == fields->Has("Date")) {
    return Malformed();
  }
  metadata::LifecycleTransition t;
  auto cls = StorageClass(*fields);
  if (!cls.ok()) {
    return std::move(cls).error();
  }
  t.storage_class = std::move(*cls);
  if (fields->Has("Days")) {
    auto days = Days(fields->One("Days"), 0, "'Days' in Transition action");
    if (!days.ok()) {
      return std::move(days).error();
    }
    if ((t.storage_class == "STANDARD_IA" || t.storage_class == "ONEZONE_IA") && *days < 30) {
      return Invalid(
          "'Days' in Transition action must be greater than or equal to 30 for "
          "storageClass '" +
          t.storage_class + "'");
    }
    t.days = *days;
  } else {
    auto date = Date(fields->One("Date"));
    if (!date.ok()) {
      return std::move(date).error();
    }
    t.date_ms = *date;
  }
  rule.transitions.push_back(std::move(t));
  return Ok();
}

Result<void> ReadNoncurrentTransition(const pugi::xml_node& node, LifecycleRule& rule) {
  auto fields = Children::Of(node, {"NoncurrentDays", "StorageClass", "NewerNoncurrentVersions"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  if (!fields->Has("NoncurrentDays")) {
    return Malformed();
  }
  metadata::NoncurrentTransition t;
  auto cls = StorageClass(*fields);
  if (!cls.ok()) {
    return std::move(cls).error();
  }
  t.storage_class = std::move(*cls);
  auto days = Days(fields->One("NoncurrentDays"), 0,
                   "'NoncurrentDays' in NoncurrentVersionTransition action");
  if (!days.ok()) {
    return std::move(days).error();
  }
  if ((t.storage_class == "STANDARD_IA" || t.storage_class == "ONEZONE_IA") && *days < 30) {
    return Invalid(
        "'NoncurrentDays' in NoncurrentVersionTransition action must be greater than "
        "or equal to 30 for storageClass '" +
        t.storage_class + "'");
  }
  t.noncurrent_days = *days;
  STRATA_RETURN_IF_ERROR(ReadNewerVersions(*fields, t.newer_noncurrent_versions));
  rule.noncurrent_transitions.push_back(std::move(t));
  return Ok();
}

Result<void> ReadExpiration(const pugi::xml_node& node, LifecycleRule& rule) {
  auto fields = Children::Of(node, {"Days", "Date", "ExpiredObjectDeleteMarker"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  if (fields->size() != 1) {
    return Malformed();  // exactly one of the three
  }
  if (fields->Has("Days")) {
    auto days = Days(fields->One("Days"), 1, "'Days' for Expiration action");
    if (!days.ok()) {
      return std::move(days).error();
    }
    rule.expiration_days = *days;
  } else if (fields->Has("Date")) {
    auto date = Date(fields->One("Date"));
    if (!date.ok()) {
      return std::move(date).error();
    }
    rule.expiration_date_ms = *date;
  } else {
    auto flag = Text(fields->One("ExpiredObjectDeleteMarker"));
    if (!flag.ok() || (*flag != "true" && *flag != "false")) {
      return Malformed();
    }
    rule.expired_object_delete_marker = *flag == "true";
  }
  return Ok();
}

Result<void> ReadNoncurrentExpiration(const pugi::xml_node& node, LifecycleRule& rule) {
  auto fields = Children::Of(node, {"NoncurrentDays", "NewerNoncurrentVersions"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  auto days = RequiredDays(*fields, "NoncurrentDays", 1,
                           "'NoncurrentDays' for NoncurrentVersionExpiration action");
  if (!days.ok()) {
    return std::move(days).error();
  }
  rule.noncurrent_expiration_days = *days;
  STRATA_RETURN_IF_ERROR(ReadNewerVersions(*fields, rule.noncurrent_newer_versions));
  return Ok();
}

Result<void> ReadAbort(const pugi::xml_node& node, LifecycleRule& rule) {
  auto fields = Children::Of(node, {"DaysAfterInitiation"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  auto days = RequiredDays(*fields, "DaysAfterInitiation", 1,
                           "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action");
  if (!days.ok()) {
    return std::move(days).error();
  }
  rule.abort_incomplete_days = *days;
  return Ok();
}

// The checks across a rule's actions.
Result<void> CheckActions(const LifecycleRule& rule) {
  const bool any = !rule.transitions.empty() || !rule.noncurrent_transitions.empty() ||
                   rule.expiration_days || rule.expiration_date_ms ||
                   rule.expired_object_delete_marker || rule.noncurrent_expiration_days ||
                   rule.abort_incomplete_days;
  if (!any) {
    return Error(ErrorCode::kInvalidRequest, "At least one action needs to be specified in a rule");
  }
  const auto& f = rule.filter;
  const bool tagged = !f.tags.empty() || f.size_greater_than || f.size_less_than;
  if (tagged && rule.abort_incomplete_days) {
    return Error(
        ErrorCode::kInvalidRequest,
        "AbortIncompleteMultipartUpload cannot be specified with Tags or object size filters");
  }
  if (tagged && rule.expired_object_delete_marker) {
    return Error(ErrorCode::kInvalidRequest,
                 "ExpiredObjectDeleteMarker cannot be specified with Tags or object size filters");
  }
  std::set<std::string> classes;
  bool by_days = false;
  bool by_date = false;
  std::int64_t latest_days = -1;
  for (const auto& t : rule.transitions) {
    if (!classes.insert(t.storage_class).second) {
      return Invalid("'StorageClass' must be different for 'Transition' actions in same 'Rule'");
    }
    by_days = by_days || t.days.has_value();
    by_date = by_date || t.date_ms.has_value();
    latest_days = std::max(latest_days, t.days.value_or(-1));
  }
  if (by_days && by_date) {
    return Invalid("Found mixed 'Date' and 'Days' based Transition actions in lifecycle rule");
  }
  if (rule.expiration_days && *rule.expiration_days <= latest_days) {
    return Invalid(
        "'Days' in the Expiration action must be greater than 'Days' in the Transition action");
  }
  classes.clear();
  for (const auto& t : rule.noncurrent_transitions) {
    if (!classes.insert(t.storage_class).second) {
      return Invalid(
          "'StorageClass' must be different for 'NoncurrentVersionTransition' actions in same "
          "'Rule'");
    }
    if (rule.noncurrent_expiration_days && *rule.noncurrent_expiration_days <= t.noncurrent_days) {
      return Invalid(
          "'NoncurrentDays' in the NoncurrentVersionExpiration action must be greater "
          "than 'NoncurrentDays' in the NoncurrentVersionTransition action");
    }
  }
  return Ok();
}

Result<LifecycleRule> ReadRule(const pugi::xml_node& node,
                               const std::function<std::string()>& new_id) {
  auto fields =
      Children::Of(node,
                   {"ID", "Filter", "Prefix", "Status", "Transition", "NoncurrentVersionTransition",
                    "Expiration", "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload"},
                   {"Transition", "NoncurrentVersionTransition"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  LifecycleRule rule;
  if (!fields->Has("Status") || fields->Has("Filter") == fields->Has("Prefix")) {
    return Malformed();
  }
  auto status = Text(fields->One("Status"));
  if (!status.ok() || (*status != "Enabled" && *status != "Disabled")) {
    return Malformed();
  }
  rule.enabled = *status == "Enabled";
  if (fields->Has("ID")) {
    auto id = Text(fields->One("ID"));
    if (!id.ok()) {
      return std::move(id).error();
    }
    rule.id = std::move(*id);
  }
  if (rule.id.empty()) {
    rule.id = new_id();
  }
  if (rule.id.size() > kMaxRuleIdChars) {
    return Invalid("ID length should not exceed allowed limit of 255");
  }
  if (fields->Has("Prefix")) {
    auto prefix = Text(fields->One("Prefix"));
    if (!prefix.ok()) {
      return std::move(prefix).error();
    }
    rule.filter.form = LifecycleFilter::Form::kRulePrefix;
    rule.filter.prefix = std::move(*prefix);
  } else {
    auto filter = ReadFilter(fields->One("Filter"));
    if (!filter.ok()) {
      return std::move(filter).error();
    }
    rule.filter = std::move(*filter);
  }
  for (const auto& t : fields->All("Transition")) {
    STRATA_RETURN_IF_ERROR(ReadTransition(t, rule));
  }
  for (const auto& t : fields->All("NoncurrentVersionTransition")) {
    STRATA_RETURN_IF_ERROR(ReadNoncurrentTransition(t, rule));
  }
  if (fields->Has("Expiration")) {
    STRATA_RETURN_IF_ERROR(ReadExpiration(fields->One("Expiration"), rule));
  }
  if (fields->Has("NoncurrentVersionExpiration")) {
    STRATA_RETURN_IF_ERROR(
        ReadNoncurrentExpiration(fields->One("NoncurrentVersionExpiration"), rule));
  }
  if (fields->Has("AbortIncompleteMultipartUpload")) {
    STRATA_RETURN_IF_ERROR(ReadAbort(fields->One("AbortIncompleteMultipartUpload"), rule));
  }
  STRATA_RETURN_IF_ERROR(CheckActions(rule));
  return rule;
}

std::string DayDate(std::int64_t ms) {
  return FormatIso8601(ms);  // midnight: "2026-01-01T00:00:00.000Z"
}

void WriteFilter(XmlWriter& xml, const LifecycleFilter& f) {
  if (f.form == LifecycleFilter::Form::kRulePrefix) {
    xml.Element("Prefix", f.prefix.value_or(""));
    return;
  }
  xml.Open("Filter");
  if (f.form == LifecycleFilter::Form::kAnd) {
    xml.Open("And");
  }
  if (f.prefix) {
    xml.Element("Prefix", *f.prefix);
  }
  for (const auto& [key, value] : f.tags) {
    xml.Open("Tag").Element("Key", key).Element("Value", value).Close();
  }
  if (f.size_greater_than) {
    xml.Element("ObjectSizeGreaterThan", std::to_string(*f.size_greater_than));
  }
  if (f.size_less_than) {
    xml.Element("ObjectSizeLessThan", std::to_string(*f.size_less_than));
  }
  if (f.form == LifecycleFilter::Form::kAnd) {
    xml.Close();
  }
  xml.Close();
}

}  // namespace

Result<std::vector<LifecycleRule>> ParseLifecycleConfiguration(
    std::string_view body, const std::function<std::string()>& new_id) {
  pugi::xml_document doc;
  if (auto loaded = LoadXmlDocument(doc, body); !loaded.ok()) {
    return std::move(loaded).error();
  }
  int elements = 0;
  for (auto node : doc.children()) {
    elements += node.type() == pugi::node_element ? 1 : 0;
  }
  auto root = doc.document_element();
  if (elements != 1 || std::string_view(root.name()) != "LifecycleConfiguration") {
    return Malformed();
  }
  auto fields = Children::Of(root, {"Rule"}, {"Rule"});
  if (!fields.ok()) {
    return std::move(fields).error();
  }
  const auto nodes = fields->All("Rule");
  if (nodes.empty() || nodes.size() > kMaxLifecycleRules) {
    return Malformed();
  }
  std::vector<LifecycleRule> rules;
  std::set<std::string> ids;
  for (const auto& node : nodes) {
    auto rule = ReadRule(node, new_id);
    if (!rule.ok()) {
      return std::move(rule).error();
    }
    if (!ids.insert(rule->id).second) {
      return Invalid("Rule ID must be unique. Found same ID for more than one rule");
    }
    rules.push_back(std::move(*rule));
  }
  return rules;
}

std::string LifecycleConfigurationXml(const std::vector<LifecycleRule>& rules) {
  XmlWriter xml("LifecycleConfiguration");
  for (const auto& r : rules) {
    xml.Open("Rule").Element("ID", r.id);
    WriteFilter(xml, r.filter);
    xml.Element("Status", r.enabled ? "Enabled" : "Disabled");
    for (const auto& t : r.transitions) {
      xml.Open("Transition");
      if (t.days) {
        xml.Element("Days", std::to_string(*t.days));
      } else {
        xml.Element("Date", DayDate(t.date_ms.value_or(0)));
      }
      xml.Element("StorageClass", t.storage_class).Close();
    }
    for (const auto& t : r.noncurrent_transitions) {
      xml.Open("NoncurrentVersionTransition")
          .Element("NoncurrentDays", std::to_string(t.noncurrent_days))
          .Element("StorageClass", t.storage_class);
      if (t.newer_noncurrent_versions) {
        xml.Element("NewerNoncurrentVersions", std::to_string(*t.newer_noncurrent_versions));
      }
      xml.Close();
    }
    if (r.expiration_days || r.expiration_date_ms || r.expired_object_delete_marker) {
      xml.Open("Expiration");
      if (r.expiration_days) {
        xml.Element("Days", std::to_string(*r.expiration_days));
      } else if (r.expiration_date_ms) {
        xml.Element("Date", DayDate(*r.expiration_date_ms));
      } else {
        xml.Element("ExpiredObjectDeleteMarker", "true");
      }
      xml.Close();
    }
    if (r.noncurrent_expiration_days) {
      xml.Open("NoncurrentVersionExpiration")
          .Element("NoncurrentDays", std::to_string(*r.noncurrent_expiration_days));
      if (r.noncurrent_newer_versions) {
        xml.Element("NewerNoncurrentVersions", std::to_string(*r.noncurrent_newer_versions));
      }
      xml.Close();
    }
    if (r.abort_incomplete_days) {
      xml.Open("AbortIncompleteMultipartUpload")
          .Element("DaysAfterInitiation", std::to_string(*r.abort_incomplete_days))
          .Close();
    }
    xml.Close();
  }
  return xml.Finish();
}

}  // namespace strata::gateway
