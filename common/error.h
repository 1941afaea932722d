// Error and Result: how every module reports failure.
//
// The codes are the domain's failures. Many are S3's own (S3 is the domain), so the
// gateway's one table (gateway/error_table.cc) can map each to an HTTP status and an
// S3 <Code> without guessing. Modules below gateway never mention HTTP.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace strata {

enum class ErrorCode {
  kInternal,
  kNotImplemented,
  kInvalidArgument,  // a request parameter or header is malformed
  kInvalidRequest,   // the combination of parameters makes no sense
  kMalformedXml,
  kNotFound,       // generic: a thing the caller named does not exist
  kAlreadyExists,  // generic
  kPreconditionFailed,
  kCorruption,  // stored bytes or index records fail verification
  kNoSpace,
  kUnavailable,  // retry may help: overloaded, upstream down
  kTimedOut,
  // Buckets and objects.
  kNoSuchBucket,
  kNoSuchKey,
  kNoSuchVersion,
  kBucketAlreadyExists,  // someone else owns it
  kBucketAlreadyOwnedByYou,
  kBucketNotEmpty,
  kInvalidBucketName,
  kIllegalLocationConstraint,  // LocationConstraint names another region
  kKeyTooLong,
  kMetadataTooLarge,
  kEntityTooLarge,
  kIncompleteBody,  // fewer body bytes than declared
  kMissingContentLength,
  kBadDigest,      // Content-MD5 or x-amz-checksum-* mismatch
  kInvalidDigest,  // Content-MD5 or checksum header not well formed
  kInvalidRange,
  kInvalidStorageClass,
  kMethodNotAllowed,
  kRequestTimeout,
  // Tagging.
  kInvalidTag,                    // a tag key or value breaks S3's rules, or a key repeats
  kTooManyTags,                   // more tags than S3 allows (S3 answers 400 BadRequest)
  kNoSuchTagSet,                  // GetBucketTagging of a bucket without tags
  kNoSuchLifecycleConfiguration,  // GetBucketLifecycleConfiguration of a bucket without rules
  // Restore.
  kInvalidObjectState,  // RestoreObject of a class that needs none; GET of an unrestored one
  kRestoreAlreadyInProgress,
  // Multipart uploads.
  kNoSuchUpload,
  kInvalidPart,        // a named part is missing or its ETag/checksum differs
  kInvalidPartOrder,   // part numbers not ascending
  kEntityTooSmall,     // a part other than the last is below 5 MiB
  kInvalidPartNumber,  // GET ?partNumber beyond the object's parts
  kRequestHeaderSectionTooLarge,
  // Authentication and authorization.
  kAccessDenied,
  kSignatureDoesNotMatch,
  kInvalidAccessKeyId,
  kAuthorizationHeaderMalformed,
  kAuthorizationQueryParametersError,
  kRequestTimeTooSkewed,
  kXAmzContentSha256Mismatch,
  kExpiredPresignedRequest,  // S3 answers AccessDenied "Request has expired"
  kMissingSecurityHeader,
  kInvalidChunkSize,  // aws-chunked framing violated
  kMalformedPolicy,   // a bucket policy S3 would refuse (auth/policy.h)
  // Access control (issue 20): policies, ACLs, ownership, public access, CORS, POST, lock.
  kNoSuchBucketPolicy,
  kMalformedAcl,                         // S3's MalformedACLError
  kAccessControlListNotSupported,        // an ACL on a BucketOwnerEnforced bucket
  kInvalidBucketAclWithObjectOwnership,  // a bucket ACL at CreateBucket with the enforced mode
  kUnresolvableGrantByEmailAddress,      // an email grantee: strata has no email addresses
  kOwnershipControlsNotFound,            // S3's OwnershipControlsNotFoundError
  kNoSuchPublicAccessBlockConfiguration,
  kNoSuchCorsConfiguration,
  kCorsNotAllowed,  // a CORS request no rule allows (S3: 403 AccessForbidden, "CORSResponse")
  kObjectLockConfigurationNotFound,  // S3's ObjectLockConfigurationNotFoundError
  kNoSuchObjectLockConfiguration,    // a version without retention or legal hold
  kInvalidBucketState,               // e.g. suspending versioning of an object-lock bucket
  kInvalidPolicyDocument,            // a POST form's policy document
  kIncorrectNumberOfFilesInPostRequest,
  kMaxPostPreDataLengthExceeded,  // S3's MaxPostPreDataLengthExceededError
  kBadRequest,                    // S3's generic 400 BadRequest (a preflight without Origin)
};
// The highest code: what a peer may send (storage/peer/wire.cc). New codes go before it.
inline constexpr ErrorCode kLastErrorCode = ErrorCode::kBadRequest;

// A failure: what went wrong (code), for whom (message, safe to show the client:
// never a secret), and whether the same call may succeed if retried.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  bool retryable = false;
  // What S3's error document says besides Code and Message, as (element, text) in order:
  // ("HeadersNotSigned", "x-amz-meta-a"), ("Region", "us-east-1"). Clients act on some of
  // them (s3cmd re-signs for <Region>), so they are data, not prose in the message.
  std::vector<std::pair<std::string, std::string>> details;

  Error() = default;
  Error(ErrorCode c, std::string msg, bool retry = false)
      : code(c), message(std::move(msg)), retryable(retry) {}

  Error&& WithDetail(std::string element, std::string text) && {
    details.emplace_back(std::move(element), std::move(text));
    return std::move(*this);
  }
};

// A value or an Error. No exceptions on the request path: functions that can fail
// return Result and the caller must look at it.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

inline Result<void> Ok() { return {}; }

}  // namespace strata

// Early return of a failed Result from a function returning any Result<U>.
#define STRATA_RETURN_IF_ERROR(expr)            \
  do {                                          \
    auto strata_status_ = (expr);               \
    if (!strata_status_.ok()) {                 \
      return std::move(strata_status_).error(); \
    }                                           \
  } while (0)
