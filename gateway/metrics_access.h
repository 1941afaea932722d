// Who may read which series of a metrics scrape (IsMetricsScrape in gateway/metrics.h
// picks the requests). Bucket names label the usage series, and every user's buckets
// would show on one page, so (issue 17, item 6):
//   - `Authorization: Bearer <server.metrics_token>` (what Prometheus sends): every series;
//     a bearer token that does not match: 403 AccessDenied;
//   - a request to /_strata/metrics signed (SigV4 or SigV2, header or query) by an admin
//     user, as strata-admin signs: every series; by another user: 403 AccessDenied; a
//     signature that does not verify: the verifier's error;
//   - no credentials: the aggregate series when server.metrics_public (the default), else
//     403 AccessDenied.
// Pure apart from the credential lookup; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "gateway/exchange.h"
#include "gateway/metrics.h"
#include "gateway/services.h"

namespace strata::gateway {

Result<MetricsScope> AuthorizeScrape(const RequestHeader& request, const Services& services);

// S3's error document for a refused scrape (Code, Message, the error's details, RequestId).
std::string ScrapeErrorDocument(const Error& error, std::string_view request_id);

}  // namespace strata::gateway
