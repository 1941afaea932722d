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

asio::awaitable<void> FollowPrefix(asio::io_context& io, EtcdClient& client,
                                   const PrefixFollower& follower, std::int64_t from_revision,
                                   const bool& stopping, EtcdWatch*& open_watch,
                                   std::chrono::milliseconds retry) {
  asio::steady_timer timer(io);
  std::int64_t next = from_revision;
  const std::string end = PrefixEnd(follower.prefix);
  while (!stopping) {
    auto opened = co_await client.Watch(follower.prefix, end, next);
    if (stopping) {
      break;
    }
    if (opened.ok()) {
      std::unique_ptr<EtcdWatch> watch = std::move(opened).value();
      // Stop closes the stream through open_watch; a cancelled frame unwinds past here too.
      struct Published {
        EtcdWatch*& slot;
        ~Published() { slot = nullptr; }
      } published{open_watch};
      open_watch = watch.get();
      for (;;) {
        auto batch = co_await watch->Next();
        if (!batch.ok()) {
          opened = std::move(batch).error();
          break;
        }
        follower.apply(*batch);
        // Events come in revision order: go on after the last one seen.
        next = std::max(next, batch->events.back().kv.mod_revision + 1);
      }
      if (stopping) {
        break;
      }
    }
    spdlog::warn("lost the watch of {}: {}", follower.what, opened.error().message);
    if (opened.error().code == ErrorCode::kPreconditionFailed) {
      // Compacted past the last event seen: read everything again and go on from there.
      auto read = co_await follower.reread();
      if (read.ok()) {
        next = *read + 1;
      }
    }
    timer.expires_after(retry);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace strata::storage::cluster
