// The source of CopyObject and UploadPartCopy (private to gateway/): the
// x-amz-copy-source header, access to the source bucket, the x-amz-copy-source-if-*
// preconditions and x-amz-copy-source-range.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/bucket_access.h"
#include "gateway/handlers/context.h"
#include "metadata/records.h"

namespace strata::gateway {

struct CopySourceName {
  std::string bucket;
  std::string key;
  std::string version_id;  // empty when absent
};

// "bucket/key" or "/bucket/key", percent-encoded, optionally "?versionId=...".
// kInvalidArgument when it does not name a bucket and a key.
Result<CopySourceName> ParseCopySource(std::string_view header);

// What reading the source asks of its bucket's policy: s3:GetObject, or
// s3:GetObjectVersion for a version named by id. Views into `name`.
AccessRequest CopySourceAccess(const CopySourceName& name);

// The checks of a source version found (here or on its owner): a delete marker is
// kNoSuchKey (current) or kInvalidRequest (named by id); a failed x-amz-copy-source-if-*
// condition kPreconditionFailed.
Result<void> CheckCopySourceVersion(const RequestContext& ctx, const CopySourceName& name,
                                    const metadata::ObjectRecord& source);

// The source's current record, after checking that the caller may read its bucket
// (kNoSuchBucket, kAccessDenied), that it exists (kNoSuchKey) and that the
// x-amz-copy-source-if-* conditions hold (kPreconditionFailed).
Result<metadata::ObjectRecord> ReadCopySource(const RequestContext& ctx);

// ReadCopySource, with a source whose bytes are not local fetched first: in a bucket
// bound to an upstream, a clean version whose local copy was evicted, or a key (or a
// whole bucket) only the upstream has, is read through onto the hot tier, so the copy
// shares local bytes as any other.
boost::asio::awaitable<Result<metadata::ObjectRecord>> ResolveCopySource(RequestContext& ctx);

// x-amz-copy-source-range "bytes=first-last" within an object of `size` bytes: [first,
// last] inclusive. kInvalidArgument when malformed or outside the object.
struct CopyRange {
  std::uint64_t first = 0;
  std::uint64_t length = 0;
};
Result<CopyRange> ParseCopySourceRange(std::string_view header, std::uint64_t size);

}  // namespace strata::gateway
