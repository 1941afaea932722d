// RunOn: runs an awaitable on another executor (another thread's io_context) and resumes
// the awaiting coroutine on its own, so a coroutine can take one step on the thread that
// owns a socket or a state and come back. The awaiting coroutine's frame stays until the
// step completed, so the step may use what that frame holds.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <utility>

namespace strata {

namespace run_on_detail {
// co_spawn's answer must be default-constructible, which a Result<T> is not.
template <typename T>
boost::asio::awaitable<std::optional<T>> Optional(boost::asio::awaitable<T> task) {
  co_return co_await std::move(task);
}
}  // namespace run_on_detail

template <typename T>
boost::asio::awaitable<T> RunOn(const boost::asio::any_io_executor& executor,
                                boost::asio::awaitable<T> task) {
  auto done = co_await boost::asio::co_spawn(executor, run_on_detail::Optional(std::move(task)),
                                             boost::asio::use_awaitable);
  co_return std::move(*done);
}

}  // namespace strata
