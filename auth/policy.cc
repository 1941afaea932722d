#include "auth/policy.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "auth/internal/glob.h"
#include "auth/internal/json_depth.h"
#include "auth/internal/policy_actions.h"
#include "auth/internal/policy_condition.h"

namespace strata::auth {

using internal::ConditionClause;
using internal::GlobMatch;
using Json = nlohmann::json;

namespace {

constexpr std::string_view kS3ArnPrefix = "arn:aws:s3:::";
// A policy deeper than this is no policy S3 would take (one needs 6 levels); refusing it
// before parsing also bounds the parser's stack.
constexpr int kMaxDepth = 16;

Error Malformed(std::string message) {
  return Error(ErrorCode::kMalformedPolicy, std::move(message));
}
Error InvalidJson() { return Malformed("This policy contains invalid Json"); }

// Who a Principal (or NotPrincipal) names.
struct Principals {
  bool anyone = false;  // "*" or {"AWS": "*"}
  std::vector<std::string> aws;
  std::vector<std::string> canonical;
  std::vector<std::string> services;  // never a user of strata
};

struct Statement {
  std::string sid;
  bool allow = false;
  Principals principals;
  bool not_principal = false;
  std::vector<std::string> actions;
  bool not_action = false;
  std::vector<std::string> resources;
  bool not_resource = false;
  bool expand_resources = false;  // some resource holds a policy variable (2012-10-17)
  std::vector<ConditionClause> conditions;
};

// A string or a list of strings (or, for condition values, numbers and booleans as
// their text); nullopt for anything else.
std::optional<std::vector<std::string>> Strings(const Json& value, bool scalars = false) {
  std::vector<std::string> out;
  auto one = [&](const Json& item) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
      return true;
    }
    if (scalars && (item.is_number() || item.is_boolean())) {
      out.push_back(item.dump());
      return true;
    }
    return false;
  };
  if (value.is_array()) {
    for (const auto& item : value) {
      if (!one(item)) {
        return std::nullopt;
      }
    }
    return out;
  }
  if (!one(value)) {
    return std::nullopt;
  }
  return out;
}

bool IsAccountId(std::string_view s) {
  return s.size() == 12 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An AWS principal strata can name: "*", an account id, or an IAM ARN of a user, a role or
// an account's root ("arn:aws:iam::<account>:user/<name>"; the account may be empty, as
// strata's users have none).
bool IsAwsPrincipal(std::string_view s) {
  if (s == "*" || IsAccountId(s)) {
    return true;
  }
  constexpr std::string_view kIam = "arn:aws:iam::";
  if (!s.starts_with(kIam)) {
    return false;
  }
  s.remove_prefix(kIam.size());
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || (colon != 0 && !IsAccountId(s.substr(0, colon)))) {
    return false;
  }
  const std::string_view rest = s.substr(colon + 1);
  return rest == "root" || (rest.starts_with("user/") && rest.size() > 5) ||
         (rest.starts_with("role/") && rest.size() > 5);
}

