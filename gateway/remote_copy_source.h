// A copy whose source another member of the cluster owns (CopyObject and UploadPartCopy
// across owners). The copy is served by the destination key's primary (gateway/forward.h),
// which reads the source from the source key's primary over the peer transport
// (kPeerOpReadVersion, gateway/copy_source_wire.h): first its record, checked here as a
// local source is (access to its bucket, delete markers, the x-amz-copy-source-if-*
// conditions), then the bytes copied, streamed in bounded chunks into a new write on this
// gateway, with the version pinned by its id and ETag so a source overwritten in between
// fails (412) rather than mixing two versions. Reads are the source primary's, so they are
// as strongly consistent as a GET through any gateway.
//
// Threads: the client side on the request's I/O thread (each peer step hops to the
// cluster's executor); ServeReadVersion on the cluster's executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "gateway/services.h"
#include "metadata/records.h"
#include "storage/checksum.h"
#include "storage/cluster.h"
#include "storage/object_store.h"

namespace strata::gateway {

struct RequestContext;

// The primary of the copy source's key when that is another member; nullopt when it is
// this gateway, without a cluster, or when the header does not parse (the local path
// answers that as S3 does).
std::optional<storage::KeyOwner> RemoteSourceOwner(const RequestContext& ctx);

// The source's record as its owner holds it now (bucket and key set), checked as
// ReadCopySource checks a local one.
boost::asio::awaitable<Result<metadata::ObjectRecord>> ReadRemoteSource(
    RequestContext& ctx, const storage::KeyOwner& owner);

// Bytes [first, first + length) of `source` (as ReadRemoteSource returned it) from its
// owner, appended to `write`. kPreconditionFailed when the source changed since.
boost::asio::awaitable<Result<void>> CopyRemoteBytes(RequestContext& ctx,
                                                     const storage::KeyOwner& owner,
                                                     const metadata::ObjectRecord& source,
                                                     std::uint64_t first, std::uint64_t length,
                                                     storage::PendingWrite& write);

// The checksum algorithms `source` carries, which a copy of its bytes computes again.
std::vector<storage::ChecksumAlgorithm> ChecksumAlgorithmsOf(const metadata::ObjectRecord& source);

// The source owner's side of one kPeerOpReadVersion call.
storage::PeerTask<void> ServeReadVersion(storage::PeerIncomingCall& call, Services& services);

}  // namespace strata::gateway
