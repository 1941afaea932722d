// How many client connections strata keeps open at once (server.max_connections), and
// what a new one gets past that. Every connection is a file descriptor; so are the data
// files local tiers keep open, the index's files, the upstream's connections and the
// io_uring rings. Past the descriptor limit accept() fails (EMFILE) and clients wait in
// the kernel's backlog with no answer; a cap below it keeps descriptors for the rest and
// answers the clients beyond it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::gateway {

// The default cap for a soft RLIMIT_NOFILE of `nofile`: half of it, less 64, at least 16.
// The other half covers the open data files (an eighth of the limit per local tier, at most
// 4096 each: storage/local/local_tier.cc) and the index; the 64 the listeners, rings,
// upstream connections and the log. `nofile` 0 stands for no limit (RLIM_INFINITY).
std::size_t DefaultMaxConnections(std::uint64_t nofile);

// The soft RLIMIT_NOFILE of this process (0: unlimited).
std::uint64_t OpenFileLimit();

// What a connection refused at accept is sent before it is closed: 503 SlowDown, which
// SDKs retry with backoff, with Connection: close.
std::string_view RefusalResponse();

}  // namespace strata::gateway