bool IsCanonicalId(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Result<Principals> ReadPrincipals(const Json& value) {
  const Error invalid = Malformed("Invalid principal in policy");
  Principals out;
  if (value.is_string()) {
    if (value.get<std::string>() != "*") {
      return invalid;
    }
    out.anyone = true;
    return out;
  }
  if (!value.is_object() || value.empty()) {
    return invalid;
  }
  for (const auto& [kind, names] : value.items()) {
    auto list = Strings(names);
    if (!list || list->empty()) {
      return invalid;
    }
    for (auto& name : *list) {
      if (kind == "AWS") {
        if (!IsAwsPrincipal(name)) {
          return invalid;
        }
        out.anyone |= name == "*";
        out.aws.push_back(std::move(name));
      } else if (kind == "CanonicalUser") {
        if (!IsCanonicalId(name)) {
          return invalid;
        }
        out.canonical.push_back(std::move(name));
      } else if (kind == "Service") {
        if (name.empty()) {
          return invalid;
        }
        out.services.push_back(std::move(name));
      } else {
        return invalid;
      }
    }
  }
  return out;
}

// A resource of this bucket: "arn:aws:s3:::<bucket>" or ".../<key>", wildcards allowed,
// whose bucket part can name `bucket`.
bool IsResourceOf(std::string_view resource, std::string_view bucket) {
  if (!resource.starts_with(kS3ArnPrefix)) {
    return false;
  }
  const std::string_view rest = resource.substr(kS3ArnPrefix.size());
  const std::string_view bucket_part = rest.substr(0, rest.find('/'));
  if (bucket_part.empty()) {
    return false;
  }
  // A '*' in the bucket part may also stretch over "/key".
  return GlobMatch(bucket_part, bucket) ||
         (internal::HasWildcard(bucket_part) && GlobMatch(rest, std::string(bucket) + "/x"));
}

// Whether some action of `actions` applies to some resource of `resources`.
bool ActionsApply(const std::vector<std::string>& actions,
                  const std::vector<std::string>& resources, std::string_view bucket) {
  const std::string bucket_arn = std::string(kS3ArnPrefix) + std::string(bucket);
  for (const auto& action : actions) {
    const auto match = internal::MatchActions(action);
    for (const auto& resource : resources) {
      const std::string_view rest = std::string_view(resource).substr(kS3ArnPrefix.size());
      const bool names_objects =
          rest.find('/') != std::string_view::npos || internal::HasWildcard(rest);
      if ((match.bucket && GlobMatch(resource, bucket_arn)) || (match.object && names_objects)) {
        return true;
      }
    }
  }
  return false;
}

Result<std::vector<ConditionClause>> ReadConditions(const Json& value, bool variables) {
  if (!value.is_object()) {
    return Malformed("Condition must be an object");
  }
  std::vector<ConditionClause> out;
  for (const auto& [op_name, keys] : value.items()) {
    ConditionClause shape;
    STRATA_RETURN_IF_ERROR(internal::ParseConditionOperator(op_name, shape));
    if (!keys.is_object() || keys.empty()) {
      return Malformed("Invalid Condition type : " + op_name);
    }
    for (const auto& [key, values] : keys.items()) {
      ConditionClause clause = shape;
      clause.key = internal::ConditionKey(key);
      if (!internal::IsKnownConditionKey(clause.key)) {
        return Malformed("Policy has an invalid condition key");
      }
      auto list = Strings(values, /*scalars=*/true);
      if (!list || list->empty()) {
        return Malformed("Invalid value for condition " + key);
      }
      clause.values = std::move(*list);
      clause.expand = variables && std::any_of(clause.values.begin(), clause.values.end(),
                                               [](const std::string& v) {
                                                 return internal::HasPolicyVariable(v);
                                               });
      STRATA_RETURN_IF_ERROR(internal::PrepareConditionValues(clause));
      out.push_back(std::move(clause));
    }
  }
  return out;
}

// `variables`: the policy's Version has policy variables (2012-10-17).
Result<Statement> ReadStatement(const Json& value, std::string_view bucket, bool variables) {
  if (!value.is_object()) {
    return Malformed("Statement must be an object");
  }
  static const std::set<std::string, std::less<>> kElements = {
      "Sid",       "Effect",   "Principal",   "NotPrincipal", "Action",
      "NotAction", "Resource", "NotResource", "Condition"};
  for (const auto& [name, _] : value.items()) {
    if (!kElements.contains(name)) {
      return Malformed("Unknown field " + name);
    }
  }
  Statement statement;
  if (value.contains("Sid")) {
    if (!value["Sid"].is_string()) {
      return Malformed("Sid must be a string");
    }
    statement.sid = value["Sid"].get<std::string>();
  }
  if (!value.contains("Effect")) {
    return Malformed("Missing required field Effect");
  }
  const Json& effect = value["Effect"];
  if (!effect.is_string() || (effect != "Allow" && effect != "Deny")) {
    return Malformed("Invalid effect: " +
                     (effect.is_string() ? effect.get<std::string>() : effect.dump()));
  }
  statement.allow = effect == "Allow";

  if (value.contains("Principal") == value.contains("NotPrincipal")) {
    return value.contains("Principal") ? Malformed("Invalid principal in policy")
                                       : Malformed("Missing required field Principal");
  }
  statement.not_principal = value.contains("NotPrincipal");
  auto principals = ReadPrincipals(value[statement.not_principal ? "NotPrincipal" : "Principal"]);
  if (!principals.ok()) {
    return std::move(principals).error();
  }
  statement.principals = std::move(principals).value();

  if (value.contains("Action") == value.contains("NotAction")) {
    return value.contains("Action") ? Malformed("Policy has invalid action")
                                    : Malformed("Missing required field Action");
  }
  statement.not_action = value.contains("NotAction");
  auto actions = Strings(value[statement.not_action ? "NotAction" : "Action"]);
  if (!actions || actions->empty()) {
    return Malformed("Policy has invalid action");
  }
  for (const auto& action : *actions) {
    if (!internal::MatchActions(action).any) {
      return Malformed("Policy has invalid action");
    }
  }
  statement.actions = std::move(*actions);

  if (value.contains("Resource") == value.contains("NotResource")) {
    return value.contains("Resource") ? Malformed("Policy has invalid resource")
                                      : Malformed("Missing required field Resource");
  }
  statement.not_resource = value.contains("NotResource");
  auto resources = Strings(value[statement.not_resource ? "NotResource" : "Resource"]);
  if (!resources || resources->empty()) {
    return Malformed("Policy has invalid resource");
  }
  for (const auto& resource : *resources) {
    if (!IsResourceOf(resource, bucket)) {
      return Malformed("Policy has invalid resource");
    }
  }
  statement.resources = std::move(*resources);
  statement.expand_resources =
      variables && std::any_of(statement.resources.begin(), statement.resources.end(),
                               [](const std::string& r) { return internal::HasPolicyVariable(r); });
  if (!statement.not_action && !statement.not_resource &&
      !ActionsApply(statement.actions, statement.resources, bucket)) {
    return Malformed("Action does not apply to any resource(s) in statement");
  }
  if (value.contains("Condition")) {
    auto conditions = ReadConditions(value["Condition"], variables);
    if (!conditions.ok()) {
      return std::move(conditions).error();
    }
    statement.conditions = std::move(conditions).value();
  }
  return statement;
}

bool PrincipalListed(const Principals& principals, const PolicyPrincipal* who) {
  if (principals.anyone) {
    return true;
  }
  if (who == nullptr) {
    return false;
  }
  for (const auto& id : who->aws_ids) {
    if (std::find(principals.aws.begin(), principals.aws.end(), id) != principals.aws.end()) {
      return true;
    }
  }
  return !who->canonical_id.empty() &&
         std::find(principals.canonical.begin(), principals.canonical.end(), who->canonical_id) !=
             principals.canonical.end();
}

bool Applies(const Statement& statement, const PolicyRequest& request) {
  if (PrincipalListed(statement.principals, request.principal) == statement.not_principal) {
    return false;
  }
  const bool action = std::any_of(
      statement.actions.begin(), statement.actions.end(),
      [&](const std::string& pattern) { return GlobMatch(pattern, request.action, true); });
  if (action == statement.not_action) {
    return false;
  }
  const bool resource = std::any_of(
      statement.resources.begin(), statement.resources.end(), [&](const std::string& pattern) {
        if (statement.expand_resources && internal::HasPolicyVariable(pattern)) {
          const auto expanded = internal::ExpandPolicyVariables(pattern, request.conditions);
          return expanded && GlobMatch(*expanded, request.resource, false, /*escaped=*/true);
        }
        return GlobMatch(pattern, request.resource);
      });
  if (resource == statement.not_resource) {
    return false;
  }
  return std::all_of(statement.conditions.begin(), statement.conditions.end(),
                     [&](const ConditionClause& clause) {
                       return internal::ConditionHolds(clause, request.conditions);
                     });
}

// Whether `clause` narrows who may use a statement to fixed sources, as S3's public-ness
// check reads a policy: a positive operator on a source or identity key, without
// wildcards, and for addresses not all of them.
bool Narrows(const ConditionClause& clause) {
  static const std::set<std::string, std::less<>> kSourceKeys = {"aws:sourceip",
                                                                 "aws:sourcevpc",
                                                                 "aws:sourcevpce",
                                                                 "aws:sourcearn",
                                                                 "aws:sourceaccount",
                                                                 "aws:sourceowner",
                                                                 "aws:principalorgid",
                                                                 "aws:principalaccount",
                                                                 "aws:principalarn",
                                                                 "aws:userid",
                                                                 "aws:username",
                                                                 "s3:dataaccesspointarn",
                                                                 "s3:dataaccesspointaccount"};
  if (!kSourceKeys.contains(clause.key) || clause.negated() || clause.if_exists ||
      clause.op == internal::ConditionOp::kNull) {
    return false;
  }
  for (const auto& value : clause.values) {
    if (internal::HasWildcard(value)) {
      return false;
    }
  }
  for (const auto& range : clause.ranges) {
    const bool v4 = std::all_of(range.bytes.begin(), range.bytes.begin() + 10,
                                [](std::uint8_t b) { return b == 0; }) &&
                    range.bytes[10] == 0xff && range.bytes[11] == 0xff;
    if (range.prefix_bits == 0 || (v4 && range.prefix_bits <= 96)) {
      return false;  // every address (::/0), or every IPv4 one (0.0.0.0/0)
    }
  }
  return true;
}

}  // namespace

