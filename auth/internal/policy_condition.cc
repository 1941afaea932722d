#include "auth/internal/policy_condition.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "auth/internal/glob.h"
#include "common/http_time.h"

namespace strata::auth::internal {
namespace {

Error Malformed(std::string message) {
  return Error(ErrorCode::kMalformedPolicy, std::move(message));
}

struct OperatorName {
  std::string_view name;
  ConditionOp op;
};

constexpr OperatorName kOperators[] = {
    {"StringEquals", ConditionOp::kStringEquals},
    {"StringNotEquals", ConditionOp::kStringNotEquals},
    {"StringEqualsIgnoreCase", ConditionOp::kStringEqualsIgnoreCase},
    {"StringNotEqualsIgnoreCase", ConditionOp::kStringNotEqualsIgnoreCase},
    {"StringLike", ConditionOp::kStringLike},
    {"StringNotLike", ConditionOp::kStringNotLike},
    {"NumericEquals", ConditionOp::kNumericEquals},
    {"NumericNotEquals", ConditionOp::kNumericNotEquals},
    {"NumericLessThan", ConditionOp::kNumericLessThan},
    {"NumericLessThanEquals", ConditionOp::kNumericLessThanEquals},
    {"NumericGreaterThan", ConditionOp::kNumericGreaterThan},
    {"NumericGreaterThanEquals", ConditionOp::kNumericGreaterThanEquals},
    {"DateEquals", ConditionOp::kDateEquals},
    {"DateNotEquals", ConditionOp::kDateNotEquals},
    {"DateLessThan", ConditionOp::kDateLessThan},
    {"DateLessThanEquals", ConditionOp::kDateLessThanEquals},
    {"DateGreaterThan", ConditionOp::kDateGreaterThan},
    {"DateGreaterThanEquals", ConditionOp::kDateGreaterThanEquals},
    {"Bool", ConditionOp::kBool},
    {"IpAddress", ConditionOp::kIpAddress},
    {"NotIpAddress", ConditionOp::kNotIpAddress},
    {"ArnEquals", ConditionOp::kArnEquals},
    {"ArnLike", ConditionOp::kArnLike},
    {"ArnNotEquals", ConditionOp::kArnNotEquals},
    {"ArnNotLike", ConditionOp::kArnNotLike},
    {"Null", ConditionOp::kNull},
};

// S3's own condition keys (lower-cased); tag keys follow a '/'.
constexpr std::string_view kS3Keys[] = {
    "s3:authtype",
    "s3:delimiter",
    "s3:locationconstraint",
    "s3:max-keys",
    "s3:object-lock-legal-hold",
    "s3:object-lock-mode",
    "s3:object-lock-remaining-retention-days",
    "s3:object-lock-retain-until-date",
    "s3:prefix",
    "s3:requestobjecttagkeys",
    "s3:resourceaccount",
    "s3:signatureage",
    "s3:signatureversion",
    "s3:tlsversion",
    "s3:versionid",
    "s3:x-amz-acl",
    "s3:x-amz-content-sha256",
    "s3:x-amz-copy-source",
    "s3:x-amz-grant-full-control",
    "s3:x-amz-grant-read",
    "s3:x-amz-grant-read-acp",
    "s3:x-amz-grant-write",
    "s3:x-amz-grant-write-acp",
    "s3:x-amz-metadata-directive",
    "s3:x-amz-object-ownership",
    "s3:x-amz-server-side-encryption",
    "s3:x-amz-server-side-encryption-aws-kms-key-id",
    "s3:x-amz-server-side-encryption-customer-algorithm",
    "s3:x-amz-storage-class",
    "s3:x-amz-website-redirect-location",
};
constexpr std::string_view kS3TagKeys[] = {"s3:existingobjecttag/", "s3:requestobjecttag/"};

bool IsStringOp(ConditionOp op) {
  return op >= ConditionOp::kStringEquals && op <= ConditionOp::kStringNotLike;
}
bool IsNumericOp(ConditionOp op) {
  return op >= ConditionOp::kNumericEquals && op <= ConditionOp::kNumericGreaterThanEquals;
}
bool IsDateOp(ConditionOp op) {
  return op >= ConditionOp::kDateEquals && op <= ConditionOp::kDateGreaterThanEquals;
}
bool IsArnOp(ConditionOp op) {
  return op >= ConditionOp::kArnEquals && op <= ConditionOp::kArnNotLike;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x | 0x20 : x) == (y >= 'A' && y <= 'Z' ? y | 0x20 : y);
         });
}

