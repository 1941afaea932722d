// The operation table: for every S3Operation, the handler Dispatch runs, the name metrics
// label it with, the IAM action S3 authorizes it by, and the checks Dispatch runs before
// the handler. With Classify (operation.h) it is the whole of routing. Immutable, so any
// thread may read it.
#pragma once

#include <cstdint>
#include <string_view>

#include "gateway/handlers/context.h"
#include "gateway/operation.h"

namespace strata::gateway {

// Checks Dispatch runs before an operation's handler, always in this order (so which
// error wins is fixed: e.g. a too long key before a missing bucket). The handler may
// then rely on what they established.
enum PrologueStep : std::uint8_t {
  kCheckDirtyLimit = 1 << 0,  // CheckDirtyLimit: 503 SlowDown while the backlog is full
  kCheckKeyLength = 1 << 1,   // CheckKeyLength: KeyTooLong past 1024 bytes
  kNeedBucket = 1 << 2,       // ExistingBucket: NoSuchBucket; ctx.bucket is set after it
};

struct OperationEntry {
  S3Operation op;
  // OperationName: S3's name of the operation ("GetObject"), or the fallback's label.
  std::string_view name;
  // The policy action S3 checks for it, as AWS spells it ("s3:GetObject"; HeadObject and
  // GetObject are both s3:GetObject, CopyObject and UploadPart s3:PutObject on the
  // destination). Empty for what is not an S3 operation.
  std::string_view iam_action;
  // Null for the method fallbacks (Dispatch answers their Refusal), kMalformed and
  // kGetMetrics (the session answers those before Dispatch).
  HandlerResult (*handler)(RequestContext&);
  // PrologueStep bits.
  std::uint8_t prologue;
};

// The entry of `op`; entries are indexed by the enum's value.
const OperationEntry& LookupOperation(S3Operation op);

// Runs the PrologueStep checks `entry` declares, in PrologueStep order: the first failure.
Result<void> RunPrologue(const RequestContext& ctx, const OperationEntry& entry);

}  // namespace strata::gateway
