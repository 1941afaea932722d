#include "storage/tier.h"

#include <vector>

#include "storage/crc64nvme.h"

namespace strata::storage {

TierTask<TierObject> Tier::PutFrom(std::string location, std::shared_ptr<TierReader> source,
                                   std::vector<std::pair<std::string, std::string>> headers,
                                   std::optional<std::uint64_t> crc64nvme) {
  static constexpr std::size_t kBlock = 256 << 10;
  const std::uint64_t size = source->size();
  TierWriteOptions options{.location = location, .size = size, .headers = std::move(headers)};
  auto begun = co_await BeginWrite(std::move(options));
  if (!begun.ok()) {
    co_return std::move(begun).error();
  }
  std::unique_ptr<TierWrite> write = std::move(begun).value();
  std::vector<char> block(static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, size)));
  std::uint64_t crc = 0;
  for (std::uint64_t offset = 0; offset < size;) {
    auto n = co_await source->ReadAsync(offset, std::span<char>(block.data(), block.size()));
    if (!n.ok()) {
      co_return std::move(n).error();  // the write is dropped uncommitted: nothing stored
    }
    if (*n == 0) {
      co_return Error(ErrorCode::kIncompleteBody, "the source of " + location + " ended at " +
                                                      std::to_string(offset) + " of " +
                                                      std::to_string(size) + " bytes");
    }
    const std::string_view data(block.data(), *n);
    crc = Crc64Nvme(crc, data);
    auto appended = co_await write->Append(data);
    if (!appended.ok()) {
      co_return std::move(appended).error();
    }
    offset += *n;
  }
  if (crc64nvme && *crc64nvme != crc) {
    co_return Error(ErrorCode::kCorruption,
                    "the bytes read for " + location + " do not match their CRC64NVME");
  }
  co_return co_await write->Commit();
}

}  // namespace strata::storage