// The comparison of a Numeric or Date operator: both families list Equals, NotEquals
// (compared as Equals, the caller negates), LessThan, LessThanEquals, GreaterThan,
// GreaterThanEquals in that order from `first`.
enum class Comparison { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual };
static_assert(static_cast<int>(ConditionOp::kNumericGreaterThanEquals) -
                      static_cast<int>(ConditionOp::kNumericEquals) ==
                  5 &&
              static_cast<int>(ConditionOp::kDateGreaterThanEquals) -
                      static_cast<int>(ConditionOp::kDateEquals) ==
                  5);
Comparison ComparisonOf(ConditionOp op, ConditionOp first) {
  static constexpr Comparison kOrder[] = {Comparison::kEqual,   Comparison::kEqual,
                                          Comparison::kLess,    Comparison::kLessOrEqual,
                                          Comparison::kGreater, Comparison::kGreaterOrEqual};
  return kOrder[static_cast<int>(op) - static_cast<int>(first)];
}

// Whether `got` compares so to one of `wants`.
template <typename T>
bool AnyCompares(Comparison comparison, T got, const std::vector<T>& wants) {
  return std::any_of(wants.begin(), wants.end(), [&](T want) {
    switch (comparison) {
      case Comparison::kEqual:
        return got == want;
      case Comparison::kLess:
        return got < want;
      case Comparison::kLessOrEqual:
        return got <= want;
      case Comparison::kGreater:
        return got > want;
      case Comparison::kGreaterOrEqual:
        return got >= want;
    }
    return false;
  });
}

std::optional<double> ReadNumber(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// A date as IAM reads one: ISO 8601 ("2026-01-01T00:00:00Z", a fraction allowed), or
// seconds since the epoch.
std::optional<std::int64_t> ReadTimeMs(std::string_view text) {
  if (auto iso = ParseIso8601(text)) {
    return iso;
  }
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      seconds > (std::int64_t{1} << 40) || seconds < -(std::int64_t{1} << 40)) {
    return std::nullopt;
  }
  return seconds * 1000;
}

bool ReadRange(std::string_view text, AddressRange& out) {
  const auto slash = text.find('/');
  if (!ParseAddress(text.substr(0, slash), out)) {
    return false;
  }
  const bool v4 = text.substr(0, slash).find(':') == std::string_view::npos;
  if (slash == std::string_view::npos) {
    return true;  // one address
  }
  const std::string_view bits = text.substr(slash + 1);
  int prefix = 0;
  auto [end, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
  if (ec != std::errc() || end != bits.data() + bits.size() || bits.empty() || prefix < 0 ||
      prefix > (v4 ? 32 : 128)) {
    return false;
  }
  out.prefix_bits = v4 ? 96 + prefix : prefix;
  return true;
}

bool InRange(const AddressRange& range, const AddressRange& address) {
  const int whole = range.prefix_bits / 8;
  if (std::memcmp(range.bytes.data(), address.bytes.data(), static_cast<std::size_t>(whole)) != 0) {
    return false;
  }
  const int rest = range.prefix_bits % 8;
  if (rest == 0) {
    return true;
  }
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (range.bytes[whole] & mask) == (address.bytes[whole] & mask);
}

// ARNs compare component by component (arn:partition:service:region:account:resource),
// each with the wildcards of ArnLike; the resource keeps any further colons.
bool ArnMatches(std::string_view pattern, std::string_view arn) {
  for (int component = 0; component < 5; ++component) {
    const auto p = pattern.find(':');
    const auto a = arn.find(':');
    if (p == std::string_view::npos || a == std::string_view::npos) {
      return false;
    }
    if (!GlobMatch(pattern.substr(0, p), arn.substr(0, a))) {
      return false;
    }
    pattern.remove_prefix(p + 1);
    arn.remove_prefix(a + 1);
  }
  return GlobMatch(pattern, arn);
}

// A string operator's test of one request value against one of its values.
bool StringMatches(ConditionOp op, std::string_view want, std::string_view value) {
  if (op == ConditionOp::kStringLike || op == ConditionOp::kStringNotLike) {
    return GlobMatch(want, value);
  }
  if (op == ConditionOp::kStringEqualsIgnoreCase || op == ConditionOp::kStringNotEqualsIgnoreCase) {
    return EqualsIgnoreCase(want, value);
  }
  return want == value;
}

// The same with policy variables expanded in `want`: the expansion is an escaped pattern,
// so equality becomes a match without wildcards.
bool ExpandedStringMatches(ConditionOp op, std::string_view want, std::string_view value,
                           const ConditionSource* source) {
  const auto expanded = ExpandPolicyVariables(want, source);
  if (!expanded) {
    return false;
  }
  const bool like = op == ConditionOp::kStringLike || op == ConditionOp::kStringNotLike;
  if (like) {
    return GlobMatch(*expanded, value, false, /*escaped=*/true);
  }
  // Equality: every character of the expansion literal.
  std::string literal;
  for (std::size_t i = 0; i < expanded->size(); ++i) {
    if ((*expanded)[i] == '\\' && i + 1 < expanded->size()) {
      ++i;
    }
    literal.push_back((*expanded)[i]);
  }
  return StringMatches(op, literal, value);
}

// Whether one request value matches one of the clause's values, by the operator's
// positive form (StringNotEquals tests equality here; the caller negates).
bool MatchesAny(const ConditionClause& clause, std::string_view value,
                const ConditionSource* source) {
  const ConditionOp op = clause.op;
  if (IsStringOp(op)) {
    for (const auto& want : clause.values) {
      const bool hit = clause.expand && HasPolicyVariable(want)
                           ? ExpandedStringMatches(op, want, value, source)
                           : StringMatches(op, want, value);
      if (hit) {
        return true;
      }
    }
    return false;
  }
  if (IsArnOp(op)) {
    for (const auto& want : clause.values) {
      if (ArnMatches(want, value)) {
        return true;
      }
    }
    return false;
  }
  if (IsNumericOp(op)) {
    const auto got = ReadNumber(value);
    if (!got) {
      return false;
    }
    return AnyCompares(ComparisonOf(op, ConditionOp::kNumericEquals), *got, clause.numbers);
  }
  if (IsDateOp(op)) {
    const auto got = ReadTimeMs(value);
    if (!got) {
      return false;
    }
    return AnyCompares(ComparisonOf(op, ConditionOp::kDateEquals), *got, clause.times_ms);
  }
  if (op == ConditionOp::kBool) {
    for (const auto& want : clause.values) {
      if (EqualsIgnoreCase(want, value)) {
        return true;
      }
    }
    return false;
  }
  if (op == ConditionOp::kIpAddress || op == ConditionOp::kNotIpAddress) {
    AddressRange address;
    if (!ParseAddress(value, address)) {
      return false;
    }
    for (const auto& range : clause.ranges) {
      if (InRange(range, address)) {
        return true;
      }
    }
    return false;
  }
  return false;
}

// The element test of one request value: the operator's positive match, or for a negated
// operator that it matches none of the clause's values.
bool ValueSatisfies(const ConditionClause& clause, std::string_view value,
                    const ConditionSource* source) {
  return MatchesAny(clause, value, source) != clause.negated();
}

}  // namespace

