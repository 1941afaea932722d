#include "gateway/operation_table.h"

#include <array>
#include <cstddef>

#include "gateway/handlers/object_io.h"

namespace strata::gateway {
namespace {

// One row per S3Operation, in the enum's order. The IAM actions are those of S3's
// "Required permissions for Amazon S3 API operations" (the Service Authorization
// Reference): the List operations are s3:ListBucket*, the multipart ones but Abort and
// ListParts s3:PutObject, the Delete...Tagging/Lifecycle of a bucket its Put action.
constexpr std::array<OperationEntry, kS3OperationCount> kOperations = {{
    {S3Operation::kMethodGet, "GET", "", nullptr, 0},
    {S3Operation::kMethodPut, "PUT", "", nullptr, 0},
    {S3Operation::kMethodHead, "HEAD", "", nullptr, 0},
    {S3Operation::kMethodDelete, "DELETE", "", nullptr, 0},
    {S3Operation::kMethodPost, "POST", "", nullptr, 0},
    {S3Operation::kMethodOther, "OTHER", "", nullptr, 0},
    {S3Operation::kMalformed, "Malformed", "", nullptr, 0},
    {S3Operation::kAdmin, "Admin", "", &HandleAdmin, 0},
    {S3Operation::kGetMetrics, "GetMetrics", "", nullptr, 0},
    {S3Operation::kListBuckets, "ListBuckets", "s3:ListAllMyBuckets", &ListBuckets, 0},
    {S3Operation::kCreateBucket, "CreateBucket", "s3:CreateBucket", &CreateBucket, 0},
    {S3Operation::kHeadBucket, "HeadBucket", "s3:ListBucket", &HeadBucket, kNeedBucket},
    {S3Operation::kDeleteBucket, "DeleteBucket", "s3:DeleteBucket", &DeleteBucket, 0},
    {S3Operation::kGetBucketLocation, "GetBucketLocation", "s3:GetBucketLocation",
     &GetBucketLocation, kNeedBucket},
    {S3Operation::kListObjects, "ListObjects", "s3:ListBucket", &ListObjects, 0},
    {S3Operation::kListObjectsV2, "ListObjectsV2", "s3:ListBucket", &ListObjects, 0},
    {S3Operation::kListObjectVersions, "ListObjectVersions", "s3:ListBucketVersions",
     &ListObjectVersions, 0},
    {S3Operation::kListMultipartUploads, "ListMultipartUploads", "s3:ListBucketMultipartUploads",
     &ListMultipartUploads, 0},
    {S3Operation::kGetBucketVersioning, "GetBucketVersioning", "s3:GetBucketVersioning",
     &GetBucketVersioning, kNeedBucket},
    {S3Operation::kPutBucketVersioning, "PutBucketVersioning", "s3:PutBucketVersioning",
     &PutBucketVersioning, 0},
    {S3Operation::kGetBucketTagging, "GetBucketTagging", "s3:GetBucketTagging", &GetBucketTagging,
     kNeedBucket},
    {S3Operation::kPutBucketTagging, "PutBucketTagging", "s3:PutBucketTagging", &PutBucketTagging,
     0},
    {S3Operation::kDeleteBucketTagging, "DeleteBucketTagging", "s3:PutBucketTagging",
     &DeleteBucketTagging, kNeedBucket},
    {S3Operation::kGetBucketLifecycleConfiguration, "GetBucketLifecycleConfiguration",
     "s3:GetLifecycleConfiguration", &GetBucketLifecycleConfiguration, kNeedBucket},
    {S3Operation::kPutBucketLifecycleConfiguration, "PutBucketLifecycleConfiguration",
     "s3:PutLifecycleConfiguration", &PutBucketLifecycleConfiguration, kNeedBucket},
    {S3Operation::kDeleteBucketLifecycleConfiguration, "DeleteBucketLifecycleConfiguration",
     "s3:PutLifecycleConfiguration", &DeleteBucketLifecycleConfiguration, kNeedBucket},
    {S3Operation::kGetBucketPolicy, "GetBucketPolicy", "s3:GetBucketPolicy", &GetBucketPolicy,
     kNeedBucket},
    {S3Operation::kPutBucketPolicy, "PutBucketPolicy", "s3:PutBucketPolicy", &PutBucketPolicy,
     kNeedBucket},
    {S3Operation::kDeleteBucketPolicy, "DeleteBucketPolicy", "s3:DeleteBucketPolicy",
     &DeleteBucketPolicy, kNeedBucket},
    {S3Operation::kGetBucketPolicyStatus, "GetBucketPolicyStatus", "s3:GetBucketPolicyStatus",
     &GetBucketPolicyStatus, kNeedBucket},
    {S3Operation::kGetBucketOwnershipControls, "GetBucketOwnershipControls",
     "s3:GetBucketOwnershipControls", &GetBucketOwnershipControls, kNeedBucket},
    {S3Operation::kPutBucketOwnershipControls, "PutBucketOwnershipControls",
     "s3:PutBucketOwnershipControls", &PutBucketOwnershipControls, kNeedBucket},
    {S3Operation::kDeleteBucketOwnershipControls, "DeleteBucketOwnershipControls",
     "s3:PutBucketOwnershipControls", &DeleteBucketOwnershipControls, kNeedBucket},
    {S3Operation::kGetPublicAccessBlock, "GetPublicAccessBlock", "s3:GetBucketPublicAccessBlock",
     &GetPublicAccessBlock, kNeedBucket},
    {S3Operation::kPutPublicAccessBlock, "PutPublicAccessBlock", "s3:PutBucketPublicAccessBlock",
     &PutPublicAccessBlock, kNeedBucket},
    {S3Operation::kDeletePublicAccessBlock, "DeletePublicAccessBlock",
     "s3:PutBucketPublicAccessBlock", &DeletePublicAccessBlock, kNeedBucket},
    {S3Operation::kGetBucketCors, "GetBucketCors", "s3:GetBucketCORS", &GetBucketCors, kNeedBucket},
    {S3Operation::kPutBucketCors, "PutBucketCors", "s3:PutBucketCORS", &PutBucketCors, kNeedBucket},
    {S3Operation::kDeleteBucketCors, "DeleteBucketCors", "s3:PutBucketCORS", &DeleteBucketCors,
     kNeedBucket},
    // Answered from the bucket's CORS rules alone: no permission is asked for.
    {S3Operation::kOptionsObject, "OptionsObject", "", &OptionsObject, kNeedBucket},
    {S3Operation::kGetBucketAcl, "GetBucketAcl", "s3:GetBucketAcl", &GetBucketAcl, kNeedBucket},
    {S3Operation::kPutBucketAcl, "PutBucketAcl", "s3:PutBucketAcl", &PutBucketAcl, kNeedBucket},
    {S3Operation::kGetObjectLockConfiguration, "GetObjectLockConfiguration",
     "s3:GetBucketObjectLockConfiguration", &GetObjectLockConfiguration, kNeedBucket},
    {S3Operation::kPutObjectLockConfiguration, "PutObjectLockConfiguration",
     "s3:PutBucketObjectLockConfiguration", &PutObjectLockConfiguration, kNeedBucket},
    {S3Operation::kDeleteObjects, "DeleteObjects", "s3:DeleteObject", &DeleteObjects, 0},
    {S3Operation::kPutObject, "PutObject", "s3:PutObject", &PutObject,
     kCheckDirtyLimit | kCheckKeyLength},
    // Authorized by its handler, as the form's signer: the request itself is unsigned.
    {S3Operation::kPostObject, "PostObject", "s3:PutObject", &PostObject,
     kCheckDirtyLimit | kNeedBucket},
    {S3Operation::kCopyObject, "CopyObject", "s3:PutObject", &CopyObject,
     kCheckDirtyLimit | kCheckKeyLength | kNeedBucket},
    {S3Operation::kGetObject, "GetObject", "s3:GetObject", &GetObject, 0},
    {S3Operation::kHeadObject, "HeadObject", "s3:GetObject", &GetObject, 0},
    {S3Operation::kDeleteObject, "DeleteObject", "s3:DeleteObject", &DeleteObject,
     kCheckKeyLength | kNeedBucket},
    {S3Operation::kGetObjectAttributes, "GetObjectAttributes", "s3:GetObjectAttributes",
     &GetObjectAttributes, kCheckKeyLength},
    {S3Operation::kRestoreObject, "RestoreObject", "s3:RestoreObject", &RestoreObject, kNeedBucket},
    {S3Operation::kGetObjectTagging, "GetObjectTagging", "s3:GetObjectTagging", &GetObjectTagging,
     kCheckKeyLength | kNeedBucket},
    {S3Operation::kPutObjectTagging, "PutObjectTagging", "s3:PutObjectTagging", &PutObjectTagging,
     kCheckKeyLength},
    {S3Operation::kDeleteObjectTagging, "DeleteObjectTagging", "s3:DeleteObjectTagging",
     &DeleteObjectTagging, kCheckKeyLength},
    {S3Operation::kGetObjectAcl, "GetObjectAcl", "s3:GetObjectAcl", &GetObjectAcl,
     kCheckKeyLength | kNeedBucket},
    {S3Operation::kPutObjectAcl, "PutObjectAcl", "s3:PutObjectAcl", &PutObjectAcl,
     kCheckKeyLength | kNeedBucket},
    {S3Operation::kGetObjectRetention, "GetObjectRetention", "s3:GetObjectRetention",
     &GetObjectRetention, kCheckKeyLength | kNeedBucket},
    {S3Operation::kPutObjectRetention, "PutObjectRetention", "s3:PutObjectRetention",
     &PutObjectRetention, kCheckKeyLength | kNeedBucket},
    {S3Operation::kGetObjectLegalHold, "GetObjectLegalHold", "s3:GetObjectLegalHold",
     &GetObjectLegalHold, kCheckKeyLength | kNeedBucket},
    {S3Operation::kPutObjectLegalHold, "PutObjectLegalHold", "s3:PutObjectLegalHold",
     &PutObjectLegalHold, kCheckKeyLength | kNeedBucket},
    {S3Operation::kCreateMultipartUpload, "CreateMultipartUpload", "s3:PutObject",
     &CreateMultipartUpload, kCheckDirtyLimit | kCheckKeyLength | kNeedBucket},
    {S3Operation::kUploadPart, "UploadPart", "s3:PutObject", &UploadPart, kCheckDirtyLimit},
    {S3Operation::kUploadPartCopy, "UploadPartCopy", "s3:PutObject", &UploadPartCopy, 0},
    {S3Operation::kCompleteMultipartUpload, "CompleteMultipartUpload", "s3:PutObject",
     &CompleteMultipartUpload, 0},
    {S3Operation::kAbortMultipartUpload, "AbortMultipartUpload", "s3:AbortMultipartUpload",
     &AbortMultipartUpload, kNeedBucket},
    {S3Operation::kListParts, "ListParts", "s3:ListMultipartUploadParts", &ListParts, 0},
}};

constexpr bool InEnumOrder() {
  for (std::size_t i = 0; i < kOperations.size(); ++i) {
    if (kOperations[i].op != static_cast<S3Operation>(i)) {
      return false;
    }
  }
  return true;
}
static_assert(InEnumOrder(), "kOperations must list every S3Operation in the enum's order");

}  // namespace

const OperationEntry& LookupOperation(S3Operation op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kOperations.size() ? kOperations[i]
                                : kOperations[static_cast<std::size_t>(S3Operation::kMethodOther)];
}

std::string_view OperationName(S3Operation op) { return LookupOperation(op).name; }

Result<void> RunPrologue(const RequestContext& ctx, const OperationEntry& entry) {
  if ((entry.prologue & kCheckDirtyLimit) != 0) {
    STRATA_RETURN_IF_ERROR(CheckDirtyLimit(ctx));
  }
  if ((entry.prologue & kCheckKeyLength) != 0) {
    STRATA_RETURN_IF_ERROR(CheckKeyLength(ctx));
  }
  if ((entry.prologue & kNeedBucket) != 0) {
    STRATA_RETURN_IF_ERROR(ExistingBucket(ctx));
  }
  return Ok();
}

}  // namespace strata::gateway
