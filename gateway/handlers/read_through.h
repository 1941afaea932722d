// Reads of an upstream-bound bucket that no local copy serves (private to gateway/): the
// S3 half of them (conditions, range, headers, errors). Which copy is read, single flight
// and caching are storage's (TierEngine::OpenColdRead). DESIGN.md "Upstream binding".
#pragma once

#include <optional>

#include "gateway/handlers/context.h"

namespace strata::gateway {

// A bucket the index does not know but the upstream has: bound to it now (owned by the
// caller), so an existing store appears through strata with nothing to configure.
// nullopt when the upstream has no such bucket either.
boost::asio::awaitable<Result<std::optional<metadata::BucketRecord>>> AdoptUpstreamBucket(
    RequestContext& ctx, const BucketName& name);

// GET or HEAD of a key the bound bucket's index does not have (kNoSuchKey when the
// upstream has none either, or a delete of it waits to be pushed). A whole-object GET is
// cached on the hot tier as it streams, when admission lets it in; concurrent whole-object
// GETs of one key fetch it once.
HandlerResult ReadThrough(RequestContext& ctx);

// GET of a clean version whose local copy was evicted (`record`, from the index): the
// upstream's copy (pinned to the ETag recorded at push time) is streamed and, for a
// whole-object GET, becomes the version's local copy again.
HandlerResult ReadEvicted(RequestContext& ctx, metadata::ObjectRecord record);

}  // namespace strata::gateway
