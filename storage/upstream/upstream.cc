#include "storage/upstream/upstream.h"

#include <atomic>
#include <utility>

namespace strata::storage {
namespace {

std::atomic<std::uint64_t> next_generation{1};

// The calling thread's client of the Upstream with `generation`, found without a lock.
struct CachedClient {
  std::uint64_t generation = 0;
  upstream::S3Client* client = nullptr;
};
thread_local CachedClient cached_client;

}  // namespace

Upstream::Upstream(std::string tier_name, upstream::Endpoint endpoint,
                   std::chrono::milliseconds revalidate_after)
    : tier_name_(std::move(tier_name)),
      endpoint_(std::move(endpoint)),
      revalidate_after_(revalidate_after),
      generation_(next_generation.fetch_add(1)) {}

Result<std::unique_ptr<Upstream>> Upstream::Create(const TierConfig& tier) {
  auto endpoint = upstream::Endpoint::Parse(tier.endpoint);
  if (!endpoint.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "tier " + tier.name + ": endpoint: " + endpoint.error().message);
  }
  endpoint->region = tier.region;
  endpoint->ca_file = tier.ca_file;
  endpoint->credential = auth::Credential{tier.access_key, tier.secret_key, false};
  return std::unique_ptr<Upstream>(
      new Upstream(tier.name, std::move(endpoint).value(), tier.revalidate_after));
}

upstream::S3Client& Upstream::Client(const boost::asio::any_io_executor& executor) {
  if (cached_client.generation == generation_) {
    return *cached_client.client;
  }
  std::lock_guard lock(clients_lock_);
  auto& slot = clients_[std::this_thread::get_id()];
  if (!slot) {
    slot = NewClient(executor);
  }
  cached_client = {generation_, slot.get()};
  return *slot;
}

std::unique_ptr<upstream::S3Client> Upstream::NewClient(
    const boost::asio::any_io_executor& executor) const {
  return std::make_unique<upstream::S3Client>(executor, endpoint_);
}

void Upstream::ReleaseClients() {
  std::lock_guard lock(clients_lock_);
  clients_.clear();
  generation_ = next_generation.fetch_add(1);  // every thread's cached pointer is stale now
}

void Upstream::ReleaseClient() {
  std::unique_ptr<upstream::S3Client> client;
  {
    std::lock_guard lock(clients_lock_);
    auto it = clients_.find(std::this_thread::get_id());
    if (it == clients_.end()) {
      return;
    }
    client = std::move(it->second);
    clients_.erase(it);
  }
  cached_client = {};  // a thread id may be reused: the next Client call makes a new one
}

}  // namespace strata::storage
