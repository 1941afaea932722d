#include "storage/upstream/copy_flights.h"

#include <gtest/gtest.h>

namespace strata::storage {
namespace {

TEST(CopyFlightsTest, TheFirstLeadsAndTheRestFollowUntilItIsDone) {
  CopyFlights flights;
  const BucketName bucket("b");
  auto lead = flights.Join(bucket, ObjectKey("k"));
  ASSERT_TRUE(lead->leader());
  auto follower = flights.Join(bucket, ObjectKey("k"));
  EXPECT_FALSE(follower->leader());
  EXPECT_FALSE(follower->done());
  lead.reset();
  EXPECT_TRUE(follower->done());
  // The key is free again: the next one leads a new flight.
  auto next = flights.Join(bucket, ObjectKey("k"));
  EXPECT_TRUE(next->leader());
}

TEST(CopyFlightsTest, KeysAndBucketsAreSeparateFlights) {
  CopyFlights flights;
  auto a = flights.Join(BucketName("b"), ObjectKey("k"));
  EXPECT_TRUE(flights.Join(BucketName("b"), ObjectKey("other"))->leader());
  EXPECT_TRUE(flights.Join(BucketName("c"), ObjectKey("k"))->leader());
  // "b" + "k/x" and "b/k" + "x" must not meet on one id.
  auto joined = flights.Join(BucketName("bk"), ObjectKey("x"));
  EXPECT_TRUE(flights.Join(BucketName("b"), ObjectKey("kx"))->leader());
  EXPECT_TRUE(a->leader());
}

TEST(CopyFlightsTest, AFollowerOutlivingTheFlightDoesNotEndTheNext) {
  CopyFlights flights;
  auto lead = flights.Join(BucketName("b"), ObjectKey("k"));
  auto follower = flights.Join(BucketName("b"), ObjectKey("k"));
  lead.reset();
  auto next = flights.Join(BucketName("b"), ObjectKey("k"));
  ASSERT_TRUE(next->leader());
  follower.reset();  // a follower's seat going does not end the new lead's flight
  auto waiting = flights.Join(BucketName("b"), ObjectKey("k"));
  EXPECT_FALSE(waiting->leader());
  EXPECT_FALSE(waiting->done());
}

}  // namespace
}  // namespace strata::storage
