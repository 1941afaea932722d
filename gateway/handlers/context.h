// RequestContext: what one request's handler works with, and the helpers handlers share
// to answer in S3's formats. Private to gateway/.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "auth/request.h"
#include "auth/verifier.h"
#include "common/co_try.h"
#include "common/text.h"
#include "gateway/exchange.h"
#include "gateway/s3_target.h"
#include "gateway/services.h"
#include "gateway/xml_budget.h"

namespace strata::gateway {

struct RequestContext {
  Exchange& exchange;
  Services& services;
  S3Target target;
  auth::RequestView view;
  auth::AuthResult auth;
  // The addressed bucket when it exists, looked up once by Dispatch (which also checks
  // that the caller may use it); handlers read it instead of asking the index again.
  std::optional<metadata::BucketRecord> bucket;

  const RequestHeader& request() const { return exchange.request(); }
  bool is_head() const { return request().method() == http::verb::head; }
  // A request header's value, empty when absent.
  std::string_view Header(std::string_view name) const;
  std::int64_t NowMs() const;
};

// Buckets belong to the user who created them; admin users may use every bucket.
bool MayAccess(const auth::Credential& principal, const metadata::BucketRecord& bucket);

// ctx.bucket, or kNoSuchBucket when the addressed bucket does not exist.
Result<const metadata::BucketRecord*> ExistingBucket(const RequestContext& ctx);

// For writes into a bucket bound to an upstream: kUnavailable (503 SlowDown) while the
// bytes waiting to be written back reach [writeback] dirty_limit, so an upstream outage
// cannot fill the hot tier with data that has no other home.
Result<void> CheckDirtyLimit(const RequestContext& ctx);

// A handler answers its request itself on success; on failure it returns the Error and,
// as long as nothing was sent yet, Dispatch answers with S3's error XML.
using HandlerResult = boost::asio::awaitable<Result<void>>;

// A whole XML request body and the share of the process's XML budget that it and its
// parse tree hold (gateway/xml_budget.h); the share is returned when this is destroyed.
struct XmlBody {
  std::string text;
  std::unique_ptr<XmlLease> lease;

