// Listings in a cluster: each member holds the records of the keys it owns (their primary;
// gateway/forward.h), so one page of a bucket's listing asks every member of the current
// view for its page from the same marker (this gateway's own index without a call, the
// others over the peer port, op kPeerOpListing) and merges them in key order. A key is
// owned by one member, so no key comes from two. A member that cannot be reached fails
// the listing (503 SlowDown, retried by SDKs) rather than leave its keys out.
//
// The handlers' walks (delimiters, common prefixes, max-keys, markers) are unchanged: they
// call these instead of their index in a cluster.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <string>

#include "common/error.h"
#include "gateway/services.h"
#include "metadata/object_index.h"
#include "storage/peer_transport.h"

namespace strata::gateway {

// As ObjectIndex::ListObjects over the whole cluster.
boost::asio::awaitable<Result<metadata::ListObjectsPage>> ListObjectsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& start_after, std::size_t max_keys);

// As ObjectIndex::ListVersions over the whole cluster.
boost::asio::awaitable<Result<metadata::ListVersionsPage>> ListVersionsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& key_marker, const std::string& version_marker, std::size_t max_versions);

// As ObjectStore::ListUploads over the whole cluster.
boost::asio::awaitable<Result<metadata::ListUploadsPage>> ListUploadsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& key_marker, const std::string& upload_id_marker, std::size_t max_uploads);

// Blocking (never on the cluster's thread): ok when no member holds a version or delete
// marker in `bucket`, else kBucketNotEmpty. DeleteBucket's check in a cluster
// (storage/shared_catalog.h's SetEmptinessCheck).
Result<void> CheckBucketEmptyInCluster(Services& services, const std::string& bucket);

// The member's side: one kPeerOpListing call, answered from this gateway's index.
storage::PeerTask<void> ServeListing(storage::PeerIncomingCall& call, Services& services);

}  // namespace strata::gateway
