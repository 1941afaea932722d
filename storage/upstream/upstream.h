// Upstream: the `s3` tier strata runs in front of: its name in the config, how to reach
// it, and an S3Client for each I/O thread that talks to it (an S3Client belongs to one
// executor, and the request path must not share one across cores).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/config.h"
#include "common/error.h"
#include "storage/upstream/s3_client.h"

namespace strata::storage {

class Upstream {
 public:
  // kInvalidArgument when the tier's endpoint does not parse.
  static Result<std::unique_ptr<Upstream>> Create(const TierConfig& tier);

  const std::string& tier_name() const { return tier_name_; }
  const upstream::Endpoint& endpoint() const { return endpoint_; }
  std::chrono::milliseconds revalidate_after() const { return revalidate_after_; }

  // The calling thread's client, made on first use on `executor` (the thread's own
  // io_context). Thread-safe; after the first call a thread finds its client without
  // locking.
  upstream::S3Client& Client(const boost::asio::any_io_executor& executor);
  // A client of its own for a background worker on `executor`.
  std::unique_ptr<upstream::S3Client> NewClient(const boost::asio::any_io_executor& executor) const;
  // Drops the calling thread's client, on that thread, before its io_context goes (a
  // worker with a thread of its own: Tier::ReleaseThread).
  void ReleaseClient();
  // Drops every thread's client. Call after the I/O threads stopped and before their
  // io_contexts are destroyed (the clients' idle sockets belong to them).
  void ReleaseClients();

 private:
  Upstream(std::string tier_name, upstream::Endpoint endpoint,
           std::chrono::milliseconds revalidate_after);

  std::string tier_name_;
  upstream::Endpoint endpoint_;
  std::chrono::milliseconds revalidate_after_;
  std::uint64_t generation_;  // tells this Upstream's clients from another's in the cache
  std::mutex clients_lock_;
  std::map<std::thread::id, std::unique_ptr<upstream::S3Client>> clients_;
};

}  // namespace strata::storage
