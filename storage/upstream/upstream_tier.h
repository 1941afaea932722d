// UpstreamTier: the upstream S3 store (an `s3` tier, storage/upstream/upstream.h) as a
// storage::Tier (private to storage/). A location is "<upstream bucket>/<key>": keys map
// one to one, so the upstream stays a bucket other tools read, and one UpstreamTier
// serves every bucket bound to the store. Requests go through the calling thread's
// S3Client (Upstream::Client on the coroutine's executor), so any I/O thread may use it.
//
// A write is spooled to an unnamed file in `spool_dir` as it is appended (CRC64NVME and
// MD5 computed on the way) and sent at commit with S3Client::PutObject: one PUT carrying
// x-amz-checksum-crc64nvme (the upstream verifies the body against it), or a multipart
// upload above the client's threshold (aborted if it fails). Spooling makes the body
// replayable, so the client's retries and its multipart parts work as they do for the
// write-back push; nothing is sent, so nothing is visible upstream, before the commit,
// and an aborted write only drops its spool file. A single PUT's ETag is checked against
// the MD5 (kCorruption when the upstream stored other bytes).
//
// A reader is pinned to the ETag HEAD saw at open: each ReadAsync is one ranged GET with
// If-Match, so an object replaced upstream meanwhile fails the read (kPreconditionFailed)
// instead of mixing two versions. One request per read: readers should read in large
// blocks (the gateway's 256 KiB).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/tier.h"
#include "storage/upstream/upstream.h"

namespace strata::storage {

class UpstreamTier final : public Tier {
 public:
  // `upstream` and `spool_dir` (an existing directory) outlive the tier.
  UpstreamTier(Upstream& upstream, std::string spool_dir)
      : upstream_(upstream), spool_dir_(std::move(spool_dir)) {}

  const std::string& name() const override { return upstream_.tier_name(); }
  // kNotFound when the key (or its bucket, or the version pinned) does not exist upstream;
  // kPreconditionFailed when options.if_match is not its ETag. One HEAD.
  TierTask<std::unique_ptr<TierReader>> Open(std::string location,
                                             TierOpenOptions options) override;
  // Needs options.location; options.headers go with the PUT (Content-Type, x-amz-meta-*).
  TierTask<std::unique_ptr<TierWrite>> BeginWrite(TierWriteOptions options) override;
  // A DELETE of the key, or of its upstream version `version_id` (without one, in a
  // versioned bucket it makes a delete marker, named in the result). A missing bucket is
  // nothing to remove.
  TierTask<TierRemoved> Remove(std::string location, std::string version_id) override;
  // Drops the calling thread's S3 client (Upstream::ReleaseClient).
  void ReleaseThread() override { upstream_.ReleaseClient(); }
  // Every object of every bucket the credentials list: a full listing.
  TierTask<TierUsage> Usage() override;

  // Copies the whole of `source` (a reader of another tier) to `location` without a
  // spool: the write-back push's path. The client reads the source by offset, again from
  // the start of the body (or of a part) when it retries, so the source's tier must keep
  // the bytes for the call's duration. `crc64nvme`, when known (the index records it), is
  // sent as x-amz-checksum-crc64nvme for the upstream to verify, and the bytes read must
  // match it (kCorruption otherwise, as for an ETag that is not their MD5). A failure of
  // the source fails the PUT: a single PUT is cut short, so the upstream stores nothing;
  // a multipart upload is aborted.
  TierTask<TierObject> PutFrom(std::string location, std::shared_ptr<TierReader> source,
                               std::vector<std::pair<std::string, std::string>> headers,
                               std::optional<std::uint64_t> crc64nvme) override;

  // "<bucket>/<key>" -> (bucket, key); kInvalidArgument when either part is empty.
  static Result<std::pair<std::string, std::string>> SplitLocation(std::string_view location);

 private:
  Upstream& upstream_;
  std::string spool_dir_;
};

}  // namespace strata::storage
