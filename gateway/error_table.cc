#include "gateway/error_table.h"

namespace strata::gateway {

S3ErrorInfo LookupS3Error(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInternal:
      return {500, "InternalError"};
    case ErrorCode::kNotImplemented:
      return {501, "NotImplemented"};
    case ErrorCode::kInvalidArgument:
      return {400, "InvalidArgument"};
    case ErrorCode::kInvalidRequest:
      return {400, "InvalidRequest"};
    case ErrorCode::kMalformedXml:
      return {400, "MalformedXML"};
    case ErrorCode::kNotFound:
      return {404, "NotFound"};
    case ErrorCode::kAlreadyExists:
      return {409, "Conflict"};
    case ErrorCode::kPreconditionFailed:
      return {412, "PreconditionFailed"};
    case ErrorCode::kCorruption:
      return {500, "InternalError"};
    case ErrorCode::kNoSpace:
      return {507, "InsufficientStorage"};
    case ErrorCode::kUnavailable:
      return {503, "SlowDown"};
    case ErrorCode::kTimedOut:
      return {503, "ServiceUnavailable"};
    case ErrorCode::kNoSuchBucket:
      return {404, "NoSuchBucket"};
    case ErrorCode::kNoSuchKey:
      return {404, "NoSuchKey"};
    case ErrorCode::kBucketAlreadyExists:
      return {409, "BucketAlreadyExists"};
    case ErrorCode::kBucketAlreadyOwnedByYou:
      return {409, "BucketAlreadyOwnedByYou"};
    case ErrorCode::kBucketNotEmpty:
      return {409, "BucketNotEmpty"};
    case ErrorCode::kInvalidBucketName:
      return {400, "InvalidBucketName"};
    case ErrorCode::kIllegalLocationConstraint:
      return {400, "IllegalLocationConstraintException"};
    case ErrorCode::kKeyTooLong:
      return {400, "KeyTooLongError"};
    case ErrorCode::kMetadataTooLarge:
      return {400, "MetadataTooLarge"};
    case ErrorCode::kEntityTooLarge:
      return {400, "EntityTooLarge"};
    case ErrorCode::kIncompleteBody:
      return {400, "IncompleteBody"};
    case ErrorCode::kMissingContentLength:
      return {411, "MissingContentLength"};
    case ErrorCode::kBadDigest:
      return {400, "BadDigest"};
    case ErrorCode::kInvalidDigest:
      return {400, "InvalidDigest"};
    case ErrorCode::kInvalidRange:
      return {416, "InvalidRange"};
    case ErrorCode::kInvalidStorageClass:
      return {400, "InvalidStorageClass"};
    case ErrorCode::kMethodNotAllowed:
      return {405, "MethodNotAllowed"};
    case ErrorCode::kNoSuchVersion:
      return {404, "NoSuchVersion"};
    case ErrorCode::kInvalidTag:
      return {400, "InvalidTag"};
    case ErrorCode::kTooManyTags:
      return {400, "BadRequest"};
    case ErrorCode::kNoSuchTagSet:
      return {404, "NoSuchTagSet"};
    case ErrorCode::kNoSuchLifecycleConfiguration:
      return {404, "NoSuchLifecycleConfiguration"};
    case ErrorCode::kInvalidObjectState:
      return {403, "InvalidObjectState"};
    case ErrorCode::kRestoreAlreadyInProgress:
      return {409, "RestoreAlreadyInProgress"};
    case ErrorCode::kNoSuchUpload:
      return {404, "NoSuchUpload"};
    case ErrorCode::kInvalidPart:
      return {400, "InvalidPart"};
    case ErrorCode::kInvalidPartOrder:
      return {400, "InvalidPartOrder"};
    case ErrorCode::kEntityTooSmall:
      return {400, "EntityTooSmall"};
    case ErrorCode::kInvalidPartNumber:
      return {416, "InvalidPartNumber"};
    case ErrorCode::kRequestTimeout:
      return {400, "RequestTimeout"};
    case ErrorCode::kRequestHeaderSectionTooLarge:
      return {400, "RequestHeaderSectionTooLarge"};
    case ErrorCode::kAccessDenied:
      return {403, "AccessDenied"};
    case ErrorCode::kSignatureDoesNotMatch:
      return {403, "SignatureDoesNotMatch"};
    case ErrorCode::kInvalidAccessKeyId:
      return {403, "InvalidAccessKeyId"};
    case ErrorCode::kAuthorizationHeaderMalformed:
      return {400, "AuthorizationHeaderMalformed"};
    case ErrorCode::kAuthorizationQueryParametersError:
      return {400, "AuthorizationQueryParametersError"};
    case ErrorCode::kRequestTimeTooSkewed:
      return {403, "RequestTimeTooSkewed"};
    case ErrorCode::kXAmzContentSha256Mismatch:
      return {400, "XAmzContentSHA256Mismatch"};
    case ErrorCode::kExpiredPresignedRequest:
      return {403, "AccessDenied"};
    case ErrorCode::kMissingSecurityHeader:
      return {400, "MissingSecurityHeader"};
    case ErrorCode::kInvalidChunkSize:
      return {400, "InvalidChunkSizeError"};
    case ErrorCode::kMalformedPolicy:
      return {400, "MalformedPolicy"};
    case ErrorCode::kNoSuchBucketPolicy:
      return {404, "NoSuchBucketPolicy"};
    case ErrorCode::kMalformedAcl:
      return {400, "MalformedACLError"};
    case ErrorCode::kAccessControlListNotSupported:
      return {400, "AccessControlListNotSupported"};
    case ErrorCode::kInvalidBucketAclWithObjectOwnership:
      return {400, "InvalidBucketAclWithObjectOwnership"};
    case ErrorCode::kUnresolvableGrantByEmailAddress:
      return {400, "UnresolvableGrantByEmailAddress"};
    case ErrorCode::kOwnershipControlsNotFound:
      return {404, "OwnershipControlsNotFoundError"};
    case ErrorCode::kNoSuchPublicAccessBlockConfiguration:
      return {404, "NoSuchPublicAccessBlockConfiguration"};
    case ErrorCode::kNoSuchCorsConfiguration:
      return {404, "NoSuchCORSConfiguration"};
    case ErrorCode::kCorsNotAllowed:
      return {403, "AccessForbidden"};
    case ErrorCode::kObjectLockConfigurationNotFound:
      return {404, "ObjectLockConfigurationNotFoundError"};
    case ErrorCode::kNoSuchObjectLockConfiguration:
      return {404, "NoSuchObjectLockConfiguration"};
    case ErrorCode::kInvalidBucketState:
      return {409, "InvalidBucketState"};
    case ErrorCode::kInvalidPolicyDocument:
      return {400, "InvalidPolicyDocument"};
    case ErrorCode::kIncorrectNumberOfFilesInPostRequest:
      return {400, "IncorrectNumberOfFilesInPostRequest"};
    case ErrorCode::kMaxPostPreDataLengthExceeded:
      return {400, "MaxPostPreDataLengthExceededError"};
    case ErrorCode::kBadRequest:
      return {400, "BadRequest"};
  }
  return {500, "InternalError"};
}

}  // namespace strata::gateway
