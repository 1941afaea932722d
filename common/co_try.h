// Early return of a failed Result from a coroutine (a handler, or any function returning
// asio::awaitable<Result<U>>), as STRATA_RETURN_IF_ERROR (common/error.h) does for plain
// functions and abseil's RETURN_IF_ERROR / ASSIGN_OR_RETURN do for Status:
//
//   STRATA_CO_RETURN_IF_ERROR(CheckKeyLength(ctx));
//   STRATA_CO_TRY(auto body, co_await ReadXmlBody(ctx, kLimit));  // body: the value
//
// The expression is evaluated once; on failure its Error is co_returned, else the value
// is moved into the declared variable. STRATA_CO_TRY declares a hidden Result in the
// enclosing scope, so it is a statement of its own (not the body of an unbraced if).
#pragma once

#include <utility>

#define STRATA_CO_RETURN_IF_ERROR(...)                \
  do {                                                \
    auto strata_co_status_ = (__VA_ARGS__);           \
    if (!strata_co_status_.ok()) {                    \
      co_return std::move(strata_co_status_).error(); \
    }                                                 \
  } while (0)

#define STRATA_CO_TRY_CAT_INNER_(a, b) a##b
#define STRATA_CO_TRY_CAT_(a, b) STRATA_CO_TRY_CAT_INNER_(a, b)
#define STRATA_CO_TRY_IMPL_(result, lhs, ...) \
  auto result = (__VA_ARGS__);                \
  if (!result.ok()) {                         \
    co_return std::move(result).error();      \
  }                                           \
  lhs = std::move(result).value()
#define STRATA_CO_TRY(lhs, ...) \
  STRATA_CO_TRY_IMPL_(STRATA_CO_TRY_CAT_(strata_co_try_, __LINE__), lhs, __VA_ARGS__)
