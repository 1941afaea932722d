// Running storage's awaitables to completion in a test: one io_context per test, run on
// the test's thread, as an I/O thread runs a connection's coroutines.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <utility>

namespace strata::storage::testing {

template <typename T>
T RunAwaitable(boost::asio::io_context& ioc, boost::asio::awaitable<T> awaitable) {
  std::optional<T> out;  // Result<T> has no default value, so co_spawn cannot carry it
  std::exception_ptr error;
  auto run = [&]() -> boost::asio::awaitable<void> { out.emplace(co_await std::move(awaitable)); };
  boost::asio::co_spawn(ioc, run, [&](std::exception_ptr e) { error = e; });
  ioc.restart();
  ioc.run();
  if (error) {
    std::rethrow_exception(error);
  }
  return std::move(*out);
}

}  // namespace strata::storage::testing
