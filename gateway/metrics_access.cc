#include "gateway/metrics_access.h"

#include "auth/bearer_token.h"
#include "auth/request.h"
#include "gateway/error_table.h"
#include "gateway/s3_target.h"
#include "gateway/xml.h"

namespace strata::gateway {
namespace {

Error Denied(std::string message) { return Error(ErrorCode::kAccessDenied, std::move(message)); }

}  // namespace

Result<MetricsScope> AuthorizeScrape(const RequestHeader& request, const Services& services) {
  const ServerConfig& server = services.config.server;
  auto auth_it = request.find(http::field::authorization);
  const std::string_view authorization =
      auth_it == request.end() ? std::string_view() : std::string_view(auth_it->value());

  const std::string_view token = auth::BearerToken(authorization);
  if (!token.empty()) {
    if (auth::BearerTokenMatches(token, server.metrics_token)) {
      return MetricsScope::kFull;
    }
    return Denied("Access Denied: the bearer token does not match server.metrics_token");
  }

  auto host_it = request.find(http::field::host);
  auto target = ParseS3Target(
      request.target(),
      host_it == request.end() ? std::string_view() : std::string_view(host_it->value()),
      server.domain);
  if (!target.ok()) {
    return std::move(target).error();
  }
  bool query_signed = false;
  for (auto name : kQuerySignatureParams) {
    query_signed = query_signed || target->HasParam(name);
  }
  if (authorization.empty() && !query_signed) {
    if (server.metrics_public) {
      return MetricsScope::kAggregate;
    }
    return Denied(
        "Access Denied: this server's metrics need credentials (server.metrics_public = "
        "false)");
  }

  auth::RequestView view;
  view.method = request.method_string();
  view.raw_path = target->raw_path;
  view.raw_query = target->raw_query;
  for (const auto& field : request) {
    view.headers.emplace_back(field.name_string(), field.value());
  }
  auto verified = services.verifier.Verify(view);
  if (!verified.ok()) {
    return std::move(verified).error();
  }
  if (!verified->principal.admin) {
    return Denied("Access Denied: the metrics of every bucket need an admin user");
  }
  return MetricsScope::kFull;
}

std::string ScrapeErrorDocument(const Error& error, std::string_view request_id) {
  XmlWriter xml("Error", false);
  xml.Element("Code", LookupS3Error(error.code).code).Element("Message", error.message);
  for (const auto& [element, text] : error.details) {
    xml.Element(element, text);
  }
  xml.Element("RequestId", request_id);
  return xml.Finish();
}

}  // namespace strata::gateway