bool ConditionClause::negated() const {
  switch (op) {
    case ConditionOp::kStringNotEquals:
    case ConditionOp::kStringNotEqualsIgnoreCase:
    case ConditionOp::kStringNotLike:
    case ConditionOp::kNumericNotEquals:
    case ConditionOp::kDateNotEquals:
    case ConditionOp::kNotIpAddress:
    case ConditionOp::kArnNotEquals:
    case ConditionOp::kArnNotLike:
      return true;
    default:
      return false;
  }
}

Result<void> ParseConditionOperator(std::string_view name, ConditionClause& clause) {
  const std::string full(name);
  clause.set = ConditionSet::kSingle;
  if (name.starts_with("ForAllValues:")) {
    clause.set = ConditionSet::kForAllValues;
    name.remove_prefix(13);
  } else if (name.starts_with("ForAnyValue:")) {
    clause.set = ConditionSet::kForAnyValue;
    name.remove_prefix(12);
  }
  clause.if_exists = name.ends_with("IfExists");
  if (clause.if_exists) {
    name.remove_suffix(8);
  }
  for (const auto& known : kOperators) {
    if (known.name == name) {
      clause.op = known.op;
      if (known.op == ConditionOp::kNull &&
          (clause.if_exists || clause.set != ConditionSet::kSingle)) {
        break;  // Null takes neither
      }
      return Ok();
    }
  }
  return Malformed("Invalid Condition type : " + full);
}

std::string ConditionKey(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c | 0x20);
    }
  }
  return out;
}

bool IsKnownConditionKey(std::string_view key) {
  if (key.starts_with("aws:")) {
    return key.size() > 4;
  }
  for (auto known : kS3Keys) {
    if (key == known) {
      return true;
    }
  }
  for (auto prefix : kS3TagKeys) {
    if (key.starts_with(prefix) && key.size() > prefix.size()) {
      return true;
    }
  }
  return false;
}

