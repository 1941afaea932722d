#include "storage/cluster/prefix_follow.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

namespace strata::storage::cluster {

namespace asio = boost::asio;

Task<PrefixSnapshot> ReadPrefix(EtcdClient& client, std::string prefix, std::int64_t page) {
  PrefixSnapshot snapshot;
  std::string from = prefix;
  const std::string end = PrefixEnd(prefix);
  for (bool more = true; more;) {
    RangeRequest request;
    request.key = from;
    request.range_end = end;
    request.limit = page;
    request.revision = snapshot.revision;
    auto read = co_await client.Range(std::move(request));
    if (!read.ok()) {
      co_return std::move(read).error();
    }
    if (snapshot.revision == 0) {
      snapshot.revision = read->revision;
    }
    more = read->more && !read->kvs.empty();
    if (more) {
      from = read->kvs.back().key + '\0';
    }
    std::move(read->kvs.begin(), read->kvs.end(), std::back_inserter(snapshot.kvs));
  }
  co_return snapshot;
}

namespace {
constexpr std::chrono::milliseconds kWatchRetry{500};
}  // namespace

PrefixWatch::PrefixWatch(asio::io_context& io, EtcdClient& client, std::string prefix,
                         std::string what, RevisionGate& gate, PrefixEvents events)
    : io_(io),
      client_(client),
      prefix_(std::move(prefix)),
      what_(std::move(what)),
      gate_(gate),
      events_(std::move(events)) {}

PrefixWatch::~PrefixWatch() {
  tasks_.Close();
  tasks_.Cancel();
}

void PrefixWatch::Start(std::int64_t from_revision) {
  tasks_.Spawn(io_.get_executor(), Loop(from_revision));
}

asio::awaitable<void> PrefixWatch::Stop() {
  stopping_ = true;
  tasks_.Close();
  tasks_.Cancel();
  if (watch_ != nullptr) {
    watch_->Close();
  }
  co_await tasks_.Wait();
}

void PrefixWatch::Apply(const WatchBatch& batch) {
  for (const WatchEvent& event : batch.events) {
    const KeyValue& kv = event.kv;
    if (kv.key.compare(0, prefix_.size(), prefix_) != 0) {
      continue;
    }
    if (event.type == WatchEvent::Type::kDelete) {
      events_.remove(kv.key.substr(prefix_.size()), kv.mod_revision);
    } else {
      events_.put(kv);
    }
  }
  gate_.Passed(batch.events.back().kv.mod_revision);
}

asio::awaitable<void> PrefixWatch::Loop(std::int64_t from_revision) {
  asio::steady_timer timer(io_);
  std::int64_t next = from_revision;
  const std::string end = PrefixEnd(prefix_);
  while (!stopping_) {
    auto opened = co_await client_.Watch(prefix_, end, next);
    if (stopping_) {
      break;
    }
    if (opened.ok()) {
      std::unique_ptr<EtcdWatch> watch = std::move(opened).value();
      // Stop closes the stream through watch_; a cancelled frame unwinds past here too.
      struct Published {
        EtcdWatch*& slot;
        ~Published() { slot = nullptr; }
      } published{watch_};
      watch_ = watch.get();
      for (;;) {
        auto batch = co_await watch->Next();
        if (!batch.ok()) {
          opened = std::move(batch).error();
          break;
        }
        Apply(*batch);
        // Events come in revision order: go on after the last one seen.
        next = std::max(next, batch->events.back().kv.mod_revision + 1);
      }
      if (stopping_) {
        break;
      }
    }
    spdlog::warn("lost the watch of {}: {}", what_, opened.error().message);
    if (opened.error().code == ErrorCode::kPreconditionFailed) {
      // Compacted past the last event seen: read everything again and go on from there.
      auto read = co_await events_.reread();
      if (read.ok()) {
        next = *read + 1;
      }
    }
    timer.expires_after(kWatchRetry);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace strata::storage::cluster
