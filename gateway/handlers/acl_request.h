// What a request asks of ACLs (issue 20): the ACL its headers set (x-amz-acl or the
// x-amz-grant-* headers), who is a canonical id, and whether the bucket lets that ACL
// be set. Private to gateway/handlers.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gateway/acl.h"
#include "gateway/handlers/context.h"
#include "metadata/records.h"

namespace strata::gateway {

// A write's access settings by their header names (x-amz-acl, x-amz-grant-*,
// x-amz-object-lock-*): the request's own headers, or a POST form's fields. Empty when
// absent.
using AccessFields = std::function<std::string_view(std::string_view header_name)>;

// The request's headers as AccessFields.
AccessFields RequestHeaders(const RequestContext& ctx);

struct RequestedAcl {
  metadata::Acl acl;
  std::string canned;  // x-amz-acl's name; empty for grant headers
};

// Whether the request carries x-amz-acl or an x-amz-grant-* header.
bool HasAclHeaders(const RequestContext& ctx);

// The resolver of canonical ids over strata's users (the configuration's and those the
// admin API made), read now: call only when an ACL names users.
boost::asio::awaitable<Result<CanonicalIdResolver>> UserResolver(RequestContext& ctx);

// The ACL `fields` set on a resource owned by `owner` in a bucket owned by
// `bucket_owner`; nullopt when they set none. kInvalidRequest for both x-amz-acl and grant
// headers; the parse errors of CannedAcl and GrantHeadersAcl (gateway/acl.h).
boost::asio::awaitable<Result<std::optional<RequestedAcl>>> AclFromHeaders(
    RequestContext& ctx, std::string_view owner, std::string_view bucket_owner,
    const AccessFields& fields);

// Ok, or why `bucket` refuses `acl` on itself or an object in it: kAccessControlListNotSupported
// when ACLs are off (BucketOwnerEnforced) and `acl` grants anyone but the bucket owner;
// kAccessDenied when its public access block blocks public ACLs and `acl` is public.
Result<void> CheckAclAllowed(const metadata::BucketRecord& bucket, const metadata::Acl& acl);

// The owner of a version `ctx`'s caller writes into `bucket` with the canned ACL `canned`:
// the bucket's owner when ACLs are off, under BucketOwnerPreferred with
// bucket-owner-full-control, or for an anonymous writer; else the writer.
std::string NewVersionOwner(const RequestContext& ctx, const metadata::BucketRecord& bucket,
                            std::string_view canned);

// Sets a new version's owner and ACL from `fields` and the bucket's settings (its
// private ACL when the fields name none).
boost::asio::awaitable<Result<void>> DescribeAcl(RequestContext& ctx,
                                                 const metadata::BucketRecord& bucket,
                                                 metadata::ObjectRecord& record,
                                                 const AccessFields& fields);

// A new version's owner, ACL (DescribeAcl) and lock (DescribeLock, handlers/lock_request.h)
// for a write into ctx.bucket, from `fields` (the request's headers unless given); nothing
// when the bucket does not exist (the write itself answers NoSuchBucket).
boost::asio::awaitable<Result<void>> DescribeAccess(RequestContext& ctx,
                                                    metadata::ObjectRecord& record,
                                                    const AccessFields& fields);
boost::asio::awaitable<Result<void>> DescribeAccess(RequestContext& ctx,
                                                    metadata::ObjectRecord& record);

}  // namespace strata::gateway
