#include "storage/integrity.h"

#include <atomic>

#include "storage/checksum.h"

namespace strata::storage {
namespace {

std::atomic<std::uint64_t> repairs{0};
std::atomic<std::uint64_t> unrepairable{0};
std::atomic<std::uint64_t> repair_failures{0};

}  // namespace

std::uint64_t IntegrityRepairs() { return repairs.load(std::memory_order_relaxed); }
std::uint64_t IntegrityUnrepairable() { return unrepairable.load(std::memory_order_relaxed); }
std::uint64_t IntegrityRepairFailures() { return repair_failures.load(std::memory_order_relaxed); }
std::string RecordedCrc64(const metadata::ObjectRecord& record) {
  for (const auto& [name, value] : record.checksums) {
    if (name == ChecksumName(ChecksumAlgorithm::kCrc64Nvme)) {
      return value;
    }
  }
  return "";
}

void CountRepair() { repairs.fetch_add(1, std::memory_order_relaxed); }
void CountUnrepairable() { unrepairable.fetch_add(1, std::memory_order_relaxed); }
void CountRepairFailure() { repair_failures.fetch_add(1, std::memory_order_relaxed); }

}  // namespace strata::storage