Result<void> PrepareConditionValues(ConditionClause& clause) {
  const Error bad = Malformed("Invalid value for condition " + clause.key);
  for (const auto& value : clause.values) {
    if (IsNumericOp(clause.op)) {
      auto number = ReadNumber(value);
      if (!number) {
        return bad;
      }
      clause.numbers.push_back(*number);
    } else if (IsDateOp(clause.op)) {
      auto time = ReadTimeMs(value);
      if (!time) {
        return bad;
      }
      clause.times_ms.push_back(*time);
    } else if (clause.op == ConditionOp::kIpAddress || clause.op == ConditionOp::kNotIpAddress) {
      AddressRange range;
      if (!ReadRange(value, range)) {
        return bad;
      }
      clause.ranges.push_back(range);
    } else if (clause.op == ConditionOp::kBool || clause.op == ConditionOp::kNull) {
      if (!EqualsIgnoreCase(value, "true") && !EqualsIgnoreCase(value, "false")) {
        return bad;
      }
    }
  }
  if (clause.op == ConditionOp::kNull) {
    if (clause.values.size() != 1) {
      return bad;
    }
    clause.null_expected = EqualsIgnoreCase(clause.values.front(), "true");
  }
  return Ok();
}

bool ConditionHolds(const ConditionClause& clause, const ConditionSource* source) {
  std::optional<std::span<const std::string>> values;
  if (source != nullptr) {
    values = source->Values(clause.key);
  }
  const bool present = values.has_value() && !values->empty();
  if (clause.op == ConditionOp::kNull) {
    return clause.null_expected != present;
  }
  if (!present) {
    if (clause.if_exists || clause.set == ConditionSet::kForAllValues) {
      return true;
    }
    if (clause.set == ConditionSet::kForAnyValue) {
      return false;
    }
    return clause.negated();
  }
  switch (clause.set) {
    case ConditionSet::kForAllValues:
      return std::all_of(values->begin(), values->end(),
                         [&](const std::string& v) { return ValueSatisfies(clause, v, source); });
    case ConditionSet::kForAnyValue:
      return std::any_of(values->begin(), values->end(),
                         [&](const std::string& v) { return ValueSatisfies(clause, v, source); });
    case ConditionSet::kSingle:
      break;
  }
  // A single-valued operator over a key with values: a positive one holds when any value
  // matches, a negated one when none does.
  const bool any = std::any_of(values->begin(), values->end(),
                               [&](const std::string& v) { return MatchesAny(clause, v, source); });
  return any != clause.negated();
}

bool HasPolicyVariable(std::string_view pattern) {
  const auto open = pattern.find("${");
  return open != std::string_view::npos && pattern.find('}', open) != std::string_view::npos;
}

std::optional<std::string> ExpandPolicyVariables(std::string_view pattern,
                                                 const ConditionSource* source) {
  std::string out;
  out.reserve(pattern.size() + 16);
  while (!pattern.empty()) {
    const auto open = pattern.find("${");
    const auto close = open == std::string_view::npos ? open : pattern.find('}', open);
    if (close == std::string_view::npos) {
      // No (more) variables: the rest as written, its wildcards still wildcards.
      for (char c : pattern) {
        if (c == '\\') {
          out.push_back('\\');
        }
        out.push_back(c);
      }
      break;
    }
    for (char c : pattern.substr(0, open)) {
      if (c == '\\') {
        out.push_back('\\');
      }
      out.push_back(c);
    }
    std::string_view body = pattern.substr(open + 2, close - open - 2);
    pattern.remove_prefix(close + 1);
    if (body == "*" || body == "?" || body == "$") {
      AppendEscaped(out, body);
      continue;
    }
    // "key" or "key, 'default'".
    std::optional<std::string_view> fallback;
    if (const auto comma = body.find(','); comma != std::string_view::npos) {
      std::string_view rest = body.substr(comma + 1);
      while (!rest.empty() && rest.front() == ' ') {
        rest.remove_prefix(1);
      }
      if (rest.size() >= 2 && rest.front() == '\'' && rest.back() == '\'') {
        fallback = rest.substr(1, rest.size() - 2);
      }
      body = body.substr(0, comma);
    }
    while (!body.empty() && body.back() == ' ') {
      body.remove_suffix(1);
    }
    std::optional<std::span<const std::string>> values;
    if (source != nullptr) {
      values = source->Values(ConditionKey(body));
    }
    if (values && !values->empty()) {
      AppendEscaped(out, values->front());
    } else if (fallback) {
      AppendEscaped(out, *fallback);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

bool ParseAddress(std::string_view text, AddressRange& out) {
  char buffer[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof buffer) {
    return false;
  }
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  out = AddressRange{};
  if (text.find(':') == std::string_view::npos) {
    in_addr v4{};
    if (inet_pton(AF_INET, buffer, &v4) != 1) {
      return false;
    }
    out.bytes[10] = 0xff;
    out.bytes[11] = 0xff;
    std::memcpy(out.bytes.data() + 12, &v4, 4);
    return true;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, buffer, &v6) != 1) {
    return false;
  }
  std::memcpy(out.bytes.data(), &v6, 16);
  return true;
}

}  // namespace strata::auth::internal
