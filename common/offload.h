// Offload: runs a blocking call (fsync, a synced index write) on the blocking pool and
// resumes the awaiting coroutine on its own executor, so I/O threads never block on disk.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <type_traits>

namespace strata {

template <typename F>
boost::asio::awaitable<std::invoke_result_t<F&>> Offload(boost::asio::thread_pool& pool, F fn) {
  namespace asio = boost::asio;
  using R = std::invoke_result_t<F&>;
  std::optional<R> out;
  // fn and out live in this suspended frame until the handler resumes it.
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&pool, &fn, &out](auto handler) {
        asio::post(pool, [&fn, &out, handler = std::move(handler)]() mutable {
          out.emplace(fn());
          auto ex = asio::get_associated_executor(handler);
          asio::post(ex, std::move(handler));
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

}  // namespace strata
