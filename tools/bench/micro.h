// strata-bench's micro benchmarks: the per-byte and per-request costs of the CPU-bound
// pieces of the data path, measured in-process on one thread (so "per second" is per core).
#pragma once

#include <cstdint>

namespace strata::bench {

struct CrcResult {
  double crc_gbps = 0;       // Crc64Nvme (the dispatching entry point the server calls)
  double portable_gbps = 0;  // the slicing-by-8 fallback, for reference
  double memcpy_gbps = 0;    // memcpy of the same buffer into another: the memory ceiling
  bool clmul = false;        // whether the CPU offered PCLMULQDQ
  std::uint64_t buffer_bytes = 0;
};

// Checksums (and copies) a buffer of `mib` MiB `rounds` times and keeps the best round.
CrcResult RunCrc(std::uint64_t mib, int rounds);

struct SigV4Result {
  double header_per_s = 0;   // Verifier::Verify of a header-signed GET (like boto3's)
  double presign_per_s = 0;  // Verifier::Verify of a presigned GET URL
  double sign_per_s = 0;     // SignV4 of the same GET (the client's cost)
};

// Runs each for about `seconds` seconds.
SigV4Result RunSigV4(double seconds);

struct PolicyResult {
  int statements = 0;
  double evaluations_per_s = 0;  // BucketPolicy::Evaluate of a GET every statement is read for
  double parses_per_s = 0;       // BucketPolicy::Parse of the same policy (PutBucketPolicy)
  bool allowed = false;          // the evaluation's answer was the expected Allow
};

// A policy of `statements` statements (actions, wildcard resources, address and prefix
// conditions; the one that allows is the last), evaluated for about `seconds` seconds.
PolicyResult RunPolicy(double seconds, int statements);

}  // namespace strata::bench
