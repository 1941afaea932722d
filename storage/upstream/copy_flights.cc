#include "storage/upstream/copy_flights.h"

namespace strata::storage {

std::shared_ptr<CopyFlights::Seat> CopyFlights::Join(const BucketName& bucket,
                                                     const ObjectKey& key) {
  std::string id = bucket.str() + '\0' + key.str();
  std::lock_guard lock(mu_);
  auto& slot = flights_[id];
  const bool leader = slot == nullptr;
  if (leader) {
    slot = std::make_shared<Flight>();
  }
  return std::shared_ptr<Seat>(new Seat(*this, std::move(id), leader, slot));
}

CopyFlights::Seat::~Seat() {
  if (!leader_) {
    return;
  }
  flight_->done = true;
  std::lock_guard lock(flights_.mu_);
  flights_.flights_.erase(id_);
}

}  // namespace strata::storage