  // Runs `parse` (a function of std::string_view, such as ParseTagging) on the text with
  // pugixml's memory counted against the lease.
  template <class F>
  auto Parse(F&& parse) const {
    return lease->Run([&] { return std::forward<F>(parse)(std::string_view(text)); });
  }
};

// Reads a whole request body that is small by nature (an XML document), verified by the
// request's payload decoder. kMalformedXml when it exceeds `limit` bytes; kUnavailable
// (503 SlowDown) when the process's XML budget cannot hold it now. The body and its parse
// may hold at most kXmlLeaseFactor x `limit` bytes. kXmlReserveFactor x the declared size
// is set aside before the body is read: the text, pugixml's copy of it, and its nodes
// (a CompleteMultipartUpload's 10,000 parts take ~3 MiB of 64-byte nodes).
inline constexpr std::uint64_t kXmlLeaseFactor = 4;
inline constexpr std::uint64_t kXmlReserveFactor = 3;
boost::asio::awaitable<Result<XmlBody>> ReadXmlBody(RequestContext& ctx, std::size_t limit);

// A non-negative integer query parameter capped at `cap`; `fallback` when absent;
// kInvalidArgument when malformed.
Result<std::size_t> CountParam(const RequestContext& ctx, std::string_view name,
                               std::size_t fallback, std::size_t cap);
// Where a delimited listing resumes after the client's `marker` (marker, continuation
// token, key-marker): when the marker rolls up into a CommonPrefix, past every key under
// that prefix (S3 returned the prefix already; "a///" must not come back for "a////b"),
// else the marker itself. Keys are at most 1024 bytes, so 1025 0xff bytes sort last.
std::string ResumeAfter(const std::string& marker, const std::string& prefix,
                        const std::string& delimiter);
// Listings' encoding-type: true for "url", false when absent, kInvalidArgument otherwise.
Result<bool> UrlEncodingParam(const RequestContext& ctx);
// Whether a listing the client did not ask to url-encode must be, because some key,
// prefix or marker on the page holds a character XML 1.0 cannot carry (a control
// character: S3 writes "&#x1;", which no XML parser accepts). The page is then encoded
// whole and says <EncodingType>url</EncodingType>, as if the client had asked.
bool ListingNeedsUrlEncoding(std::initializer_list<std::string_view> texts);
template <class Range, class Project>
bool ListingNeedsUrlEncoding(const Range& items, Project project) {
  for (const auto& item : items) {
    if (ListingNeedsUrlEncoding({project(item)})) {
      return true;
    }
  }
  return false;
}

HandlerResult SendXml(RequestContext& ctx, unsigned status, std::string xml,
                      ResponseHeader header = {});
HandlerResult SendEmpty(RequestContext& ctx, unsigned status, ResponseHeader header = {});
// S3's error document for `error` with extra headers (x-amz-delete-marker, ...); the
// handler returns Ok() after it, since the answer is sent (dispatch.cc).
HandlerResult SendS3Error(RequestContext& ctx, const Error& error, ResponseHeader header);

// The operations. Dispatch runs each through the operation table (gateway/operation_table.h)
// after the prologue its row declares (dirty limit, key length, existing bucket), so a
// handler does not repeat those checks; with kNeedBucket it may use *ctx.bucket.

// Service and bucket operations (handlers/bucket_handlers.cc).
HandlerResult ListBuckets(RequestContext& ctx);
HandlerResult CreateBucket(RequestContext& ctx);
HandlerResult HeadBucket(RequestContext& ctx);
HandlerResult DeleteBucket(RequestContext& ctx);
HandlerResult GetBucketLocation(RequestContext& ctx);
HandlerResult ListObjects(RequestContext& ctx);
HandlerResult DeleteObjects(RequestContext& ctx);  // POST ?delete

// Object operations (handlers/object_handlers.cc).
HandlerResult PutObject(RequestContext& ctx);
HandlerResult GetObject(RequestContext& ctx);  // GET and HEAD
HandlerResult DeleteObject(RequestContext& ctx);

// POST Object, a browser's form upload (handlers/post_object_handlers.cc).
HandlerResult PostObject(RequestContext& ctx);  // POST bucket, multipart/form-data

// Versioning (handlers/version_handlers.cc).
HandlerResult PutBucketVersioning(RequestContext& ctx);  // PUT ?versioning
HandlerResult GetBucketVersioning(RequestContext& ctx);  // GET ?versioning
HandlerResult ListObjectVersions(RequestContext& ctx);   // GET ?versions

// Tagging (handlers/tagging_handlers.cc).
HandlerResult PutObjectTagging(RequestContext& ctx);     // PUT key ?tagging
HandlerResult GetObjectTagging(RequestContext& ctx);     // GET key ?tagging
HandlerResult DeleteObjectTagging(RequestContext& ctx);  // DELETE key ?tagging
HandlerResult PutBucketTagging(RequestContext& ctx);     // PUT bucket ?tagging
HandlerResult GetBucketTagging(RequestContext& ctx);     // GET bucket ?tagging
HandlerResult DeleteBucketTagging(RequestContext& ctx);  // DELETE bucket ?tagging

// Bucket policies (handlers/policy_handlers.cc).
HandlerResult GetBucketPolicy(RequestContext& ctx);        // GET bucket ?policy
HandlerResult PutBucketPolicy(RequestContext& ctx);        // PUT bucket ?policy
HandlerResult DeleteBucketPolicy(RequestContext& ctx);     // DELETE bucket ?policy
HandlerResult GetBucketPolicyStatus(RequestContext& ctx);  // GET bucket ?policyStatus

// Ownership controls and public access blocks (handlers/access_handlers.cc).
// The one way a handler changes a bucket's access settings (policy, CORS, ownership,
// public access block): `change` applied by read-modify-write, then an empty `status`.
HandlerResult ChangeBucketAccess(RequestContext& ctx,
                                 const storage::ObjectStore::AccessChange& change, unsigned status);
HandlerResult GetBucketOwnershipControls(RequestContext& ctx);     // GET ?ownershipControls
HandlerResult PutBucketOwnershipControls(RequestContext& ctx);     // PUT ?ownershipControls
HandlerResult DeleteBucketOwnershipControls(RequestContext& ctx);  // DELETE ?ownershipControls
HandlerResult GetPublicAccessBlock(RequestContext& ctx);           // GET ?publicAccessBlock
HandlerResult PutPublicAccessBlock(RequestContext& ctx);           // PUT ?publicAccessBlock
HandlerResult DeletePublicAccessBlock(RequestContext& ctx);        // DELETE ?publicAccessBlock

// CORS (handlers/cors_handlers.cc).
HandlerResult GetBucketCors(RequestContext& ctx);     // GET bucket ?cors
HandlerResult PutBucketCors(RequestContext& ctx);     // PUT bucket ?cors
HandlerResult DeleteBucketCors(RequestContext& ctx);  // DELETE bucket ?cors
HandlerResult OptionsObject(RequestContext& ctx);     // OPTIONS: a browser's preflight

// ACLs (handlers/acl_handlers.cc).
HandlerResult GetBucketAcl(RequestContext& ctx);  // GET bucket ?acl
HandlerResult PutBucketAcl(RequestContext& ctx);  // PUT bucket ?acl
HandlerResult GetObjectAcl(RequestContext& ctx);  // GET key ?acl
HandlerResult PutObjectAcl(RequestContext& ctx);  // PUT key ?acl

// Object lock (handlers/lock_handlers.cc).
HandlerResult GetObjectLockConfiguration(RequestContext& ctx);  // GET bucket ?object-lock
HandlerResult PutObjectLockConfiguration(RequestContext& ctx);  // PUT bucket ?object-lock
HandlerResult GetObjectRetention(RequestContext& ctx);          // GET key ?retention
HandlerResult PutObjectRetention(RequestContext& ctx);          // PUT key ?retention
HandlerResult GetObjectLegalHold(RequestContext& ctx);          // GET key ?legal-hold
HandlerResult PutObjectLegalHold(RequestContext& ctx);          // PUT key ?legal-hold

// Lifecycle configuration (handlers/lifecycle_handlers.cc).
HandlerResult PutBucketLifecycleConfiguration(RequestContext& ctx);     // PUT bucket ?lifecycle
HandlerResult GetBucketLifecycleConfiguration(RequestContext& ctx);     // GET bucket ?lifecycle
HandlerResult DeleteBucketLifecycleConfiguration(RequestContext& ctx);  // DELETE bucket ?lifecycle

// RestoreObject (handlers/restore_handlers.cc).
HandlerResult RestoreObject(RequestContext& ctx);  // POST key ?restore

// GetObjectAttributes (handlers/attributes_handlers.cc).
HandlerResult GetObjectAttributes(RequestContext& ctx);  // GET key ?attributes

// Copies (handlers/copy_handlers.cc).
HandlerResult CopyObject(RequestContext& ctx);  // PUT with x-amz-copy-source

// Multipart uploads (handlers/multipart_handlers.cc).
HandlerResult CreateMultipartUpload(RequestContext& ctx);    // POST ?uploads
HandlerResult UploadPart(RequestContext& ctx);               // PUT ?partNumber&uploadId
HandlerResult UploadPartCopy(RequestContext& ctx);           // ... with x-amz-copy-source
HandlerResult CompleteMultipartUpload(RequestContext& ctx);  // POST ?uploadId
HandlerResult AbortMultipartUpload(RequestContext& ctx);     // DELETE ?uploadId
HandlerResult ListParts(RequestContext& ctx);                // GET ?uploadId
HandlerResult ListMultipartUploads(RequestContext& ctx);     // GET bucket ?uploads

// The admin API under /_strata/admin/ (handlers/admin_handlers.cc); admin users only.
HandlerResult HandleAdmin(RequestContext& ctx);
inline constexpr std::string_view kWritebackPath = "/_strata/admin/writeback";
inline constexpr std::string_view kFlushPath = "/_strata/admin/flush";
inline constexpr std::string_view kEvictPath = "/_strata/admin/evict";
// GET writeback, POST flush and POST evict (handlers/writeback_admin.cc).
HandlerResult HandleWritebackAdmin(RequestContext& ctx);
inline constexpr std::string_view kPrefetchPath = "/_strata/admin/prefetch";
// Bulk prefetch jobs: start, list, progress, cancel (handlers/prefetch_admin.cc).
HandlerResult HandlePrefetchAdmin(RequestContext& ctx);
inline constexpr std::string_view kScrubPath = "/_strata/admin/scrub";
// GET (status) and POST (start a pass) of the scrubber (handlers/scrub_admin.cc).
HandlerResult HandleScrubAdmin(RequestContext& ctx);
inline constexpr std::string_view kClusterPath = "/_strata/admin/cluster";
// GET: this gateway's view of its cluster, with a ping of each member
// (handlers/cluster_admin.cc).
HandlerResult HandleClusterAdmin(RequestContext& ctx);
// Users and their access keys: list, create, delete, add and remove keys, admin or not
// (handlers/user_admin.cc).
HandlerResult HandleUserAdmin(RequestContext& ctx);
// GET usage: this gateway's, or in a cluster the whole cluster's (handlers/usage_admin.cc).
HandlerResult HandleUsageAdmin(RequestContext& ctx);
// The admin API's JSON answer (strings in it escaped with common/text.h's JsonEscape).
HandlerResult SendJson(RequestContext& ctx, unsigned status, std::string json);

}  // namespace strata::gateway