struct BucketPolicy::Parsed {
  std::string text;
  std::vector<Statement> statements;
  // Every condition's key, once each (NamesConditionKeys asks on every request).
  std::vector<std::string> condition_keys;
};

BucketPolicy::BucketPolicy(std::unique_ptr<Parsed> parsed) : parsed_(std::move(parsed)) {}
BucketPolicy::~BucketPolicy() = default;
BucketPolicy::BucketPolicy(BucketPolicy&&) noexcept = default;
BucketPolicy& BucketPolicy::operator=(BucketPolicy&&) noexcept = default;

Result<BucketPolicy> BucketPolicy::Parse(std::string_view json, std::string_view bucket) {
  if (json.size() > kMaxPolicyBytes) {
    return Malformed("Policies must be no larger than 20480 bytes");
  }
  const auto first = json.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || json[first] != '{') {
    return Malformed("Policies must be valid JSON and the first byte must be '{'");
  }
  if (internal::JsonNestingDepth(json) > kMaxDepth) {
    return InvalidJson();
  }
  const Json document = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return InvalidJson();
  }
  for (const auto& [name, _] : document.items()) {
    if (name != "Version" && name != "Id" && name != "Statement") {
      return Malformed("Unknown field " + name);
    }
  }
  if (document.contains("Version")) {
    const Json& version = document["Version"];
    if (!version.is_string() || (version != "2012-10-17" && version != "2008-10-17")) {
      return Malformed("The policy must contain a valid version string");
    }
  }
  if (document.contains("Id") && !document["Id"].is_string()) {
    return Malformed("Id must be a string");
  }
  if (!document.contains("Statement")) {
    return Malformed("Missing required field Statement");
  }
  const Json& statements = document["Statement"];
  auto parsed = std::make_unique<Parsed>();
  parsed->text = std::string(json);
  std::set<std::string, std::less<>> sids;
  const bool variables = document.contains("Version") && document["Version"] == "2012-10-17";
  auto add = [&](const Json& value) -> Result<void> {
    auto read = ReadStatement(value, bucket, variables);
    if (!read.ok()) {
      return std::move(read).error();
    }
    Statement& statement = read.value();
    if (!statement.sid.empty() && !sids.insert(statement.sid).second) {
      return Malformed("Statement IDs (SID) in a single policy must be unique");
    }
    for (const auto& clause : statement.conditions) {
      auto& keys = parsed->condition_keys;
      if (std::find(keys.begin(), keys.end(), clause.key) == keys.end()) {
        keys.push_back(clause.key);
      }
    }
    parsed->statements.push_back(std::move(statement));
    return Ok();
  };
  if (statements.is_array()) {
    if (statements.empty()) {
      return Malformed("Missing required field Statement");
    }
    for (const auto& value : statements) {
      STRATA_RETURN_IF_ERROR(add(value));
    }
  } else {
    STRATA_RETURN_IF_ERROR(add(statements));
  }
  return BucketPolicy(std::move(parsed));
}

