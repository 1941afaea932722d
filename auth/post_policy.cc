#include "auth/post_policy.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "auth/internal/canonical.h"
#include "auth/internal/crypto.h"
#include "auth/internal/json_depth.h"
#include "common/http_time.h"
#include "common/text.h"

namespace strata::auth {

using Json = nlohmann::json;

namespace {

Error Invalid(std::string why) {
  return Error(ErrorCode::kInvalidPolicyDocument, "Invalid Policy: " + std::move(why));
}

Error Denied(std::string why) {
  return Error(ErrorCode::kAccessDenied, "Invalid according to Policy: " + std::move(why));
}

// A JSON string literal of `s` (valid UTF-8, as the parser left it), for messages.
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// A length range bound: a non-negative JSON integer, or a string of digits.
std::optional<std::uint64_t> Bound(const Json& v) {
  if (v.is_number_unsigned()) {
    return v.get<std::uint64_t>();
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    return i < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(i));
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    std::uint64_t out = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
      return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

Result<void> AddArrayCondition(const Json& item, std::vector<PostCondition>& out) {
  if (item.size() != 3 || !item[0].is_string()) {
    return Invalid("Invalid condition: a list must be [operator, field, value].");
  }
  const std::string op = internal::ToLower(item[0].get_ref<const std::string&>());
  PostCondition c;
  if (op == "content-length-range") {
    auto min = Bound(item[1]);
    auto max = Bound(item[2]);
    if (!min || !max || *min > *max) {
      return Invalid("Invalid content-length-range values.");
    }
    c.kind = PostCondition::Kind::kContentLengthRange;
    c.min = *min;
    c.max = *max;
    c.text =
        "[\"content-length-range\", " + std::to_string(*min) + ", " + std::to_string(*max) + "]";
    out.push_back(std::move(c));
    return Ok();
  }
  if (op != "eq" && op != "starts-with") {
    return Invalid("Invalid condition operator " + Quoted(op) + ".");
  }
  if (!item[1].is_string() || !item[2].is_string()) {
    return Invalid("Invalid " + op + " condition: the field and value must be strings.");
  }
  const auto& field = item[1].get_ref<const std::string&>();
  if (field.size() < 2 || field.front() != '$') {
    return Invalid("Invalid " + op + " condition: the field name must start with '$'.");
  }
  c.kind = op == "eq" ? PostCondition::Kind::kEq : PostCondition::Kind::kStartsWith;
  c.field = internal::ToLower(std::string_view(field).substr(1));
  c.value = item[2].get<std::string>();
  c.text = "[" + Quoted(op) + ", " + Quoted(field) + ", " + Quoted(c.value) + "]";
  out.push_back(std::move(c));
  return Ok();
}

// Whether a field needs no condition: the policy and signature themselves, the file, and
// what the form's author marked as ignorable.
bool ExemptField(std::string_view lower_name) {
  return lower_name == "policy" || lower_name == "x-amz-signature" || lower_name == "signature" ||
         lower_name == "awsaccesskeyid" || lower_name == "file" ||
         lower_name.starts_with("x-ignore-");
}

bool StartsWithEach(std::string_view list, std::string_view prefix) {
  // Content-Type may list several types; S3 requires each to start with the prefix.
  while (true) {
    const auto comma = list.find(',');
    if (!TrimBlanks(list.substr(0, comma)).starts_with(prefix)) {
      return false;
    }
    if (comma == std::string_view::npos) {
      return true;
    }
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

Result<PostPolicy> PostPolicy::Decode(std::string_view base64) {
  if (base64.size() > kMaxPostPolicyBytes * 4 / 3 + 4 * 1024) {
    return Invalid("the policy is too large.");
  }
  auto json = internal::Base64Decode(base64);
  if (!json) {
    return Invalid("Invalid 'policy' value: it is not base64.");
  }
  return Parse(*json);
}

Result<PostPolicy> PostPolicy::Parse(std::string_view json) {
  if (json.size() > kMaxPostPolicyBytes) {
    return Invalid("the policy is too large.");
  }
  if (internal::JsonNestingDepth(json) > kMaxPostPolicyDepth) {
    return Invalid("the policy nests too deeply.");
  }
  const Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Invalid("Invalid JSON.");
  }
  PostPolicy policy;
  const auto expiration = doc.find("expiration");
  if (expiration == doc.end()) {
    return Invalid("Policy missing expiration.");
  }
  std::optional<std::int64_t> ms;
  if (expiration->is_string()) {
    ms = ParseIso8601(expiration->get_ref<const std::string&>());
  }
  if (!ms) {
    return Invalid("Invalid 'expiration' value: it must be an ISO 8601 date and time.");
  }
  policy.expiration_ms_ = *ms;
  const auto conditions = doc.find("conditions");
  if (conditions == doc.end()) {
    return Invalid("Policy missing conditions.");
  }
  if (!conditions->is_array()) {
    return Invalid("Invalid 'conditions' value: it must be a list.");
  }
  for (const Json& item : *conditions) {
    if (item.is_array()) {
      STRATA_RETURN_IF_ERROR(AddArrayCondition(item, policy.conditions_));
    } else if (item.is_object() && !item.empty()) {
      for (const auto& [field, value] : item.items()) {
        if (!value.is_string() || field.empty()) {
          return Invalid("Invalid Simple-Condition: value must be a string.");
        }
        PostCondition c;
        c.kind = PostCondition::Kind::kEq;
        c.field = internal::ToLower(field);
        c.value = value.get<std::string>();
        c.text = "[\"eq\", " + Quoted("$" + field) + ", " + Quoted(c.value) + "]";
        policy.conditions_.push_back(std::move(c));
      }
    } else {
      return Invalid("Invalid condition: each must be a list or an object.");
    }
    if (policy.conditions_.size() > kMaxPostPolicyConditions) {
      return Invalid("the policy has too many conditions.");
    }
  }
  return policy;
}

std::optional<PostLengthRange> PostPolicy::length_range() const {
  std::optional<PostLengthRange> out;
  for (const auto& c : conditions_) {
    if (c.kind != PostCondition::Kind::kContentLengthRange) {
      continue;
    }
    if (!out) {
      out.emplace();
    }
    out->min = std::max(out->min, c.min);
    out->max = std::min(out->max, c.max);
  }
  return out;
}

Result<void> PostPolicy::Check(const std::vector<PostFormField>& fields, std::string_view bucket,
                               std::int64_t now_ms) const {
  if (now_ms >= expiration_ms_) {
    return Denied("Policy expired.");
  }
  std::vector<std::string> names;  // lower case, index-aligned with `fields`
  names.reserve(fields.size());
  for (const auto& f : fields) {
    names.push_back(internal::ToLower(f.name));
    if (std::count(names.begin(), names.end(), names.back()) > 1) {
      // Which of two values a condition would judge, and which one the upload would use,
      // must never differ: a field sent twice is refused.
      return Error(ErrorCode::kInvalidArgument,
                   "POST form field " + f.name + " appears more than once.");
    }
  }
  const auto value_of = [&](const std::string& field) -> std::string_view {
    if (field == "bucket") {
      return bucket;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == field) {
        return fields[i].value;
      }
    }
    return {};
  };
  for (const auto& c : conditions_) {
    bool met = true;
    switch (c.kind) {
      case PostCondition::Kind::kContentLengthRange:
        continue;
      case PostCondition::Kind::kEq:
        met = value_of(c.field) == c.value;
        break;
      case PostCondition::Kind::kStartsWith:
        met = c.field == "content-type" ? StartsWithEach(value_of(c.field), c.value)
                                        : value_of(c.field).starts_with(c.value);
        break;
    }
    if (!met) {
      return Denied("Policy Condition failed: " + c.text);
    }
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (ExemptField(names[i])) {
      continue;
    }
    const bool named = std::any_of(conditions_.begin(), conditions_.end(),
                                   [&](const PostCondition& c) { return c.field == names[i]; });
    if (!named) {
      return Denied("Extra input fields: " + fields[i].name);
    }
  }
  return Ok();
}

}  // namespace strata::auth
