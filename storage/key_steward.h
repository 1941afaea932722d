// KeySteward: which gateway's background workers act on a key, and how what they change
// reaches the key's other copies. In a cluster (storage/replication.h) every owner of a
// key holds its records, its write-back item and its lifecycle due row, but only the
// key's primary pushes it upstream or applies its lifecycle rules: two owners pushing one
// key could leave the upstream with an older state, and two owners expiring one version
// would each make a delete marker of its own. Once the primary's worker changed the key
// (marked it clean, expired or moved a version), the change is synced to the other
// owners, so the one that becomes primary after a failure neither pushes again what went
// up nor misses what did not. Without a cluster there is no steward: every key is this
// gateway's.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "common/error.h"
#include "common/ids.h"

namespace strata::storage {

class KeySteward {
 public:
  virtual ~KeySteward() = default;

  // Whether this gateway is the key's primary now (the key's serving owners: a member that
  // is joining or catching up acts on none). Any thread; cheap (a hash over the members).
  virtual bool ActsOn(const BucketName& bucket, const ObjectKey& key) const = 0;

  // After this gateway's worker changed the key as its primary: returns once the other
  // owners hold it as it is here now (Replication::SyncKey). Awaited from any executor.
  virtual boost::asio::awaitable<Result<void>> Changed(const BucketName& bucket,
                                                       const ObjectKey& key) = 0;
  // Changed(), from a thread that is no executor's (the lifecycle worker's): blocks it.
  virtual Result<void> ChangedBlocking(const BucketName& bucket, const ObjectKey& key) = 0;
};

}  // namespace strata::storage