PolicyDecision BucketPolicy::Evaluate(const PolicyRequest& request) const {
  bool allowed = false;
  for (const auto& statement : parsed_->statements) {
    if (statement.allow && allowed) {
      continue;  // only a Deny can change the answer now
    }
    if (!Applies(statement, request)) {
      continue;
    }
    if (!statement.allow) {
      return PolicyDecision::kDeny;
    }
    allowed = true;
  }
  return allowed ? PolicyDecision::kAllow : PolicyDecision::kNone;
}

bool BucketPolicy::IsPublic() const {
  for (const auto& statement : parsed_->statements) {
    if (!statement.allow || statement.not_principal || !statement.principals.anyone) {
      continue;
    }
    if (std::none_of(statement.conditions.begin(), statement.conditions.end(), Narrows)) {
      return true;
    }
  }
  return false;
}

std::optional<std::span<const std::string>> MapConditionSource::Values(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) {
    return std::nullopt;
  }
  return std::span<const std::string>(it->second);
}

bool BucketPolicy::NamesConditionKeys(std::string_view prefix) const {
  const auto& keys = parsed_->condition_keys;
  return std::any_of(keys.begin(), keys.end(),
                     [prefix](const std::string& key) { return key.starts_with(prefix); });
}

const std::string& BucketPolicy::text() const { return parsed_->text; }
std::size_t BucketPolicy::statement_count() const { return parsed_->statements.size(); }

}  // namespace strata::auth
