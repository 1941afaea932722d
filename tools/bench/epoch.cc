#include "tools/bench/epoch.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>

namespace strata::bench {
namespace {

namespace asio = boost::asio;
using SteadyClock = std::chrono::steady_clock;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// What one epoch's readers share; all on one thread.
struct EpochRun {
  Connections& loaders;  // connection i: reader i
  const EpochOptions& options;
  std::vector<std::uint64_t> order;  // this epoch's keys, shuffled
  EpochResult result;
  int running = 0;
  asio::steady_timer* all_done = nullptr;  // cancelled as each reader ends
};

void Count(EpochRun& run, const Connections::Answer& answer, const std::string& path) {
  if (answer.status >= 200 && answer.status < 300) {
    ++run.result.requests;
    run.result.bytes += answer.bytes;
    return;
  }
  ++run.result.errors;
  if (run.result.first_error.empty()) {
    run.result.first_error =
        "GET " + path + ": " +
        (answer.status != 0 ? "HTTP " + std::to_string(answer.status) : answer.error);
  }
}

// Loads one batch (GETs in sequence), then sets `loaded` and wakes the reader.
asio::awaitable<void> LoadBatch(EpochRun& run, int reader, std::vector<std::string> paths,
                                bool& loaded, asio::steady_timer& wake) {
  for (const auto& path : paths) {
    auto answer = co_await run.loaders.Get(reader, path, "", false);
    Count(run, answer, path);
  }
  loaded = true;
  wake.cancel();
}

// Reader `reader`: its share of the epoch's order in batches; batch k+1 loads while batch
// k computes.
asio::awaitable<void> Reader(EpochRun& run, int reader) {
  auto ex = co_await asio::this_coro::executor;
  const EpochOptions& o = run.options;
  std::vector<std::vector<std::string>> batches;
  for (std::size_t i = static_cast<std::size_t>(reader); i < run.order.size();
       i += static_cast<std::size_t>(o.readers)) {
    if (batches.empty() || batches.back().size() == static_cast<std::size_t>(o.batch)) {
      batches.emplace_back();
    }
    batches.back().push_back(o.keys.PathAt(run.order[i]));
  }
  asio::steady_timer wake(ex);
  asio::steady_timer compute(ex);
  bool loaded = false;
  if (!batches.empty()) {
    wake.expires_at(SteadyClock::time_point::max());
    asio::co_spawn(ex, LoadBatch(run, reader, batches[0], loaded, wake), asio::detached);
  }
  for (std::size_t k = 0; k < batches.size(); ++k) {
    while (!loaded) {  // the GPU waits for data
      co_await wake.async_wait(kTuple);
    }
    loaded = false;
    if (k + 1 < batches.size()) {
      wake.expires_at(SteadyClock::time_point::max());
      asio::co_spawn(ex, LoadBatch(run, reader, batches[k + 1], loaded, wake), asio::detached);
    }
    compute.expires_after(
        std::chrono::microseconds(static_cast<std::int64_t>(o.compute_ms * 1000)));
    co_await compute.async_wait(kTuple);
  }
  --run.running;
  run.all_done->cancel();
}

// The hot tier's read-through misses so far (admitted plus refused fills); -1 when the
// server does not report them.
asio::awaitable<std::int64_t> Misses(Connections& metrics) {
  auto answer = co_await metrics.Get(0, "/metrics", "", true);
  if (answer.status != 200) {
    co_return -1;
  }
  std::istringstream lines(answer.body);
  std::string line;
  std::int64_t total = -1;
  const std::string family = "strata_read_through_fills_total{";
  while (std::getline(lines, line)) {
    if (line.rfind(family, 0) == 0 && line.find("tier=\"hot\"") != std::string::npos) {
      total = std::max<std::int64_t>(total, 0) +
              static_cast<std::int64_t>(std::stod(line.substr(line.rfind(' ') + 1)));
    }
  }
  co_return total;
}

asio::awaitable<void> RunAll(Connections& loaders, Connections& metrics, const EpochOptions& o,
                             std::vector<EpochResult>& results) {
  auto ex = co_await asio::this_coro::executor;
  std::vector<std::uint64_t> keys(o.keys.Size());
  std::iota(keys.begin(), keys.end(), 0);
  for (int e = 0; e < o.epochs; ++e) {
    EpochRun run{loaders, o, keys, {}, o.readers, nullptr};
    std::mt19937_64 rng(o.seed * 1000 + static_cast<std::uint64_t>(e));
    std::shuffle(run.order.begin(), run.order.end(), rng);
    std::int64_t before = -1;
    if (o.count_misses) {
      before = co_await Misses(metrics);
    }
    asio::steady_timer all_done(ex);
    run.all_done = &all_done;
    const auto started = SteadyClock::now();
    for (int r = 0; r < o.readers; ++r) {
      asio::co_spawn(ex, Reader(run, r), asio::detached);
    }
    while (run.running > 0) {
      all_done.expires_at(SteadyClock::time_point::max());
      co_await all_done.async_wait(kTuple);
    }
    run.result.seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
    const double batches_per_reader =
        std::ceil(static_cast<double>(keys.size()) / o.readers / o.batch);
    run.result.utilisation =
        batches_per_reader * o.compute_ms / 1000.0 / std::max(run.result.seconds, 1e-9);
    if (o.count_misses && before >= 0) {
      const std::int64_t after = co_await Misses(metrics);
      run.result.misses = after >= 0 ? after - before : -1;
    }
    results.push_back(std::move(run.result));
  }
}

}  // namespace

std::vector<EpochResult> RunEpochs(const Endpoint& endpoint, const EpochOptions& options) {
  asio::io_context ioc(1);  // outlives the connections' sockets
  Connections loaders(endpoint, options.readers);
  Endpoint unsigned_endpoint = endpoint;
  unsigned_endpoint.sign = false;  // /metrics is answered to unsigned GETs only
  Connections metrics(unsigned_endpoint, 1);
  std::vector<EpochResult> results;
  asio::co_spawn(ioc, RunAll(loaders, metrics, options, results), asio::detached);
  ioc.run();
  return results;
}

}  // namespace strata::bench
