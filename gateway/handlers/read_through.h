// Read-through of an upstream-bound bucket (private to gateway/): what strata answers for
// buckets and keys only the upstream has. DESIGN.md "Upstream binding".
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
// upstream has none either, or a delete of it waits to be pushed). A whole-object GET
// streams the upstream's bytes to the client while it writes them to the hot tier, and
// commits them there as a clean cached copy with the upstream's ETag and metadata;
// concurrent whole-object GETs of one key fetch it once (the others wait for the copy).
// Ranged GETs and HEADs pass through without caching.
HandlerResult ReadThrough(RequestContext& ctx);

// GET of a clean version whose local copy was evicted (`record`, from the index): streams
// the upstream's copy (pinned to the ETag recorded at push time) to the client and, for a
// whole-object GET, back onto the hot tier as the version's local copy.
HandlerResult ReadEvicted(RequestContext& ctx, metadata::ObjectRecord record);

// The bucket tag that makes a bucket behave as Glacier does: a GET of a version of a cold
// class (one mapped to the upstream tier) that has no local copy answers 403
// InvalidObjectState until RestoreObject brings it back, instead of reading it through.
// Set with PutBucketTagging (aws s3api put-bucket-tagging), value "true".
inline constexpr std::string_view kRequireRestoreTag = "strata:require-restore";
// Whether a read of `record` (a version of `bucket` without a local copy: a GET, or the
// source of a copy) must be refused for want of a restore.
bool RestoreRequired(const Config& config, const metadata::BucketRecord& bucket,
                     const metadata::ObjectRecord& record);

// Makes a version of a bound bucket local without a client to stream to (the source of a
// copy): `known`, a clean version whose local copy was evicted, is fetched back onto the
// hot tier; without it, the upstream's object at `key` (which the index does not have) is
// fetched and cached as a GET would. Returns the version's record, now with a local copy.
// kNoSuchKey when the upstream has none (or a delete of it waits to be pushed);
// kUnavailable (retryable) when it changed meanwhile.
boost::asio::awaitable<Result<metadata::ObjectRecord>> FetchLocalCopy(
    RequestContext& ctx, const metadata::BucketRecord& bucket, const ObjectKey& key,
    std::optional<metadata::ObjectRecord> known);

// Before a GET or HEAD serves a clean copy (one the upstream also has) of a bound,
// unversioned bucket's current version: when the copy was last checked longer ago than the s3
// tier's revalidate_after, asks the upstream with If-None-Match on its ETag. Unchanged (a 304):
// true, serve it. Changed or deleted upstream: the copy is dropped (queueing nothing)
// and false returned: read again. Upstream unreachable: true (a cache serves what it has
// while its source is down; the outage is logged).
boost::asio::awaitable<Result<bool>> Revalidate(RequestContext& ctx,
                                                const metadata::ObjectRecord& record);

// A page of a bound bucket's listing: keys > start_after that begin with `prefix`, from
// the index and the upstream merged in key order, at most max_keys; truncated when
// either source has more. The index wins: a key it has (a version or a delete marker), or
// whose delete waits to be pushed, hides the upstream's entry.
boost::asio::awaitable<Result<metadata::ListObjectsPage>> ListMergedPage(
    RequestContext& ctx, const std::string& prefix, const std::string& start_after,
    std::size_t max_keys);

}  // namespace strata::gateway
