#include "gateway/xml_budget.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gateway/xml.h"

namespace strata::gateway {
namespace {

// A CompleteMultipartUpload body of `parts` parts.
std::string CompleteBody(int parts) {
  std::string body = "<CompleteMultipartUpload>";
  for (int i = 1; i <= parts; ++i) {
    body += "<Part><PartNumber>" + std::to_string(i) +
            "</PartNumber><ETag>\"0123456789abcdef0123456789abcdef\"</ETag></Part>";
  }
  return body + "</CompleteMultipartUpload>";
}

class XmlBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { SetXmlBudget(8 << 20); }
  void TearDown() override {
    EXPECT_EQ(XmlBudgetUsed(), 0u);  // every lease gave back what it held
    SetXmlBudget(kDefaultXmlBudget);
  }
};

TEST_F(XmlBudgetTest, LeasesShareTheBudget) {
  XmlLease a(6 << 20);
  XmlLease b(6 << 20);
  ASSERT_TRUE(a.Take(5 << 20));
  EXPECT_EQ(XmlBudgetUsed(), 5u << 20);
  ASSERT_FALSE(b.Take(4 << 20));  // 9 MiB > 8 MiB: the budget, not b's cap
  EXPECT_EQ(b.Refusal().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(b.Refusal().retryable);
  ASSERT_TRUE(b.Take(3 << 20));
  ASSERT_FALSE(a.Take(2 << 20));  // 7 MiB > a's own 6 MiB cap
  EXPECT_EQ(a.Refusal().code, ErrorCode::kMalformedXml);
  a.Give(1 << 20);
  EXPECT_EQ(a.used(), 4u << 20);
  EXPECT_EQ(a.held(), 5u << 20);  // given back to the lease, not to the budget
  EXPECT_EQ(XmlBudgetUsed(), 8u << 20);
  ASSERT_TRUE(a.Take(1 << 20));  // from what it still holds
  EXPECT_EQ(XmlBudgetUsed(), 8u << 20);
}

TEST_F(XmlBudgetTest, ReservationsRefuseUpFront) {
  XmlLease a(16 << 20);
  ASSERT_TRUE(a.Reserve(6 << 20));
  EXPECT_EQ(a.used(), 0u);
  XmlLease b(16 << 20);
  ASSERT_FALSE(b.Reserve(6 << 20));
  EXPECT_EQ(b.Refusal().code, ErrorCode::kUnavailable);
  ASSERT_TRUE(a.Take(6 << 20));  // within its reservation: nothing more from the budget
  EXPECT_EQ(XmlBudgetUsed(), 6u << 20);
}

TEST_F(XmlBudgetTest, ParseCountsAgainstTheLease) {
  const std::string body = CompleteBody(10'000);
  XmlLease lease(64 << 20);
  auto parts = lease.Run([&] { return ParseCompleteMultipartUpload(body); });
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->size(), 10'000u);
  EXPECT_EQ(lease.used(), 0u);  // the document is gone, and its memory with it
}

TEST_F(XmlBudgetTest, ParsePastTheLeaseCapIsMalformed) {
  const std::string body = CompleteBody(10'000);  // ~800 KiB of text, ~4 MiB parsed
  XmlLease lease(2 << 20);
  auto parts = lease.Run([&] { return ParseCompleteMultipartUpload(body); });
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.error().code, ErrorCode::kMalformedXml);
}

TEST_F(XmlBudgetTest, ParsePastTheBudgetIsSlowDown) {
  const std::string body = CompleteBody(10'000);
  auto other = std::make_unique<XmlLease>(8 << 20);
  ASSERT_TRUE(other->Take(6 << 20));  // other bodies hold most of the budget
  XmlLease lease(64 << 20);
  auto parts = lease.Run([&] { return ParseCompleteMultipartUpload(body); });
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.error().code, ErrorCode::kUnavailable);
  other.reset();
  auto again = lease.Run([&] { return ParseCompleteMultipartUpload(body); });
  EXPECT_TRUE(again.ok());
}

// Many tiny elements cost pugixml far more than their text (a 64-byte node per element):
// the lease's cap bounds that whatever the body holds.
TEST_F(XmlBudgetTest, TinyElementsStayWithinTheCap) {
  std::string body = "<Delete>";
  while (body.size() < (2 << 20)) {
    body += "<a/>";
  }
  body += "</Delete>";
  XmlLease lease(4 << 20);
  auto parsed = lease.Run([&] { return ParseDeleteRequest(body); });
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformedXml);
}

// Outside any lease pugixml allocates as before (storage reads upstream answers so).
TEST_F(XmlBudgetTest, NoLeaseCountsNothing) {
  auto parts = ParseCompleteMultipartUpload(CompleteBody(10));
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(XmlBudgetUsed(), 0u);
}

}  // namespace
}  // namespace strata::gateway
