// GuardExceptions: the module edge where throwing third-party code (RocksDB, the standard
// library's allocations and locks) meets strata's Result-returning code.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata {

// Calls f() (which returns a Result) and turns any exception into an Error naming `what`:
// kUnavailable (retryable) for out-of-memory, kInternal for anything else.
template <typename F>
auto GuardExceptions(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::kUnavailable, std::string(what) + ": out of memory", true);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string(what) + ": " + e.what());
  } catch (...) {
    return Error(ErrorCode::kInternal, std::string(what) + ": unknown exception");
  }
}

}  // namespace strata
