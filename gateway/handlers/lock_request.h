// What a request asks of object lock (issue 20): the lock a new version gets, and
// whether a caller bypasses GOVERNANCE retention. Private to gateway/handlers.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string_view>

#include "common/error.h"
#include "gateway/handlers/acl_request.h"
#include "gateway/handlers/context.h"
#include "metadata/records.h"

namespace strata::gateway {

// Sets a new version's retention and legal hold from the x-amz-object-lock-* fields, or
// the bucket's default retention. kInvalidRequest when the headers ask for a lock in a
// bucket without object lock; kAccessDenied when the caller may not set what they ask
// (s3:PutObjectRetention, s3:PutObjectLegalHold); the header errors of ParseLockHeaders.
Result<void> DescribeLock(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                          metadata::ObjectRecord& record, const AccessFields& fields);

// S3's rule for a request whose body sets a lock (the lock PUTs, a PutObject with
// x-amz-object-lock-* headers): Content-MD5 or a checksum (x-amz-checksum-*, or
// x-amz-sdk-checksum-algorithm for a trailing one), else kInvalidRequest.
Result<void> RequireDigest(const RequestContext& ctx);

// Whether the request carries an x-amz-object-lock-* header.
bool HasLockHeaders(const RequestContext& ctx);

// Whether the request asks to bypass GOVERNANCE retention (x-amz-bypass-governance-retention:
// true) and its caller may (s3:BypassGovernanceRetention on `key` of `bucket`).
bool BypassesGovernance(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                        std::string_view key);

}  // namespace strata::gateway
