// Integrity counters of the storage engine, process-wide, for a /metrics endpoint.
// Any thread.
#pragma once

#include <cstdint>

namespace strata::storage {

// Chunks (or chunk trailers) of local data files whose stored CRC64NVME did not match
// their bytes when read, since the process started. Each one was refused to the reader
// (kCorruption) and logged with the data file's path.
std::uint64_t ChecksumMismatches();

}  // namespace strata::storage
