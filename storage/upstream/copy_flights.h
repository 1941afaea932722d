// CopyFlights: the upstream objects being brought onto the hot tier right now, by bucket
// and key, across every core and the fetcher's thread: a read-through GET's fill, a
// restore or a prefetch. The first to take a key's seat leads (fetches it); whoever comes
// while it leads follows: a GET waits until the lead is done and then reads the index
// again (a hit, most often); a fetch does nothing. So one object is fetched once, however
// many GETs and prefetches want it at the same time.
//
// Thread-safe; one lock over a map of the keys in flight (a handful: one per fill).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/ids.h"

namespace strata::storage {

class CopyFlights {
 public:
  class Seat;
  // A seat in the flight of bucket/key: the lead when nobody else holds one now.
  std::shared_ptr<Seat> Join(const BucketName& bucket, const ObjectKey& key);

 private:
  struct Flight {
    std::atomic<bool> done{false};
  };
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;
};

class CopyFlights::Seat {
 public:
  ~Seat();  // the lead's ends the flight: its followers see done()
  Seat(const Seat&) = delete;
  Seat& operator=(const Seat&) = delete;

  bool leader() const { return leader_; }
  // The lead has given up its seat (the copy landed, or the attempt failed).
  bool done() const { return flight_->done; }

 private:
  friend class CopyFlights;
  Seat(CopyFlights& flights, std::string id, bool leader, std::shared_ptr<Flight> flight)
      : flights_(flights), id_(std::move(id)), leader_(leader), flight_(std::move(flight)) {}
  CopyFlights& flights_;
  std::string id_;
  bool leader_;
  std::shared_ptr<Flight> flight_;
};

}  // namespace strata::storage
